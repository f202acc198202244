# The fixed twin of mbar_unordered_rearm.py: after observing generation 0 of
# `full`, the consumer (warp 1) releases it on `empty`, and the producer waits on
# `empty` before it re-arms `full` for round 1.  That wait is the
# synchronization edge that orders the consumption of generation 0 before the
# arrive on generation 1 (the helper rendezvous on named barrier 1 stays; it
# orders nothing the protocol needs).
from tvm_tirx.script import tirx as T


@T.function
def mbar_unordered_rearm_fixed(out: T.Tensor((2,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((2,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        slot[0] = 7
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                    T.ptx.bar.sync(1, 64)
                    T.cuda.mbarrier_wait(empty.ptr_to([0]), 0)
                    if lane == 0:
                        slot[1] = 17
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                elif warp == 1:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    if lane == 0:
                        out[0] = slot[0]
                        T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 1)
                    if lane == 0:
                        out[1] = slot[1]
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    T.ptx.bar.sync(1, 64)
