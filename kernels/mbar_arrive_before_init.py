# Bug: mbarrier_use_before_init (arrive).  Thread 0 arrives on `bar` one line
# before it initializes it, so the arrive lands on a barrier that does not exist
# yet.  Mirrors the reference tool's native_synccheck_use_before_init.  The fix,
# mbar_arrive_before_init_fixed.py, is the reference's one-warp clean case:
# init, fence.mbarrier_init, arrive, wait.
from tvm_tirx.script import tirx as T


@T.function
def mbar_arrive_before_init(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                out[tx] = tx
