# The fixed twin of race_write_write.py: warp 0 writes the default tag and
# arrives on `ready`; warp 1 waits for that phase before it overrides the tag,
# so the override is ordered after the default and always wins.
from tvm_tirx.script import tirx as T


@T.function
def race_write_write_fixed(out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                header = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        header[0] = 7
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    if lane == 0:
                        header[0] = 9
                T.cuda.cta_sync()
                if tx == 0:
                    out[0] = header[0]
