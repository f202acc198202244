# Bug: mbarrier_init_not_happens_before_use.  Warp 0 initializes `ready` and
# warp 1 arrives on it, with no synchronization in between: on hardware warp 1
# may arrive before the init (or before it is visible).  The simulated run
# happens to execute the init first, which proves nothing — only a
# synchronization edge orders the two.  Mirrors the reference tool's
# native_synccheck_schedule_sensitive_tma.  The fix,
# mbar_init_race_fixed.py, puts a CTA barrier between init and first use.
from tvm_tirx.script import tirx as T


@T.function
def mbar_init_race(out: T.Tensor((32,), T.int32)):
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
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[0] + lane
                else:
                    if lane == 0:
                        slot[0] = 42
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
