# Bug: the shifted store out[i + 1] = x[i] * 3 is guarded only by i < N, so the
# thread of the last element (i = N - 1: CTA 1, thread 35, warp 1 lane 3) stores
# one element past the end of `out`.  The guard still masks off the threads with
# i >= N (lanes 4..31 of that warp), whose x[i] loads would also be out of range;
# they must not fault.  The fix is oob_store_fixed.py.
from tvm_tirx.script import tirx as T

N = 100
THREADS = 64


@T.function
def oob_store(x: T.Tensor((N,), T.int32), out: T.Tensor((N,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", (N + THREADS - 1) // THREADS) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                i: T.let[T.int32] = bx * THREADS + tx
                if i < N:
                    v: T.let[T.int32] = x[i] * 3
                    out[i + 1] = v
                if i == 0:
                    out[0] = -1
