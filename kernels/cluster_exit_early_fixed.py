# The fixed twin of cluster_exit_early.py: the final cluster barrier keeps every CTA (and its shared
# memory) alive until its peer has read it: no CTA exits before every CTA of the cluster has arrived
# after its last remote read.
from tvm_tirx.script import tirx as T

CLUSTERS = 2


@T.function
def cluster_exit_early_fixed(out: T.Tensor((CLUSTERS * 2, 32), T.int32)):
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
                    T.cuda.cluster_sync()
