# Bug: a lane handoff inside one warp without a lane-order edge.  Lane 0 of
# each warp computes the row scale and stores it to shared memory; the other
# lanes of the same warp then read it.  Lanes of a warp are not implicitly
# ordered (independent thread scheduling), so lanes 1-31 may read the slot
# before lane 0 has written it.  The fix, race_lane_broadcast_fixed.py, puts a
# __syncwarp (T.cuda.warp_sync) between the store and the loads.
from tvm_tirx.script import tirx as T


@T.function
def race_lane_broadcast(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                scale = T.alloc_tensor(ty_args=[T.Tensor((2,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if lane == 0:
                    scale[warp] = x[warp * 32] + 1
                out[tx] = x[tx] * scale[warp]
