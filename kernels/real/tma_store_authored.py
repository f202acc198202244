# TMA stores through a bulk async-group, authored in `tvm.script` tirx (apache-tvm 0.27):
# one warpgroup computes a 4 x 32 float32 tile per round into shared memory (out = x * 2
# + round), fences its generic writes for the async proxy and meets at named barrier 1
# (T.cuda.warpgroup_sync); one elected thread stores the tile with a string-indexed
# cp.async.bulk.tensor...bulk_group through the tensor map the host prelude encodes over
# out, commits the group and waits for it to have read the tile (wait_group.read 0)
# before the warpgroup barrier that lets the threads overwrite the tile for the next round;
# each thread fences again before that overwrite (the reference harness's rule: a completed
# async-proxy read is bridged to later generic writes only by fence.proxy.async).
from tvm.script import tirx as T

ROUNDS = 4
TILE_ROWS = 4


@T.prim_func
def tma_store_authored(x: T.Buffer((ROUNDS * TILE_ROWS, 32), "float32"), out: T.Buffer((ROUNDS * TILE_ROWS, 32), "float32")):
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
                T.ptx.cp.async_.bulk.wait_group.read(0)
        T.cuda.warpgroup_sync(1)
        # the store read the tile through the async proxy: bridge to the next round's generic writes
        T.ptx.fence.proxy.async_.shared__cta()
    if warp == 0:
        if T.cuda.elect_sync():
            T.ptx.cp.async_.bulk.wait_group(0)
