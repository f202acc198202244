# Bug: fixed_sync_protocol_error — the transaction count and the arrival of one
# phase come from different warps with nothing ordering them.  `full` expects one
# arrival.  The loader warp 0 announces the tile's bytes (mbarrier.expect_tx)
# and issues the bulk copy; the scheduler warp 1 posts the phase's one arrival
# (a plain mbarrier.arrive); the consumer warp 2 waits phase 0.  The simulated
# run happens to register the expect_tx first, so the phase waits for the copy.
# In the schedule where warp 1 arrives first, the phase completes at once with
# zero transactions expected: the consumer reads a tile that has not landed, and
# the loader's expect_tx then lands on the next phase.  Phase A sees one
# generation with exact totals; only phase B (every schedule) finds it.  The
# fix, split_expect_tx_fixed.py, lets the loader post the arrival together with
# the bytes (arrive.expect_tx) and the scheduler warp only request the tile.
from tvm_tirx.script import tirx as T

TILE = 16
NBYTES = TILE * 4


@T.function
def split_expect_tx(src: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
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
                        T.ptx.mbarrier.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                elif warp == 1:
                    if lane == 0:
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    if lane < TILE:
                        out[lane] = buf[lane]
