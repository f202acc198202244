# A peer CTA arrives on a barrier before its init is visible to the cluster.
#
# CTA rank 0 initializes `ready` (one expected arrival) and waits on it; CTA rank 1 maps it with `mapa` and
# arrives on it remotely (`mbarrier.arrive.release.cluster.shared::cluster`).  The init is fenced
# (`fence.mbarrier_init.release.cluster`), but no cluster barrier orders it before the peer's arrive: in
# another schedule the arrive reaches a barrier that is not initialized.  The fix
# (cluster_init_not_visible_fixed.py) adds barrier.cluster.arrive.relaxed + barrier.cluster.wait after the
# fence, the idiom CUTLASS uses.
from tvm_tirx.script import tirx as T


@T.function
def cluster_init_not_visible(out: T.Tensor((2,), T.int32)):
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
                    else:
                        if tx == 0:
                            T.ptx.mapa.shared__cluster.u32(remote[0], T.Cast("uint32", T.cuda.cvta_generic_to_shared(ready.ptr_to([0]))), T.uint32(0))
                            T.ptx.mbarrier.arrive.release.cluster.shared__cluster.b64(remote[0], T.uint32(1))
                    if cx == 0:
                        T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                        if tx == 0:
                            out[bx] = 1
                    T.cuda.cluster_sync()
