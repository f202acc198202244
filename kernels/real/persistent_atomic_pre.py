# from typing import TypeVar
# from tvm.script import tirx as T

# A persistent kernel with a dynamic tile scheduler, in the apache-tvm 0.27 printer's
# pre-lowering form: 2 CTAs of 128 threads loop `while tile < n_tiles`; thread 0 takes the
# next tile with atom.global.add.s32 on a global counter and publishes it through a shared
# slot.  The first CTA barrier of an iteration keeps thread 0 from overwriting the slot
# before every thread has read the current tile, the second publishes the new value.  A
# tile is 4 rows of 32 float32; out = 3 * x - 1.  The counter ends at n_tiles + 2 (each
# CTA fetches one tile past the end before it leaves).

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def persistent_atomic_pre(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32"), counter: T.Buffer((1,), "int32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([2])
    v_1 = T.warp_id([4])
    v_2 = T.lane_id([32])
    v_3 = T.thread_id([128])
    buffer = T.alloc_buffer((1,), "int32", scope="shared")
    if v_3 == 0:
        buffer_1: T.int32
        T.ptx.atom(buffer_1, T.address_of(counter[0]), 1, "", "", "global", "add", "", "s32", "")
        buffer[0] = buffer_1
    T.cuda.cta_sync()
    buffer_2: T.int32 = buffer[0]
    while buffer_2 < x_dim0 // 4:
        out[buffer_2 * 4 + v_1, v_2] = x[buffer_2 * 4 + v_1, v_2] * T.float32(3.0) - T.float32(1.0)
        T.cuda.cta_sync()
        if v_3 == 0:
            buffer_1: T.int32
            T.ptx.atom(buffer_1, T.address_of(counter[0]), 1, "", "", "global", "add", "", "s32", "")
            buffer[0] = buffer_1
        T.cuda.cta_sync()
        buffer_2 = buffer[0]
