# The fixed twin of cp_async_overtaking.py: after copying the tile out, the
# consumer warp releases it on `empty` (one elected arrival, count 1), and the
# producer waits on `empty` — parity (r + 1) % 2, vacuous in round 0 — before it
# issues the next round's cp.async copies and deferred arrivals on `full`.
from tvm_tirx.script import tirx as T

ROUNDS = 3


@T.function
def cp_async_overtaking_fixed(g: T.Tensor((ROUNDS * 128,), T.int32), out: T.Tensor((ROUNDS * 128,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                s = T.alloc_tensor(ty_args=[T.Tensor((128,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(32))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        T.ptx.cp.async_.ca.shared.global_(s.ptr_to([lane * 4]), g.ptr_to([r * 128 + lane * 4]), 16)
                        T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        for k in T.unroll(4):
                            out[r * 128 + lane * 4 + k] = s[lane * 4 + k]
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
