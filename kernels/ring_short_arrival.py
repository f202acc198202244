# Bug: full is initialized for three arrivals but only the two producer warps arrive,
# one arrival too few: the first full generation never completes and the consumer
# waits forever, for every ROUNDS >= 1.  The prover refutes it at ROUNDS=1.  Fixed twin:
# ring_short_arrival_fixed.py.
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 6
FULL_COUNT = 3


@T.function
def ring_short_arrival(out: T.Tensor((ROUNDS * 64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 64), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in range(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), FULL_COUNT)
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), 2)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp < 2:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                        tile[r % STAGES, warp * 32 + lane] = r * 100 + warp * 32 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([r % STAGES]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r * 64 + lane] = tile[r % STAGES, lane]
                        out[r * 64 + 32 + lane] = tile[r % STAGES, 32 + lane]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]), 2)
