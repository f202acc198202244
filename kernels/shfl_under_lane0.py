# Bug: warp_collective_divergence.  A warp broadcast of lane 0's value is placed
# inside `if lane == 0:` — a .sync collective executed by one lane while its
# member mask (0xFFFFFFFF) names all 32.  COLLECTIVE picks the collective under
# the branch: 0 = shfl.sync (T.cuda.__shfl_sync), 1 = elect.sync
# (T.cuda.elect_sync), 2 = bar.warp.sync (T.cuda.warp_sync); each is the same
# bug.  The fix, shfl_under_lane0_fixed.py, executes the collective with the
# whole warp and branches only on its result.
from tvm_tirx.script import tirx as T

COLLECTIVE = 0


@T.function
def shfl_under_lane0(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                v = T.local_scalar(T.int32)
                lane: T.let[T.int32] = tx % 32
                v = x[tx] + 1
                if lane == 0:
                    if COLLECTIVE == 0:
                        v = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v, 0, 32)
                    elif COLLECTIVE == 1:
                        if T.cuda.elect_sync():
                            v = v * 2
                    else:
                        T.cuda.warp_sync()
                out[tx] = v
