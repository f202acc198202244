# Bug: the consumer waits `full` by parity (r + 1) % 2, one phase off (the fix,
# hang_wrong_parity_fixed.py, waits r % 2).  Its round-0 wait is the vacuous
# parity-1 wait after init, so it passes before any value was produced.  If the
# consumer gets there first, its release completes `empty` phase 0 early: the
# producer's round-0 wait for parity 1 now blocks, and the consumer blocks on
# `full` phase 0.  If the producer gets there first, `full` phase 0 completes, the
# consumer's parity-1 wait blocks and the producer blocks on `empty` phase 0.
# Either way nobody arrives again: a deadlock.
from tvm_tirx.script import tirx as T

ROUNDS = 4
CONSUMERS = 1


@T.function
def hang_wrong_parity(out: T.Tensor((CONSUMERS, ROUNDS), T.int32)):
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
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(CONSUMERS))
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
                        T.cuda.mbarrier_wait(full.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            out[warp - 1, r] = slot[0]
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
