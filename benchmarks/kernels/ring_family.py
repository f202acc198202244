# The ring family of the explorer benchmark (issue #5): PRODUCERS producer warps and
# CONSUMERS consumer warps share a STAGES-deep ring of mbarrier pairs over ROUNDS rounds,
# in one CTA.
#
# full[s] expects PRODUCERS arrivals per generation, empty[s] expects CONSUMERS.  In
# round r (stage s = r % STAGES) every producer waits `empty[s]` with parity
# (r // STAGES + 1) % 2 (start phase 1: the first pass over each stage goes through at
# once after init), writes its 32-word part of the shared tile, reconverges with
# warp_sync and arrives on `full[s]` from one elected lane.  Every consumer waits
# `full[s]` with parity (r // STAGES) % 2, reads one producer's part into `out`,
# reconverges and releases the stage with one elected arrive on `empty[s]`.  The
# protocol is clean for every configuration.
from tvm_tirx.script import tirx as T

PRODUCERS = 1
CONSUMERS = 15
STAGES = 4
ROUNDS = 32


@T.function
def ring_family(out: T.Tensor((CONSUMERS * ROUNDS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32 * (PRODUCERS + CONSUMERS)) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((STAGES, PRODUCERS * 32), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in range(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(PRODUCERS))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(CONSUMERS))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp < PRODUCERS:
                    for r in range(ROUNDS):
                        stage: T.let[T.int32] = r % STAGES
                        T.cuda.mbarrier_wait(empty.ptr_to([stage]), (r // STAGES + 1) % 2)
                        tile[stage, warp * 32 + lane] = r * 1000 + warp * 32 + lane
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([stage]))
                else:
                    c: T.let[T.int32] = warp - PRODUCERS
                    for r in range(ROUNDS):
                        stage: T.let[T.int32] = r % STAGES
                        T.cuda.mbarrier_wait(full.ptr_to([stage]), (r // STAGES) % 2)
                        out[(c * ROUNDS + r) * 32 + lane] = tile[stage, (c + r) % PRODUCERS * 32 + lane]
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([stage]))
