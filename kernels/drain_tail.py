# A producer drain tail (clean), after the reference tool's
# test_native_drain_tail and the drain(pipe, st) of gdn_prefill_sm100.  Two
# single-lane roles share a 2-slot ring: `ready[s]` and `free[s]` expect one
# arrival each.  The producer (thread 0) skips the `free` wait on its first pass
# over each slot, fills the slot and arrives on `ready`; the consumer (thread 32)
# waits `ready`, copies the slot out and arrives on `free`.  Both loop with
# `while True: ... break`.  Before it exits, the producer waits once more on
# every slot's `free`, so no consumer arrive is still in flight at exit.
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 5


@T.function
def drain_tail(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                free = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.int32, scope="shared")])
                r = T.local_scalar(T.int32)
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(ready.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(free.ptr_to([s]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                r = 0
                if tx == 0:
                    while True:
                        if r == ROUNDS:
                            break
                        if r >= STAGES:
                            T.cuda.mbarrier_wait(free.ptr_to([r % STAGES]), (r // STAGES - 1) % 2)
                        slot[r % STAGES] = r * 10 + 3
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([r % STAGES]))
                        r = r + 1
                    for s in T.unroll(STAGES):
                        # slot s is released once per round r with r % STAGES == s: its last
                        # release is generation (ROUNDS - 1 - s) // STAGES of free[s]
                        T.cuda.mbarrier_wait(free.ptr_to([s]), ((ROUNDS - 1 - s) // STAGES) % 2)
                elif tx == 32:
                    while True:
                        if r == ROUNDS:
                            break
                        T.cuda.mbarrier_wait(ready.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r] = slot[r % STAGES]
                        T.ptx.mbarrier.arrive.shared.b64(free.ptr_to([r % STAGES]))
                        r = r + 1
