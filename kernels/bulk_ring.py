# A 2-stage cp.async.bulk ring (global -> shared) over ROUNDS rounds.
#
# Warp 0 is the producer: per round it waits for `empty[stage]` (parity
# (r // 2 + 1) % 2, so the first pass over each stage goes through at once after
# init), then its elected lane arms `full[stage]` with arrive.expect_tx and issues
# the bulk copy of tile r into buf[stage], completing on `full[stage]`.
# Warps 1..CONSUMERS are consumers: they wait `full[stage]` by parity
# (r // 2) % 2, compute out = 2.5 * tile + bias, fence their generic reads for the
# async proxy (fence.proxy.async.shared::cta: the next bulk copy into the stage is
# an async-proxy write), reconverge with warp_sync and release the stage with one
# elected arrive per warp (`empty` expects CONSUMERS).
from tvm_tirx.script import tirx as T

STAGES = 2
ROUNDS = 8
TILE = 64
CONSUMERS = 2
NBYTES = TILE * 4


@T.function
def bulk_ring(src: T.Tensor((ROUNDS * TILE,), T.float32), bias: T.Tensor((TILE,), T.float32),
              out: T.Tensor((ROUNDS * TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32 * (CONSUMERS + 1)) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((STAGES, TILE), T.float32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(CONSUMERS))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([r % STAGES]), T.uint32(NBYTES))
                            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([r % STAGES, 0]), src.ptr_to([r * TILE]), T.uint32(NBYTES), full.ptr_to([r % STAGES]))
                else:
                    j: T.let[T.int32] = (warp - 1) * 32 + lane
                    b: T.let[T.float32] = bias[j]
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r * TILE + j] = buf[r % STAGES, j] * T.float32(2.5) + b
                        # the next bulk copy (async proxy) overwrites this stage: order the
                        # generic reads before it with a proxy fence before the release
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]))
