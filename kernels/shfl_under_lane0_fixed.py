# The fixed twin of shfl_under_lane0.py: the collective (COLLECTIVE: 0 =
# shfl.sync, 1 = elect.sync, 2 = bar.warp.sync) runs with all 32 lanes active;
# only the use of its result depends on the lane.
from tvm_tirx.script import tirx as T

COLLECTIVE = 0


@T.function
def shfl_under_lane0_fixed(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                v = T.local_scalar(T.int32)
                lane: T.let[T.int32] = tx % 32
                v = x[tx] + 1
                if COLLECTIVE == 0:
                    w: T.let[T.int32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v, 0, 32)
                    if lane == 0:
                        v = w
                elif COLLECTIVE == 1:
                    if T.cuda.elect_sync():
                        v = v * 2
                else:
                    T.cuda.warp_sync()
                out[tx] = v
