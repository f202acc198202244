# from typing import TypeVar
# from tvm.script import tirx as T

# Bug twin of persistent_atomic_pre.py: the loop keeps only the CTA barrier that publishes
# the next tile.  Thread 0 fetches and stores the next tile into the shared slot while
# other threads may not yet have read the current one (they are still in this iteration's
# work, after the previous publish): a shared-memory race on the slot.  Threads that read
# different tiles disagree on when the loop ends, and those still in it wait forever at
# the CTA barrier the others have left.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def persistent_atomic_pre_no_sync(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32"), counter: T.Buffer((1,), "int32")):
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
        if v_3 == 0:
            buffer_1: T.int32
            T.ptx.atom(buffer_1, T.address_of(counter[0]), 1, "", "", "global", "add", "", "s32", "")
            buffer[0] = buffer_1
        T.cuda.cta_sync()
        buffer_2 = buffer[0]
