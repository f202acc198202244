# The fixed twin of tma_multicast_tx.py: a multicast load delivers one box, and its bytes, to each CTA of
# the mask, so every CTA (the issuer too) announces NBYTES on its own barrier.
from tvm_tirx.script import tirx as T

GX = 32
GY = 16
BOX_X = 32
BOX_Y = 8
NBYTES = BOX_X * BOX_Y * 4
ISSUER_TX = NBYTES


@T.function
def tma_multicast_tx_fixed(src: T.Tensor((GY, GX), T.float32), out: T.Tensor((2, BOX_Y, BOX_X), T.float32)):
    tmap: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap, "float32", 2, src.data, GX, GY, GX * 4, BOX_X, BOX_Y, 1, 1, 0, 0, 0, 0)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("clusterCtaIdx.x", 2) as cx:
                with T.launch_thread("threadIdx.x", 32) as tx:
                    full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    tile = T.alloc_tensor(ty_args=[T.Tensor((BOX_Y, BOX_X), T.float32, scope="shared", align=128)])
                    if tx == 0:
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    T.cuda.cluster_sync()
                    if tx == 0:
                        if cx == 0:
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(ISSUER_TX))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"](tile.ptr_to([0, 0]), tmap, 0, 0, full.ptr_to([0]), T.uint16(3))
                        else:
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    for r in range(BOX_Y):
                        out[cx, r, tx] = tile[r, tx]
                    T.cuda.cluster_sync()
