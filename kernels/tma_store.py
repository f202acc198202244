# TMA store of a shared tile (128B swizzle).  Every thread writes its elements of a
# BOX_Y x BOX_X float32 tile into shared memory at the position the tensor map's
# swizzle expects (the 16-byte chunk c of row r at chunk c ^ (r % 8)), fences its
# generic writes for the async proxy and meets the others at a CTA barrier; one thread
# then stores the box at (X0, Y0) of `out` with cp.async.bulk.tensor (bulk group
# completion) and waits for the group.  The box reaches past the right and bottom
# edges of `out`: those elements are skipped, the rest of `out` keeps its values.
# Inputs come from kernels/inputs/tma.py:tma_store.
from tvm_tirx.script import tirx as T

GX = 40                # `out` extents, dim 0 innermost (elements)
GY = 20
BOX_X = 32             # 32 x float32 = 128 bytes, the swizzle span
BOX_Y = 16
X0 = 16                # box coordinates in `out`
Y0 = 8
THREADS = 128


@T.function
def tma_store(out: T.Tensor((GY, GX), T.float32), tmap: T.Ptr(T.void)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                tile = T.alloc_tensor(ty_args=[T.Tensor((BOX_Y * BOX_X,), T.float32, scope="shared", align=1024)])
                for k in range(BOX_X * BOX_Y // THREADS):
                    i: T.let[T.int32] = k * THREADS + tx
                    r: T.let[T.int32] = i // BOX_X
                    c: T.let[T.int32] = i % BOX_X
                    tile[r * BOX_X + (c // 4 ^ r % 8) * 4 + c % 4] = T.Cast("float32", (Y0 + r) * 1000 + X0 + c)
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap, X0, Y0, tile.ptr_to([0]))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx.cp.async_.bulk.wait_group(0)
