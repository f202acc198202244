# A two-stage TMA pipeline written the way TVM's TIRx codegen tests author kernels
# (`tvm.script` tirx, apache-tvm 0.27): a host prelude that encodes the tensor map over x
# (T.tvm_stack_alloca + runtime.cuTensorMapEncodeTiled), T.device_entry() as a statement,
# scope ids, T.alloc_shared, chained-attribute PTX (`__` for `::`), a string-indexed TMA
# load and T.cuda.elect_sync / T.cuda.mbarrier_wait.  Warp 0 streams 8 x 32 float32 tiles
# into a 2-slot ring; warp 1 writes out = max(x, 0) and releases each slot after a proxy
# fence.  Parity from the loop counter: full waits (k // STAGES) % 2, the producer's empty
# waits (k // STAGES + 1) % 2.
from tvm.script import tirx as T

ROWS = 64
TILE_ROWS = 8
STAGES = 2
TILE_BYTES = TILE_ROWS * 32 * 4


@T.prim_func
def tma_pipeline_authored(x: T.Buffer((ROWS, 32), "float32"), out: T.Buffer((ROWS, 32), "float32")):
    tmap: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap, "float32", 2, x.data, 32, ROWS, 128, 32, TILE_ROWS, 1, 1, 0, 0, 2, 0)
    T.device_entry()
    warp = T.warp_id([2])
    lane = T.lane_id([32])
    tile = T.alloc_shared((STAGES, TILE_ROWS, 32), "float32", align=1024)
    full = T.alloc_shared((STAGES,), "uint64")
    empty = T.alloc_shared((STAGES,), "uint64")
    if warp == 0:
        if T.cuda.elect_sync():
            for s in T.unroll(STAGES):
                T.ptx.mbarrier.init.shared.b64(T.address_of(full[s]), 1)
                T.ptx.mbarrier.init.shared.b64(T.address_of(empty[s]), 32)
            T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cta_sync()
    if warp == 0:
        for k in T.serial(ROWS // TILE_ROWS, unroll=False):
            T.cuda.mbarrier_wait(T.address_of(empty[k % STAGES]), (k // STAGES + 1) % 2)
            if T.cuda.elect_sync():
                T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(T.address_of(full[k % STAGES]), T.uint32(TILE_BYTES))
                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](T.address_of(tile[k % STAGES, 0, 0]), tmap, 0, k * TILE_ROWS, T.address_of(full[k % STAGES]))
    else:
        for k in T.serial(ROWS // TILE_ROWS, unroll=False):
            T.cuda.mbarrier_wait(T.address_of(full[k % STAGES]), (k // STAGES) % 2)
            for r in T.unroll(TILE_ROWS):
                out[k * TILE_ROWS + r, lane] = T.max(tile[k % STAGES, r, lane], T.float32(0))
            T.ptx.fence.proxy.async_.shared__cta()
            T.ptx.mbarrier.arrive.shared.b64(T.address_of(empty[k % STAGES]))
