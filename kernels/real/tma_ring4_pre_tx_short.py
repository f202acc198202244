# from typing import TypeVar
# from tvm.script import tirx as T

# Bug twin of tma_ring4_pre.py: the producer arms full[s] with expect_tx for 512 bytes,
# half of the 8 x 32 float32 box (1024 bytes) the TMA load delivers (a byte count written
# for a 16-bit dtype).  The TMA's complete_tx overshoots the expected count: PTX leaves
# the barrier's phase undefined (tx-count underflow), and consumers may be released before
# the second half of the tile has landed.

x_dim0 = TypeVar("x_dim0")
out_dim0 = TypeVar("out_dim0")
@T.prim_func
def tma_ring4_pre_tx_short(x: T.Buffer((x_dim0, 32), "float32"), out: T.Buffer((out_dim0, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    v: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", v, "float32", 2, x.data, 32, x_dim0, 128, 32, 8, 1, 1, 0, 0, 2, 0)
    with T.attr({"tirx.device_entry": T.bool(True), "tirx.launch_bounds_min_blocks_per_sm": 1}):
        v_1 = T.cta_id([1])
        v_2 = T.warp_id([5])
        v_3 = T.lane_id([32])
        v_4 = T.thread_id([160])
        buffer = T.alloc_buffer((4160,), "uint8", scope="shared.dyn", align=1024)
        buffer_1 = T.decl_buffer((4, 8, 32), "float32", data=buffer.data, scope="shared.dyn", align=1024)
        buffer_2 = T.decl_buffer((4,), "uint64", data=buffer.data, elem_offset=512, scope="shared.dyn", align=8)
        buffer_3 = T.decl_buffer((4,), "uint64", data=buffer.data, elem_offset=516, scope="shared.dyn", align=8)
        if v_2 == 0:
            buffer_4: T.uint32
            buffer_5: T.uint32
            T.ptx.elect_sync(buffer_4, buffer_5, T.uint32(4294967295), "")
            if buffer_5 == T.uint32(1):
                for v_5 in T.unroll(4):
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_5])), T.uint32(1), "init", "", "shared", "b64", "")
                for v_5 in T.unroll(4):
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[v_5])), T.uint32(4), "init", "", "shared", "b64", "")
                T.ptx.fence("mbarrier_init", "release", "cluster", "")
        T.cuda.cta_sync()
        if v_2 == 0:
            buffer_4: T.int32 = 0
            buffer_5: T.int32 = 1
            buffer_6: T.int32 = 0
            while buffer_6 < x_dim0 // 8:
                T.cuda.mbarrier_wait(T.address_of(buffer_3[buffer_4]), buffer_5)
                buffer_7: T.uint32
                buffer_8: T.uint32
                T.ptx.elect_sync(buffer_7, buffer_8, T.uint32(4294967295), "")
                if buffer_8 == T.uint32(1):
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_4])), T.uint32(512), "arrive", "expect_tx", "", "", "shared", "b64", "")
                    T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[buffer_4, 0, 0])), T.reinterpret(T.handle().ty, T.address_of(v)), 0, buffer_6 * 8, T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_4])), "async", "bulk", "tensor", "2d", "shared::cta", "global", "tile", "mbarrier::complete_tx::bytes", "", "", "", "")
                buffer_4 = buffer_4 + 1
                if buffer_4 == 4:
                    buffer_4 = 0
                    buffer_5 = buffer_5 ^ 1
                buffer_6 = buffer_6 + 1
        else:
            buffer_4: T.int32 = 0
            buffer_5: T.int32 = 0
            buffer_6: T.int32 = 0
            while buffer_6 < x_dim0 // 8:
                buffer_7: T.uint32 = T.uint32(0)
                while buffer_7 == T.uint32(0):
                    T.ptx.mbarrier(buffer_7, T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_4])), T.Cast("uint32", buffer_5), T.uint32(10000000), "try_wait", "parity", "", "", "", "shared", "b64", "")
                for v_5 in range(2):
                    out[buffer_6 * 8 + (v_2 - 1) * 2 + v_5, v_3] = buffer_1[buffer_4, (v_2 - 1) * 2 + v_5, v_3] * T.float32(2.0) + T.float32(1.0)
                T.ptx.fence("proxy", "async", "shared::cta", "")
                T.cuda.warp_sync()
                if v_3 == 0:
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[buffer_4])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
                buffer_4 = buffer_4 + 1
                if buffer_4 == 4:
                    buffer_4 = 0
                    buffer_5 = buffer_5 ^ 1
                buffer_6 = buffer_6 + 1
