# Two generations of one mbarrier fed by bulk copies, a mirror of the reference
# tool's native_synccheck_tma_two_generations (clean).  Thread 0 initializes
# `full` (count 1); for each of two tiles it posts arrive.expect_tx with the
# tile's 16 bytes and issues a cp.async.bulk completing on `full`; the warp waits
# the generation by parity g and copies the tile out.  The copies bind to
# generations 0 and 1.
from tvm_tirx.script import tirx as T

TILES = 2
TILE = 4
NBYTES = TILE * 4


@T.function
def bulk_two_generations(src: T.Tensor((TILES * TILE,), T.float32), out: T.Tensor((TILES * TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILES, TILE), T.float32, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.warp_sync()
                for g in range(TILES):
                    if tx == 0:
                        T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([g, 0]), src.ptr_to([g * TILE]), T.uint32(NBYTES), full.ptr_to([0]))
                    T.cuda.mbarrier_wait(full.ptr_to([0]), g % 2)
                    if tx < TILE:
                        out[g * TILE + tx] = buf[g, tx]
