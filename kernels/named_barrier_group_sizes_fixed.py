# The fixed twin of named_barrier_group_sizes.py: the pair (warps 0-1) meets on
# named barrier 1 with 64 threads and the trio (warps 2-4) on named barrier 2
# with 96, so no schedule can put both groups into one generation.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_group_sizes_fixed(out: T.Tensor((160,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 160) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((160,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                s[tx] = tx * 2
                if warp < 2:
                    T.ptx.bar.sync(1, 64)
                    out[tx] = s[63 - tx]
                else:
                    T.ptx.bar.sync(2, 96)
                    out[tx] = s[64 + 159 - tx]
