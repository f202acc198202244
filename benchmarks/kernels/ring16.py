# Throughput benchmark: 16 warps = 8 producer/consumer pairs, each pair a 2-stage
# mbarrier ring over ROUNDS rounds.  Per round a producer waits its empty slot,
# writes a swizzled 4-byte word per lane into shared memory, joins its lanes and
# arrives on full from one lane; the consumer waits full, reads the word, writes
# it to global memory, joins, and releases the slot.
from tvm_tirx.script import tirx as T

ROUNDS = 256
PAIRS = 8
STAGES = 2


@T.function
def ring16(out: T.Tensor((PAIRS * ROUNDS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", PAIRS * 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((PAIRS * STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((PAIRS * STAGES,), T.uint64, scope="shared")])
                slots = T.alloc_tensor(ty_args=[T.Tensor((PAIRS * STAGES * 32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                pair: T.let[T.int32] = warp % PAIRS
                if tx == 0:
                    for s in range(PAIRS * STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp < PAIRS:
                    for r in range(ROUNDS):
                        stage: T.let[T.int32] = r % STAGES
                        slot: T.let[T.int32] = pair * STAGES + stage
                        T.cuda.mbarrier_wait(empty.ptr_to([slot]), (r // STAGES + 1) % 2)
                        word: T.let[T.int32] = slot * 32 + (lane ^ (r % 8))
                        slots[word] = r * 100 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([slot]))
                else:
                    for r in range(ROUNDS):
                        stage: T.let[T.int32] = r % STAGES
                        slot: T.let[T.int32] = pair * STAGES + stage
                        T.cuda.mbarrier_wait(full.ptr_to([slot]), r // STAGES % 2)
                        word: T.let[T.int32] = slot * 32 + (lane ^ (r % 8))
                        out[(pair * ROUNDS + r) * 32 + lane] = slots[word]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([slot]))
