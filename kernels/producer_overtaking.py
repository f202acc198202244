# Seed case of the checkers: a single-slot mbarrier re-armed every round.
#
# Warp 0 (producer) writes round r's value into a shared slot and arrives on
# `full`; warp 1 (consumer) waits on `full` by parity r % 2 and copies the slot
# to out[r].  Nothing stops the producer from re-arming `full` (and overwriting
# the slot) before the consumer has observed the previous generation, so the
# consumer can miss a generation, read a later round's value, or wait forever
# on a parity that already flipped twice.  The fix is producer_overtaking_fixed.py.
from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def producer_overtaking(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        if lane == 0:
                            slot[0] = r * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane == 0:
                            out[r] = slot[0]
