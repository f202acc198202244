# Bug: warp_collective_divergence inside a loop.  Each warp sums its lanes'
# values with a shuffle reduction (T.cuda.__shfl_xor_sync) in a `while` loop
# until the running total reaches LIMIT.  The loop condition reads the total only
# on lane 0 (the other lanes see `lane == 0` false and leave at once), so the
# shuffles run with one active lane while their member mask names the whole
# warp.  Mirrors the lane-0-only mode of the reference tool's
# native_collective_in_while.  The fix, collective_in_while_fixed.py, keeps the
# condition warp-uniform (every lane holds the reduced total).
from tvm_tirx.script import tirx as T

LIMIT = 100


@T.function
def collective_in_while(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                total = T.local_scalar(T.int32)
                s = T.local_scalar(T.int32)
                lane: T.let[T.int32] = tx % 32
                total = 0
                while lane == 0 and total < LIMIT:
                    s = x[tx] % 4 + 1
                    for k in T.unroll(5):
                        s = s + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), s, 1 << k, 32)
                    total = total + s
                out[tx] = total
