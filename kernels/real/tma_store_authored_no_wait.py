# Bug twin of tma_store_authored.py: the elected thread commits the bulk store but does not
# wait for it (cp.async.bulk.wait_group.read 0 dropped) before the warpgroup barrier that
# releases the tile to the next round's writers.  The TMA engine may still be reading the
# tile when the threads overwrite it: the global row can receive the next round's values.
from tvm.script import tirx as T

ROUNDS = 4
TILE_ROWS = 4


@T.prim_func
def tma_store_authored_no_wait(x: T.Buffer((ROUNDS * TILE_ROWS, 32), "float32"), out: T.Buffer((ROUNDS * TILE_ROWS, 32), "float32")):
    tmap: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap, "float32", 2, out.data, 32, ROUNDS * TILE_ROWS, 128, 32, TILE_ROWS, 1, 1, 0, 0, 2, 0)
    T.device_entry()
    warp = T.warp_id([4])
    lane = T.lane_id([32])
    tile = T.alloc_shared((TILE_ROWS, 32), "float32", align=128)
    for r in T.serial(ROUNDS, unroll=False):
        tile[warp, lane] = x[r * TILE_ROWS + warp, lane] * T.float32(2) + T.Cast("float32", r)
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.warpgroup_sync(1)
        if warp == 0:
            if T.cuda.elect_sync():
                T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap, 0, r * TILE_ROWS, T.address_of(tile[0, 0]))
                T.ptx.cp.async_.bulk.commit_group()
        T.cuda.warpgroup_sync(1)
        # the store read the tile through the async proxy: bridge to the next round's generic writes
        T.ptx.fence.proxy.async_.shared__cta()
    if warp == 0:
        if T.cuda.elect_sync():
            T.ptx.cp.async_.bulk.wait_group(0)
