# from typing import TypeVar
# from tvm.script import tirx as T

# Bug twin of warp_reduce_pre.py: the rows have x_dim1 columns, and the kernel guards its
# loads with `lane * 4 < x_dim1`, but the guard also encloses the shfl.sync butterfly, whose
# member mask names all 32 lanes.  With 96 columns lanes 24-31 never reach the shuffles:
# a warp collective executed by part of the warp it names (undefined in PTX; it hangs or
# reads garbage on hardware).

x_dim0 = TypeVar("x_dim0")
x_dim1 = TypeVar("x_dim1")
rowsum_dim0 = TypeVar("rowsum_dim0")
@T.prim_func
def warp_reduce_pre_divergent(x: T.Buffer((x_dim0, x_dim1), "int32"), rowsum: T.Buffer((rowsum_dim0,), "int32"), total: T.Buffer((1,), "int32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([2])
    v_1 = T.warp_id([4])
    v_2 = T.lane_id([32])
    buffer = T.alloc_local((4,), "int32")
    buffer_1: T.int32 = 0
    if v_2 * 4 < x_dim1:
        T.ptx.ld(buffer[0], buffer[1], buffer[2], buffer[3], T.address_of(x[v * 4 + v_1, v_2 * 4]), "", "", "global", "", "", "", "", "", "v4", "b32", "")
        for v_3 in T.unroll(4):
            buffer_1 = buffer_1 + buffer[v_3]
        buffer_2: T.int32
        for v_3 in T.unroll(5):
            T.ptx.shfl_sync(buffer_2, buffer_1, T.Cast("uint32", 16 >> v_3), T.uint32(31), T.uint32(4294967295), "bfly", "b32", "")
            buffer_1 = buffer_1 + buffer_2
    if v_2 == 0:
        rowsum[v * 4 + v_1] = buffer_1
        T.ptx.red(T.address_of(total[0]), buffer_1, "", "", "global", "add", "", "s32", "")
