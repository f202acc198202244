# The fixed twin of race_read_before_wait.py: the consumer waits on `full`
# first and reads the tile after the wait, which acquires the producer's writes
# (released by the warp_sync and lane 0's arrive).
from tvm_tirx.script import tirx as T


@T.function
def race_read_before_wait_fixed(src: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    tile[lane] = src[lane] * 3
                    T.cuda.warp_sync()
                    if lane == 0:
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    out[lane] = tile[31 - lane]
