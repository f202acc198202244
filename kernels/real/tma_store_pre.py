# from typing import TypeVar
# from tvm.script import tirx as T

# A TMA-store epilogue in the apache-tvm 0.27 printer's pre-lowering form, with the
# synchronization the compiled tirx-kernels epilogues have: per round, the warpgroup's
# lanes write a 4 x 32 float32 tile with st.shared, fence it for the async proxy and meet
# at named barrier 1; one elected lane stores the tile through the host-encoded tensor map
# (cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group), commits and waits for the
# group's source reads (wait_group.read 0); the barrier after it releases the tile to the
# next round's st.shared, with no proxy fence between the completed read and those writes.
# out = x * 2 + round.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def tma_store_pre(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    v: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", v, "float32", 2, out.data, 32, out_dim0, 128, 32, 4, 1, 1, 0, 0, 2, 0)
    T.attr({"tirx.device_entry": T.bool(True)})
    v_1 = T.cta_id([1])
    v_2 = T.warp_id([4])
    v_3 = T.lane_id([32])
    buffer = T.alloc_buffer((4, 32), scope="shared", align=128)
    buffer_1: T.int32 = 0
    while buffer_1 < x_dim0 // 4:
        buffer_2: T.float32
        T.ptx.ld(buffer_2, T.address_of(x[buffer_1 * 4 + v_2, v_3]), "", "", "", "global", "", "", "", "", "", "f32", "")
        T.ptx.st(T.cuda.cvta_generic_to_shared(T.address_of(buffer[v_2, v_3])), buffer_2 * T.float32(2.0) + T.Cast("float32", buffer_1), "", "", "", "shared", "", "", "", "f32", "")
        T.ptx.fence("proxy", "async", "shared::cta", "")
        T.ptx.bar(T.uint32(1), T.uint32(128), "", "sync", "")
        if v_2 == 0:
            buffer_3: T.uint32
            buffer_4: T.uint32
            T.ptx.elect_sync(buffer_3, buffer_4, T.uint32(4294967295), "")
            if buffer_4 == T.uint32(1):
                T.ptx.cp(T.reinterpret(T.handle().ty, T.address_of(v)), 0, buffer_1 * 4, T.cuda.cvta_generic_to_shared(T.address_of(buffer[0, 0])), "async", "bulk", "tensor", "2d", "global", "shared::cta", "tile", "bulk_group", "", "")
                T.ptx.cp("async", "bulk", "commit_group", "")
                T.ptx.cp(0, "async", "bulk", "wait_group", "read", "")
        T.ptx.bar(T.uint32(1), T.uint32(128), "", "sync", "")
        buffer_1 = buffer_1 + 1
    if v_2 == 0:
        buffer_3: T.uint32
        buffer_4: T.uint32
        T.ptx.elect_sync(buffer_3, buffer_4, T.uint32(4294967295), "")
        if buffer_4 == T.uint32(1):
            T.ptx.cp(0, "async", "bulk", "wait_group", "")
