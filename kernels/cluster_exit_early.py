# A two-CTA cluster exchanges a tile through distributed shared memory, without the final cluster barrier.
#
# Each CTA writes its row into its own shared `tile`, the cluster barrier publishes it, and each CTA reads
# its peer's row through `mapa` + `ld.shared::cluster`.  Nothing makes a CTA wait until its peer has read:
# a CTA that finishes first exits, and its shared memory goes while the peer may still be reading it.
# The fix (cluster_exit_early_fixed.py) ends with T.cuda.cluster_sync().
from tvm_tirx.script import tirx as T

CLUSTERS = 2


@T.function
def cluster_exit_early(out: T.Tensor((CLUSTERS * 2, 32), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CLUSTERS * 2) as bx:
            with T.launch_thread("clusterCtaIdx.x", 2) as cx:
                with T.launch_thread("threadIdx.x", 32) as tx:
                    tile = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                    peer = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                    val = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="local")])
                    tile[tx] = bx * 100 + tx
                    T.cuda.cluster_sync()
                    T.ptx.mapa.shared__cluster.u32(peer[0], T.Cast("uint32", T.cuda.cvta_generic_to_shared(tile.ptr_to([tx]))), T.uint32(1 - cx))
                    T.ptx.ld.shared__cluster.s32(val[0], peer[0])
                    out[bx, tx] = val[0]
