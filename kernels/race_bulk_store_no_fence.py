# Bug: generic shared-memory writes feed a bulk store without a proxy fence.
# Every thread computes its element of a tile into shared memory; after a CTA
# barrier, thread 0 stores the tile to global memory with cp.async.bulk
# (shared::cta -> global, bulk-group completion).  The bulk copy reads the tile
# through the async proxy, and the CTA barrier orders only generic-proxy
# accesses: without fence.proxy.async the copy may read stale bytes.  The fix,
# race_bulk_store_no_fence_fixed.py, has every writer execute
# fence.proxy.async.shared::cta after its write and before the barrier.
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def race_bulk_store_no_fence(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                tile = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                tile[tx] = x[tx] * T.float32(2.0) + T.float32(1.0)
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([0]), tile.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx.cp.async_.bulk.wait_group(0)
