# Shared-memory tree reduction, one block sum per CTA.
#
# Each of CTAS CTAs loads N elements of x into shared memory, then halves the
# active range every step; named barrier 1 (bar.sync over all N threads)
# separates the steps.  Lane 0 of warp 0 writes the CTA's sum to out[bx].
from tvm_tirx.script import tirx as T

N = 256
CTAS = 3


@T.function
def smem_reduce(x: T.Tensor((CTAS * N,), T.int32), out: T.Tensor((CTAS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CTAS) as bx:
            with T.launch_thread("threadIdx.x", N) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((N,), T.int32, scope="shared")])
                s[tx] = x[bx * N + tx]
                T.ptx.bar.sync(1, N)
                stride = T.local_scalar(T.int32)
                stride = N // 2
                while stride > 0:
                    if tx < stride:
                        s[tx] = s[tx] + s[tx + stride]
                    T.ptx.bar.sync(1, N)
                    stride = stride // 2
                if tx == 0:
                    out[bx] = s[0]
