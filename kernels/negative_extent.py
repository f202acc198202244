# Bug: invalid_buffer_shape.  Each thread keeps a register array of `n` partial sums, n a
# scalar parameter; the caller passes n = -4 (a length computed as `end - start` with the
# two swapped), and a negative extent is no buffer at all.  The fixed twin,
# negative_extent_fixed (this file with n = 4), passes the length the right way round.
from tvm_tirx.script import tirx as T


@T.function
def negative_extent(x: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32), n: T.int32):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                acc = T.alloc_tensor(ty_args=[T.Tensor((n,), T.int32, scope="local")])
                for i in range(n):
                    acc[i] = x[tx] * i
                out[tx] = acc[0]
