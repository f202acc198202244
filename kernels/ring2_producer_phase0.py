# Bug: deadlock from the producer's start phase.  A 2-stage ring (full/empty
# mbarriers per stage, ROUNDS rounds): the producer (warp 0) tracks its position
# with a PipelineState-style cursor (stage, phase) and waits `empty[stage]` by
# `phase` before refilling the stage; the consumer (warp 1) has its own cursor
# and waits `full[stage]` by `phase`.  Both cursors start at phase 0, but the
# producer's must start at 1 ("consumer full-wait starts 0, producer empty-wait
# starts 1"): after init an empty slot's completed parity is 1, so the
# producer's first parity-0 wait blocks for a release that never comes, and the
# consumer blocks on `full`.  The fix is ring2_producer_phase1.py.
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 6
PRODUCER_START_PHASE = 0


@T.function
def ring2_producer_phase0(out: T.Tensor((ROUNDS, 32), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 32), T.int32, scope="shared")])
                stage = T.local_scalar(T.int32)
                phase = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(32))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(32))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                stage = 0
                if warp == 0:
                    phase = PRODUCER_START_PHASE
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([stage]), phase)
                        buf[stage, lane] = r * 100 + lane
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([stage]))
                        stage = stage + 1
                        if stage == STAGES:
                            stage = 0
                            phase = phase ^ 1
                else:
                    phase = 0
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([stage]), phase)
                        out[r, lane] = buf[stage, lane]
                        T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([stage]))
                        stage = stage + 1
                        if stage == STAGES:
                            stage = 0
                            phase = phase ^ 1
