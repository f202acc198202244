# The fixed twin of race_bulk_store_no_fence.py: each writer fences its generic
# shared-memory write for the async proxy (fence.proxy.async.shared::cta)
# before the CTA barrier that hands the tile to the bulk-store thread.
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def race_bulk_store_no_fence_fixed(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                tile = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                tile[tx] = x[tx] * T.float32(2.0) + T.float32(1.0)
                # make this thread's generic writes visible to the async proxy (the bulk copy)
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([0]), tile.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx.cp.async_.bulk.wait_group(0)
