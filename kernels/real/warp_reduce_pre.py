# from typing import TypeVar
# from tvm.script import tirx as T

# Row sums with warp collectives, in the apache-tvm 0.27 printer's pre-lowering form: each
# of 4 warps of a CTA takes one row of 128 int32, every lane adds its 4 elements (ld.global
# into registers), a butterfly of shfl.sync.bfly.b32 (offsets 16, 8, 4, 2, 1) leaves the
# row sum in every lane, lane 0 stores it to rowsum and reduces it into total with
# red.global.add.s32.  Grid: one CTA per 4 rows.

x_dim0 = TypeVar("x_dim0")
rowsum_dim0 = TypeVar("rowsum_dim0")
@T.prim_func
def warp_reduce_pre(x: T.Buffer((x_dim0, 128), "int32"), rowsum: T.Buffer((rowsum_dim0,), "int32"), total: T.Buffer((1,), "int32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([2])
    v_1 = T.warp_id([4])
    v_2 = T.lane_id([32])
    buffer = T.alloc_local((4,), "int32")
    buffer_1: T.int32 = 0
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
