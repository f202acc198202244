# Element-wise c = a + b over N elements, THREADS threads per CTA; the threads of
# the last CTA with i >= N are masked off by the guard.
from tvm_tirx.script import tirx as T

N = 1000
THREADS = 128


@T.function
def vector_add(a: T.Tensor((N,), T.float32), b: T.Tensor((N,), T.float32), c: T.Tensor((N,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", (N + THREADS - 1) // THREADS) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                i: T.let[T.int32] = bx * THREADS + tx
                if i < N:
                    c[i] = a[i] + b[i]
