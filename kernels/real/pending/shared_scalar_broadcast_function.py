# A block-wide broadcast through a shared scalar, in the apache-tvm-tirx 0.1.0a4 authoring
# form: thread 0 sums the first column of x into a T.shared_scalar (assigned by name, the
# way kernels write scalars), a CTA barrier publishes it, and every thread writes
# out = x - mean of that column.  Pending: modelcheck does not yet accept assignment to a
# shared scalar by name (`total = ...`).
from tvm_tirx.script import tirx as T

N = 128


@T.function
def shared_scalar_broadcast_function(x: T.Tensor((N,), T.float32), out: T.Tensor((N,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", N) as tx:
                total = T.shared_scalar(T.float32)
                acc = T.local_scalar(T.float32)
                if tx == 0:
                    acc = T.float32(0)
                    for i in T.serial(N, unroll=False):
                        acc = acc + x[i]
                    total = acc
                T.cuda.cta_sync()
                out[tx] = x[tx] - total / T.float32(N)
