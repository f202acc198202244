# Bug: mbarrier_use_before_init (wait).  Warp 1 owns `ready`: its thread 32
# initializes it before the CTA barrier and later publishes a value.  The consumer
# warp 0 waits on `ready` above that CTA barrier, so its wait runs on a barrier
# nobody has initialized yet.  Mirrors the reference tool's
# native_synccheck_wait_before_init.  The fix, mbar_wait_before_init_fixed.py,
# waits after the cta_sync.
from tvm_tirx.script import tirx as T


@T.function
def mbar_wait_before_init(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                if tx == 32:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 1:
                    if lane == 0:
                        slot[0] = 42
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
                else:
                    out[lane] = slot[0] + lane
