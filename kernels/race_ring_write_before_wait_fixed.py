# The fixed twin of race_ring_write_before_wait.py: the producer waits on
# `empty` (the consumer's release of the previous round) before it writes the
# slot, then arms `full`.
from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def race_ring_write_before_wait_fixed(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
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
                            out[r] = slot[0]
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
