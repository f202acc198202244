# The fixed twin of mbar_init_after_handoff.py: warp 0 initializes `ready` and
# fences the init before its bar.arrive, so warp 1's bar.sync on named barrier 1
# orders the init before warp 1's arrive.
from tvm_tirx.script import tirx as T


@T.function
def mbar_init_after_handoff_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    if lane == 0:
                        T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.bar.arrive(1, 64)
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[0] + lane
                else:
                    T.ptx.bar.sync(1, 64)
                    if lane == 0:
                        slot[0] = 42
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
