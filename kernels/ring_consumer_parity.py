# Bug: the consumer's full wait uses the producer's start phase, (r // STAGES + 1) % 2.
# On a fresh barrier parity 1 passes at once (it names the phase before init), so in
# round 0 the consumer reads its slot before the producer wrote it and releases an
# empty generation nobody filled.  The prover refutes it at ROUNDS=1.  Fixed twin:
# ring_arith.py.
from tvm_tirx.script import tirx as T

STAGES = 3
ROUNDS = 8


@T.function
def ring_consumer_parity(out: T.Tensor((ROUNDS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 32), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in range(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                        tile[r % STAGES, lane] = r * 100 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([r % STAGES]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                        out[r * 32 + lane] = tile[r % STAGES, lane]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]))
