# The fixed twin of oob_store.py: the shifted store is guarded by i + 1 < N.
#
# out[i + 1] = x[i] * 3 for every element that has a successor, out[0] = -1.
# The grid has more threads than elements; the out-of-range threads are masked
# off by the guards and never touch memory.
from tvm_tirx.script import tirx as T

N = 100
THREADS = 64


@T.function
def oob_store_fixed(x: T.Tensor((N,), T.int32), out: T.Tensor((N,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", (N + THREADS - 1) // THREADS) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                i: T.let[T.int32] = bx * THREADS + tx
                if i < N:
                    v: T.let[T.int32] = x[i] * 3
                    if i + 1 < N:
                        out[i + 1] = v
                if i == 0:
                    out[0] = -1
