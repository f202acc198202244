# The fixed twin of mbar_zero_count.py: `done` expects one arrival per consumer
# warp (CONSUMERS), and each consumer warp's lane 0 arrives once.
from tvm_tirx.script import tirx as T

CONSUMERS = 1


@T.function
def mbar_zero_count_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32 * (CONSUMERS + 1)) as tx:
                done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(done.ptr_to([0]), T.uint32(CONSUMERS))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
                    out[lane] = lane
                else:
                    if lane == 0:
                        T.ptx.mbarrier.arrive.shared.b64(done.ptr_to([0]))
