# from typing import TypeVar
# from tvm.script import tirx as T

# Block maxima with warp reductions, in the apache-tvm 0.27 printer's pre-lowering form over
# a 2-D grid whose ids are tuple-unpacked (v, v_1 = T.cta_id([2, 2])).  CTA (i, j) takes the
# 32 x 32 int32 block (i, j) of x; each of its 4 warps reduces 8 rows with redux.sync.max.s32
# over its lanes' column values, lane 0 keeps a running maximum and publishes the warp's
# result in shared memory; after a CTA barrier thread 0 combines the 4 values, stores the
# block maximum and folds it into the global maximum with atom.global.max.s32.

x_dim0 = TypeVar("x_dim0")
x_dim1 = TypeVar("x_dim1")
@T.prim_func
def redux_max_pre(x: T.Buffer((x_dim0, x_dim1), "int32"), blockmax: T.Buffer((2, 2), "int32"), gmax: T.Buffer((1,), "int32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v, v_1 = T.cta_id([2, 2])
    v_2 = T.warp_id([4])
    v_3 = T.lane_id([32])
    v_4 = T.thread_id([128])
    buffer = T.alloc_buffer((4,), "int32", scope="shared")
    buffer_1: T.int32 = -2147483648
    for v_5 in range(8):
        buffer_2: T.int32
        T.ptx.redux_sync(buffer_2, x[v * 32 + v_2 * 8 + v_5, v_1 * 32 + v_3], T.uint32(4294967295), "max", "", "", "s32", "")
        buffer_1 = T.max(buffer_1, buffer_2)
    if v_3 == 0:
        buffer[v_2] = buffer_1
    T.cuda.cta_sync()
    if v_4 == 0:
        buffer_3: T.int32 = T.max(T.max(buffer[0], buffer[1]), T.max(buffer[2], buffer[3]))
        blockmax[v, v_1] = buffer_3
        buffer_4: T.int32
        T.ptx.atom(buffer_4, T.address_of(gmax[0]), buffer_3, "", "", "global", "max", "", "s32", "")
