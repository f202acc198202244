# The fixed twin of split_expect_tx.py: the loader warp 0 posts the phase's one
# arrival together with the tile's bytes (mbarrier.arrive.expect_tx) before it
# issues the bulk copy, so the phase can only complete once the copy has
# landed, whatever the schedule.  Warp 1 no longer touches `full`.
from tvm_tirx.script import tirx as T

TILE = 16
NBYTES = TILE * 4


@T.function
def split_expect_tx_fixed(src: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                elif warp == 2:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    if lane < TILE:
                        out[lane] = buf[lane]
