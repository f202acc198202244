# from typing import TypeVar
# from tvm.script import tirx as T

# Bug twin of mbar_ring1_pre.py: the consumer's phase cursor starts at 1, the producer's
# convention copied to the wrong side.  On the fresh full barrier a wait for parity 1
# returns at once (the phase "before" phase 0 counts as completed), so the consumer reads
# the slot before the producer has written round 0, and from then on it runs one phase
# ahead of the data it is handed.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def mbar_ring1_pre_parity(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([1])
    v_1 = T.warp_id([2])
    v_2 = T.lane_id([32])
    buffer = T.alloc_buffer((32,), "float32", scope="shared")
    buffer_1 = T.alloc_buffer((2,), "uint64", scope="shared")
    if T.cuda.thread_rank() == 0:
        T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0])), T.uint32(1), "init", "", "shared", "b64", "")
        T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[1])), T.uint32(1), "init", "", "shared", "b64", "")
        T.ptx.fence("mbarrier_init", "release", "cluster", "")
    T.cuda.cta_sync()
    if v_1 == 0:
        buffer_2: T.int32 = 1
        buffer_3: T.int32 = 0
        while buffer_3 < x_dim0:
            T.cuda.mbarrier_wait(T.address_of(buffer_1[1]), buffer_2)
            buffer_4: T.float32
            T.ptx.ld(buffer_4, T.address_of(x[buffer_3, v_2]), "", "", "", "global", "", "", "", "", "", "f32", "")
            T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(buffer[v_2])), buffer_4, "", "", "", "shared", "", "", "", "f32", "")
            T.cuda.warp_sync()
            if v_2 == 0:
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
            buffer_2 = buffer_2 ^ 1
            buffer_3 = buffer_3 + 1
    else:
        buffer_2: T.int32 = 1
        buffer_3: T.int32 = 0
        while buffer_3 < x_dim0:
            T.cuda.mbarrier_wait(T.address_of(buffer_1[0]), buffer_2)
            buffer_4: T.float32
            T.ptx.ld(buffer_4, T.cuda.cvta_generic_to_shared(T.address_of(buffer[v_2])), "", "", "", "shared", "", "", "", "", "", "f32", "")
            T.ptx.st(T.address_of(out[buffer_3, v_2]), buffer_4 * T.float32(3.0), "", "", "", "global", "", "", "", "f32", "")
            T.cuda.warp_sync()
            if v_2 == 0:
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[1])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
            buffer_2 = buffer_2 ^ 1
            buffer_3 = buffer_3 + 1
