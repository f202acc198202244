# A depth-two mbarrier pipeline, a mirror of the reference tool's
# native_mbarrier_depth_two_pipeline (4 barriers, 2 warps, 4 iterations; clean).
# full[s] and empty[s] for two stages, each expecting one arrival.  The producer
# warp 0 waits empty[r % 2] by parity (r // 2 + 1) % 2 — its first pass over a
# stage is the vacuous parity-1 wait after init — fills the stage and lane 0
# arrives on full; the consumer warp 1 waits full[r % 2] by parity (r // 2) % 2,
# copies the stage out and lane 0 arrives on empty (arrive with a predicate).
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 4


@T.function
def mbar_depth_two_pipeline(out: T.Tensor((ROUNDS, 32), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 32), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                        buf[r % STAGES, lane] = r * 1000 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([r % STAGES]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r, lane] = buf[r % STAGES, lane]
                        T.cuda.warp_sync()
                        T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]), 1, pred=lane == 0)
