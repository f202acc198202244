# Bug: the producer writes the ring slot before its empty-barrier wait.  Warp 0
# (producer) and warp 1 (consumer) pass one value per round through a single
# shared slot with a `full`/`empty` mbarrier pair.  The producer waits on
# `empty` before it arms `full` — but it stores round r's value first, so the
# store overtakes the consumer's read of round r - 1: the consumer can read a
# later round's value (the simulated run does).  No barrier protocol rule is
# broken; the race is in the data.  The fix, race_ring_write_before_wait_fixed.py,
# waits on `empty` before writing the slot.
from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def race_ring_write_before_wait(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
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
                        if lane == 0:
                            slot[0] = r * 10 + 7
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane == 0:
                            out[r] = slot[0]
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
