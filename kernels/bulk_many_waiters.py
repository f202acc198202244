# Many waiters on one bulk-copy completion, a mirror of the reference tool's
# tma_completion_many_waiters (16 warps; clean, with few verifier states).  Thread
# 0 initializes `full` (count 1); after a CTA barrier, warp 0's lane 0 posts
# arrive.expect_tx and issues one cp.async.bulk of the whole tile; all 16 warps
# wait for phase 0 and each copies its 32 elements out.
from tvm_tirx.script import tirx as T

WARPS = 16
N = WARPS * 32
NBYTES = N * 4


@T.function
def bulk_many_waiters(src: T.Tensor((N,), T.float32), out: T.Tensor((N,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", N) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((N,), T.float32, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                out[tx] = buf[N - 1 - tx]
