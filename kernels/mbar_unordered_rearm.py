# Bug: mbarrier_prior_generation_consumption_not_happens_before.  The producer
# (warp 0) publishes round 0 on `full`, then meets a helper warp 2 (which first
# sleeps a while) on named barrier 1 before it publishes round 1 on the same
# barrier.  That named barrier does not involve the consumer (warp 1), so
# nothing orders the consumer's wait for generation 0 before the producer's
# arrive on generation 1.  The simulated run happens to let the consumer observe
# generation 0 first (the producer is stuck on the named barrier until the slow
# helper arrives), but on hardware the helper can be fast and the producer can
# complete generation 1 before the consumer's parity-0 wait looks: the consumer
# then misses a generation and waits forever.  The fix,
# mbar_unordered_rearm_fixed.py, makes the producer wait for the consumer's
# release on `empty` before re-arming.
from tvm_tirx.script import tirx as T


@T.function
def mbar_unordered_rearm(out: T.Tensor((2,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((2,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        slot[0] = 7
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                    T.ptx.bar.sync(1, 64)
                    if lane == 0:
                        slot[1] = 17
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                elif warp == 1:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    if lane == 0:
                        out[0] = slot[0]
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 1)
                    if lane == 0:
                        out[1] = slot[1]
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    T.ptx.bar.sync(1, 64)
