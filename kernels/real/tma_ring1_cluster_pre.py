# from typing import TypeVar
# from tvm.script import tirx as T

# A one-slot TMA ring whose load names the destination state space the way the real
# compiler prints it for a one-CTA cluster: cp.async.bulk.tensor.2d.shared::cluster.global
# with an L2 cache hint (on a cluster of one CTA, shared::cluster addresses are this CTA's
# shared memory, as for shared::cta).  Warp 0 (an elected lane) loads an 8 x 32 float32
# tile per round; warp 1 writes out = 2 * x + 1, fences its reads for the async proxy and
# releases the slot.  One slot: both cursors flip their phase every round.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def tma_ring1_cluster_pre(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    v: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", v, "float32", 2, x.data, 32, x_dim0, 128, 32, 8, 1, 1, 0, 0, 2, 0)
    T.attr({"tirx.device_entry": T.bool(True)})
    v_1 = T.cta_id([1])
    v_2 = T.warp_id([2])
    v_3 = T.lane_id([32])
    buffer = T.alloc_buffer((1024,), "uint8", scope="shared.dyn", align=1024)
    buffer_1 = T.decl_buffer((1, 8, 32), "float32", data=buffer.data, scope="shared.dyn", align=1024)
    buffer_2 = T.alloc_buffer((2,), "uint64", scope="shared")
    if v_2 == 0:
        buffer_3: T.uint32
        buffer_4: T.uint32
        T.ptx.elect_sync(buffer_3, buffer_4, T.uint32(4294967295), "")
        if buffer_4 == T.uint32(1):
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), T.uint32(1), "init", "", "shared", "b64", "")
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[1])), T.uint32(32), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
    T.cuda.cta_sync()
    if v_2 == 0:
        buffer_5: T.int32 = 1
        buffer_6: T.int32 = 0
        while buffer_6 < x_dim0 // 8:
            T.cuda.mbarrier_wait(T.address_of(buffer_2[1]), buffer_5)
            buffer_7: T.uint32
            buffer_8: T.uint32
            T.ptx.elect_sync(buffer_7, buffer_8, T.uint32(4294967295), "")
            if buffer_8 == T.uint32(1):
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), T.uint32(1024), "arrive", "expect_tx", "", "", "shared", "b64", "")
                T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0, 0, 0])), T.reinterpret(T.handle().ty, T.address_of(v)), 0, buffer_6 * 8, T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), T.uint64(0), "async", "bulk", "tensor", "2d", "shared::cluster", "global", "tile", "mbarrier::complete_tx::bytes", "", "", "L2::cache_hint", "")
            buffer_5 = buffer_5 ^ 1
            buffer_6 = buffer_6 + 1
    else:
        buffer_5: T.int32 = 0
        buffer_6: T.int32 = 0
        while buffer_6 < x_dim0 // 8:
            T.cuda.mbarrier_wait(T.address_of(buffer_2[0]), buffer_5)
            for v_4 in range(8):
                out[buffer_6 * 8 + v_4, v_3] = buffer_1[0, v_4, v_3] * T.float32(2.0) + T.float32(1.0)
            T.ptx.fence("proxy", "async", "shared::cta", "")
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[1])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
            buffer_5 = buffer_5 ^ 1
            buffer_6 = buffer_6 + 1
