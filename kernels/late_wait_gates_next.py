# A late waiter gates the next completion, a mirror of the reference tool's
# native_synccheck_late_wait_gates_next_completion (3 warps, clean).  Warp 0
# loads a tile per round into one buffer with arrive.expect_tx + cp.async.bulk on
# `full`; warps 1 and 2 wait `full`, copy the tile out and fence their generic
# reads for the async proxy (the next bulk copy overwrites buf), then release it on
# `empty` (count 2: one elected arrival per consumer warp).  Warp 2 is slow (it
# sleeps before every wait), so the producer's wait on `empty` — not the order
# of the simulated run — is what keeps round r + 1's copy and completion behind
# warp 2's observation of round r.
from tvm_tirx.script import tirx as T

ROUNDS = 3
TILE = 8
NBYTES = TILE * 4


@T.function
def late_wait_gates_next(src: T.Tensor((ROUNDS * TILE,), T.float32), out: T.Tensor((2, ROUNDS * TILE), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(2))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([r * TILE]), T.uint32(NBYTES), full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        if warp == 2:
                            for k in range(3):
                                T.cuda.nano_sleep(500)
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane < TILE:
                            out[warp - 1, r * TILE + lane] = buf[lane]
                        # the next round's bulk copy (async proxy) overwrites buf
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
