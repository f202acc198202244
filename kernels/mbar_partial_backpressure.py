# Bug: a lapped consumer (phase B `deadlock`), after reference bug B8(b).  The
# producer (warp 0) re-arms a single-slot `full` barrier every round; two
# consumer warps wait on it by parity r % 2.  The producer's back-pressure
# barrier `empty` expects one arrival, and only consumer warp 1 releases it, so
# nothing waits for consumer warp 2.  The simulated run keeps both consumers in
# step, but in the schedule where warp 2 falls behind, the producer completes two
# more generations before warp 2 looks: the parity warp 2 waits for comes around
# again, it observes the wrong generation, and at the end waits for a phase that
# never completes.  Phase A is clean (every re-arm happens after *a* consuming
# wait); phase B finds the schedule.  The fix, mbar_partial_backpressure_fixed.py,
# has `empty` expect a release from every consumer warp.
from tvm_tirx.script import tirx as T

ROUNDS = 4
CONSUMERS = 2


@T.function
def mbar_partial_backpressure(out: T.Tensor((CONSUMERS, ROUNDS), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32 * (CONSUMERS + 1)) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            slot[0] = r * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane == 0:
                            out[warp - 1, r] = slot[0]
                        if warp == 1 and lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
