# One warp hands data to itself across a divergent branch through an mbarrier: lanes
# 0-15 wait on `ready` while lane 16, on the other side of the branch, fills the row and
# arrives (count 1).  With independent thread scheduling the waiting side does not stop
# the arriving one; the waiters acquire the row through the completed phase.
from tvm_tirx.script import tirx as T


@T.function
def divergent_mbarrier_handoff(x: T.Tensor((16,), T.int32), out: T.Tensor((16,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                row = T.alloc_tensor(ty_args=[T.Tensor((16,), T.int32, scope="shared")])
                lane: T.let[T.int32] = tx % 32
                if lane == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if lane < 16:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = row[lane] + 1
                elif lane == 16:
                    for i in range(16):
                        row[i] = x[i] * 2
                    T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
