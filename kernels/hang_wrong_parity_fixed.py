# The fixed twin of hang_wrong_parity.py: consumers wait `full` by parity r % 2.
#
# Warp 0 produces ROUNDS values into one shared slot; the consumer warps (1..CONSUMERS)
# copy each value to out[warp - 1, r].  `full` (count 1) hands a value over, `empty`
# (count CONSUMERS, one elected arrive per consumer warp) gives it back; the
# producer waits `empty` by parity (r + 1) % 2, which passes at once in round 0.
from tvm_tirx.script import tirx as T

ROUNDS = 4
CONSUMERS = 1


@T.function
def hang_wrong_parity_fixed(out: T.Tensor((CONSUMERS, ROUNDS), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32 * (CONSUMERS + 1)) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(CONSUMERS))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            slot[0] = r * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane == 0:
                            out[warp - 1, r] = slot[0]
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
