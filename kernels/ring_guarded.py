# A ring whose producer counts its empty waits from the first reuse: in round r >= STAGES
# it waits for the consumers' release of round r - STAGES, parity
# T.truncdiv(r - STAGES, STAGES) % 2, and the guard `r >= STAGES` skips the wait on the
# first pass (the buffers start empty).  C-style truncating division makes the guard
# necessary; see ring_missing_guard.py.  Clean for every ROUNDS.
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 8


@T.function
def ring_guarded(out: T.Tensor((ROUNDS * 32,), T.int32)):
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
                        if r >= STAGES:
                            T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), T.truncdiv(r - STAGES, STAGES) % 2)
                        tile[r % STAGES, lane] = r * 100 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([r % STAGES]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r * 32 + lane] = tile[r % STAGES, lane]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]))
