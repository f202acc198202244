# Two warps hand a value back and forth through one mbarrier used as an arrive-and-wait barrier: each
# round, lane 0 of each warp arrives, keeps the state token the arrive returns and polls
# `mbarrier.try_wait` with that token (the phase its own arrival landed in) until the phase completes.
# Phase 2r: the writer's slot[0] is ready; phase 2r + 1: the reader is done with it.
# Bugs (constants): STALE = 1 makes the reader poll every round with the token of its first arrival, a phase
# long completed (PTX defines a token wait only for the current phase and the one before:
# mbarrier_invalid_phase); OTHER_BAR = 1 makes it poll `bar` with a token of `other` (mbarrier_invalid_phase).
from tvm_tirx.script import tirx as T

ROUNDS = 3
STALE = 0
OTHER_BAR = 0


@T.function
def mbar_token_wait(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                other = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                st = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="local")])
                first = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="local")])
                foreign = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="local")])
                done = T.local_scalar(T.uint32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(2))
                    T.ptx.mbarrier.init.shared.b64(other.ptr_to([0]), T.uint32(2))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if lane == 0:
                    T.ptx.mbarrier.arrive.shared__cta.b64(foreign[0], other.ptr_to([0]), T.uint32(1))
                    for r in range(ROUNDS):
                        if warp == 0:
                            slot[0] = r * 10 + 7
                        T.ptx.mbarrier.arrive.shared__cta.b64(st[0], bar.ptr_to([0]), T.uint32(1))
                        if r == 0:
                            first[0] = st[0]
                        done = T.uint32(0)
                        while done == T.uint32(0):
                            if warp == 1 and STALE == 1:
                                T.ptx.mbarrier.try_wait.shared__cta.b64(done, bar.ptr_to([0]), first[0])
                            elif warp == 1 and OTHER_BAR == 1:
                                T.ptx.mbarrier.try_wait.shared__cta.b64(done, bar.ptr_to([0]), foreign[0])
                            else:
                                T.ptx.mbarrier.try_wait.shared__cta.b64(done, bar.ptr_to([0]), st[0])
                        if warp == 1:
                            out[r] = slot[0]
                        T.ptx.mbarrier.arrive.shared__cta.b64(st[0], bar.ptr_to([0]), T.uint32(1))
                        done = T.uint32(0)
                        while done == T.uint32(0):
                            T.ptx.mbarrier.test_wait.shared__cta.b64(done, bar.ptr_to([0]), st[0])
