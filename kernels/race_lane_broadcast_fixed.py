# The fixed twin of race_lane_broadcast.py: a warp_sync after lane 0's store
# orders it before every lane's load of the scale.
from tvm_tirx.script import tirx as T


@T.function
def race_lane_broadcast_fixed(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                scale = T.alloc_tensor(ty_args=[T.Tensor((2,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if lane == 0:
                    scale[warp] = x[warp * 32] + 1
                T.cuda.warp_sync()
                out[tx] = x[tx] * scale[warp]
