# The fixed twin of cluster_init_not_visible.py: after the fenced init every thread of the cluster passes a
# cluster barrier (a relaxed arrive carries what fence.mbarrier_init published), and only then does the peer
# arrive on the barrier.
from tvm_tirx.script import tirx as T


@T.function
def cluster_init_not_visible_fixed(out: T.Tensor((2,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("clusterCtaIdx.x", 2) as cx:
                with T.launch_thread("threadIdx.x", 32) as tx:
                    ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    remote = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                    if cx == 0:
                        if tx == 0:
                            T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                            T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.barrier.cluster.arrive.relaxed.aligned()
                    T.ptx.barrier.cluster.wait.aligned()
                    if cx == 1:
                        if tx == 0:
                            T.ptx.mapa.shared__cluster.u32(remote[0], T.Cast("uint32", T.cuda.cvta_generic_to_shared(ready.ptr_to([0]))), T.uint32(0))
                            T.ptx.mbarrier.arrive.release.cluster.shared__cluster.b64(remote[0], T.uint32(1))
                    if cx == 0:
                        T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                        if tx == 0:
                            out[bx] = 1
                    T.cuda.cluster_sync()
