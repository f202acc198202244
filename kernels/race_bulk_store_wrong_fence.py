# Bug: a proxy fence with the wrong state space.  Like race_bulk_store_no_fence.py,
# every thread writes its element of a shared tile that thread 0 then stores
# with cp.async.bulk (async proxy).  The writers do fence, but with
# fence.proxy.async.global, whose window is global memory: the generic writes
# to the shared::cta tile stay unbridged, so the copy may read stale bytes.
# The fix, race_bulk_store_wrong_fence_fixed.py, uses the unqualified
# fence.proxy.async, which covers every state space (.shared::cta would do too).
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def race_bulk_store_wrong_fence(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                tile = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                tile[tx] = x[tx] * T.float32(2.0) + T.float32(1.0)
                # wrong window: .global does not cover the shared::cta tile the bulk copy reads
                T.ptx.fence.proxy.async_.global_()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([0]), tile.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx.cp.async_.bulk.wait_group(0)
