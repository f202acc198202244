# Bug: mbarrier_reinit_without_inval.  A two-round kernel re-initializes `bar`
# at the start of every round to reset it, but never invalidates it first: the
# second mbarrier.init runs on a live barrier.  The fix, mbar_reinit_fixed.py,
# invalidates the barrier (mbarrier.inval) after the round's wait.
from tvm_tirx.script import tirx as T

ROUNDS = 2


@T.function
def mbar_reinit(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                for r in range(ROUNDS):
                    if tx == 0:
                        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                    if tx == 0:
                        out[r] = r
