# The fixed twin of mbar_expect_tx_before_init.py: thread 0 initializes `full`
# (count 1) and fences the init before it announces the copy's bytes with
# mbarrier.expect_tx, arrives and issues the bulk copy; the warp waits phase 0.
from tvm_tirx.script import tirx as T

TILE = 16
NBYTES = TILE * 4


@T.function
def mbar_expect_tx_before_init_fixed(src: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.mbarrier.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                    T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                if tx < TILE:
                    out[tx] = buf[tx]
