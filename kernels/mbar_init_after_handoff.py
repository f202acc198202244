# Bug: mbarrier_init_not_happens_before_use through a non-blocking handoff.
# Warp 0 signals named barrier 1 with bar.arrive and only then initializes
# `ready`; warp 1 waits on named barrier 1 (bar.sync) and arrives on `ready`.
# The handoff orders what warp 0 did *before* its bar.arrive, not the init after
# it, so warp 1's arrive can reach `ready` before the init.  Mirrors the
# reference tool's ..._nonblocking_arrive_exposes_uninitialized_successor.  The
# fix, mbar_init_after_handoff_fixed.py, initializes before the bar.arrive.
from tvm_tirx.script import tirx as T


@T.function
def mbar_init_after_handoff(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    T.ptx.bar.arrive(1, 64)
                    if lane == 0:
                        T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[0] + lane
                else:
                    T.ptx.bar.sync(1, 64)
                    if lane == 0:
                        slot[0] = 42
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
