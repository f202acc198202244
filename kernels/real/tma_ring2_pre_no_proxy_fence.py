# from typing import TypeVar
# from tvm.script import tirx as T

# Bug twin of tma_ring2_pre.py: the consumer lanes release a slot on empty[s] right after
# their generic reads of it, without fence.proxy.async.shared::cta.  The next TMA load
# into the slot writes it through the async proxy, and nothing orders those generic reads
# before that async write (an mbarrier handoff orders the generic proxy only): the
# reference harness's Racecheck reports the read/TMA-write pair as a race.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def tma_ring2_pre_no_proxy_fence(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    v: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", v, "float32", 2, x.data, 32, x_dim0, 128, 32, 8, 1, 1, 0, 0, 2, 0)
    T.attr({"tirx.device_entry": T.bool(True)})
    v_1 = T.cta_id([1])
    v_2 = T.warp_id([2])
    v_3 = T.lane_id([32])
    buffer = T.alloc_buffer((2048,), "uint8", scope="shared.dyn", align=1024)
    buffer_1 = T.decl_buffer((2, 8, 32), "float32", data=buffer.data, scope="shared.dyn", align=1024)
    buffer_2 = T.alloc_buffer((4,), "uint64", scope="shared")
    if v_2 == 0:
        buffer_3: T.uint32
        buffer_4: T.uint32
        T.ptx.elect_sync(buffer_3, buffer_4, T.uint32(4294967295), "")
        if buffer_4 == T.uint32(1):
            for v_4 in T.unroll(2):
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_4])), T.uint32(1), "init", "", "shared", "b64", "")
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[2 + v_4])), T.uint32(32), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
    T.cuda.cta_sync()
    if v_2 == 0:
        buffer_5: T.int32 = 0
        buffer_6: T.int32 = 1
        buffer_7: T.int32 = 0
        while buffer_7 < x_dim0 // 8:
            T.cuda.mbarrier_wait(T.address_of(buffer_2[2 + buffer_5]), buffer_6)
            buffer_8: T.uint32
            buffer_9: T.uint32
            T.ptx.elect_sync(buffer_8, buffer_9, T.uint32(4294967295), "")
            if buffer_9 == T.uint32(1):
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_5])), T.uint32(1024), "arrive", "expect_tx", "", "", "shared", "b64", "")
                T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[buffer_5, 0, 0])), T.reinterpret(T.handle().ty, T.address_of(v)), 0, buffer_7 * 8, T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_5])), "async", "bulk", "tensor", "2d", "shared::cta", "global", "tile", "mbarrier::complete_tx::bytes", "", "", "", "")
            buffer_5 = buffer_5 + 1
            if buffer_5 == 2:
                buffer_5 = 0
                buffer_6 = buffer_6 ^ 1
            buffer_7 = buffer_7 + 1
    else:
        buffer_5: T.int32 = 0
        buffer_6: T.int32 = 0
        buffer_7: T.int32 = 0
        while buffer_7 < x_dim0 // 8:
            T.cuda.mbarrier_wait(T.address_of(buffer_2[buffer_5]), buffer_6)
            for v_4 in range(8):
                out[buffer_7 * 8 + v_4, v_3] = buffer_1[buffer_5, v_4, v_3] * T.float32(2.0) + T.float32(1.0)
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[2 + buffer_5])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
            buffer_5 = buffer_5 + 1
            if buffer_5 == 2:
                buffer_5 = 0
                buffer_6 = buffer_6 ^ 1
            buffer_7 = buffer_7 + 1
