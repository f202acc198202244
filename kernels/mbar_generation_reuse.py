# Bug: mbarrier_arrive_before_consumption.  One warp uses `bar` (count 1) for two
# generations, but with CONSUME = 0 it skips the wait between them: its second
# arrive starts generation 1 while generation 0 was never observed by any wait.
# Mirrors the reference tool's native_synccheck_generation_reuse(consume=0)
# ("before generation 0 was consumed").  The fix is
# mbar_generation_reuse_fixed.py (consume=1).
from tvm_tirx.script import tirx as T

CONSUME = 0


@T.function
def mbar_generation_reuse(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                if CONSUME == 1:
                    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                if tx == 0:
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)
                out[tx] = tx
