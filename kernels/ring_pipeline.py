# A STAGES-deep mbarrier ring between one producer warp and one consumer warp, with
# PipelineState-style cursors: `stage` and `phase` locals advanced after every round
# (`stage += 1; if stage == STAGES: stage = 0; phase ^= 1`).  The producer's cursor
# starts at phase 1 (the buffers start empty, so its first pass over each stage goes
# through at once after init); the consumer's starts at phase 0.  Clean for every
# STAGES >= 1 and every ROUNDS >= 1: `modelcheck prove --symbolic ROUNDS` proves it.
from tvm_tirx.script import tirx as T

STAGES = 4
ROUNDS = 8
PRODUCER_PHASE = 1


@T.function
def ring_pipeline(out: T.Tensor((ROUNDS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 32), T.int32, scope="shared")])
                stage = T.local_scalar(T.int32)
                phase = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in range(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                stage = 0
                if warp == 0:
                    phase = PRODUCER_PHASE
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([stage]), phase)
                        tile[stage, lane] = r * 100 + lane
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([stage]))
                        stage = stage + 1
                        if stage == STAGES:
                            stage = 0
                            phase = phase ^ 1
                else:
                    phase = 0
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([stage]), phase)
                        out[r * 32 + lane] = tile[stage, lane]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([stage]))
                        stage = stage + 1
                        if stage == STAGES:
                            stage = 0
                            phase = phase ^ 1
