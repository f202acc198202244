# A bulk copy's completion lands before the expect_tx of its phase, a mirror of
# the reference tool's native_synccheck_tma_completion_before_expect (clean).
# Thread 0 arrives on `full` (count 1), completing generation 0, and then issues
# a bulk copy on `full` — bound to generation 1 — before announcing its bytes.
# The copy lands while the thread sleeps (the transaction count of generation 1
# goes transiently negative, which is allowed), then the warp consumes generation
# 0, and thread 0 posts arrive.expect_tx for generation 1, which completes it.
# (With EXPECT below NBYTES the early completion over-delivers: the error shows
# at the arrive that completes the arrivals.)
from tvm_tirx.script import tirx as T

TILE = 4
NBYTES = TILE * 4
EXPECT = NBYTES


@T.function
def bulk_completion_before_expect(src: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                    T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                T.cuda.nano_sleep(1000)
                T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                if tx == 0:
                    T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(EXPECT))
                T.cuda.mbarrier_wait(full.ptr_to([0]), 1)
                if tx < TILE:
                    out[tx] = buf[tx]
