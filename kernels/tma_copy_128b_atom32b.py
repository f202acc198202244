# 2D TMA tile copy, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B (CUtensorMapSwizzle 4).  One thread arms the
# mbarrier with the box bytes and loads the BOX_Y x BOX_X box at (X0, Y0) of `src` (through the tensor
# map `tmap`) into a 1024-byte aligned shared tile; after the wait every thread copies the raw shared
# words to `out`, so `out` shows the hardware placement: the 32-byte chunk c of box row r sits at
# chunk c ^ (r % 4) of the row's 128 bytes ("swizzles 32-byte chunks within a 128-byte span", CUDA
# driver API).  Inputs come from kernels/inputs/tma.py:tma_copy.
from tvm_tirx.script import tirx as T

SWIZZLE = 128          # swizzle span in bytes (0 = none)
ATOM = 32              # bytes the swizzle moves as a unit (16 for the 32B/64B/128B modes)
GX = 48                # global extents, dim 0 innermost (elements)
GY = 40
BOX_X = 32             # 32 x float32 = 128 bytes, the swizzle span
BOX_Y = 16
X0 = 8                 # box coordinates (may be negative or reach past the tensor: zero fill)
Y0 = 16
THREADS = 128
NBYTES = BOX_X * BOX_Y * 4


@T.function
def tma_copy_128b_atom32b(src: T.Tensor((GY, GX), T.float32), tmap: T.Ptr(T.void), out: T.Tensor((BOX_Y * BOX_X,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((BOX_Y, BOX_X), T.float32, scope="shared", align=1024)])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](tile.ptr_to([0, 0]), tmap, X0, Y0, bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                for k in range(BOX_X * BOX_Y // THREADS):
                    i: T.let[T.int32] = k * THREADS + tx
                    out[i] = tile[i // BOX_X, i % BOX_X]
