# from tvm.script import tirx as T

# A two-stage mbarrier ring in the apache-tvm 0.27 printer's lowered form: handle
# parameters with T.int64() dims and flat decl_buffer views, shared barriers carved out of
# one dynamic pool (decl_buffer(data=pool.data, elem_offset=...)), ring cursors in
# one-element local buffers and waits spelled as mbarrier.try_wait.parity polling loops.
# Warp 0 writes row r of x + 0.5 into slot r % 2 (generic st.shared), joins and arrives
# on full; warp 1 reads the slot, writes out = slot * slot and arrives on empty.  The
# producer waits on empty before it rewrites a slot (its cursor starts at phase 1).

@T.prim_func
def mbar_ring2_lowered(x_ptr: T.handle("float32", "global"), out_ptr: T.handle("float32", "global")):
    T.func_attr({"calling_conv": 2, "tirx.is_global_func": True, "tirx.kernel_launch_params": ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"], "tirx.noalias": True})
    out_dim0 = T.int64()
    out = T.decl_buffer((out_dim0 * T.int64(32),), data=out_ptr, elem_offset=0, layout=None)
    x_dim0 = T.int64()
    x = T.decl_buffer((x_dim0 * T.int64(32),), data=x_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 64)
        warp_id_in_cta: T.let[T.int32] = T.cuda.__shfl_sync(T.uint32(4294967295), threadIdx_x >> 5, 0, 32)
        v: T.let[T.int32] = warp_id_in_cta
        v_1: T.let[T.int32] = threadIdx_x & 31
        T.evaluate(warp_id_in_cta)
        T.evaluate(threadIdx_x & 31)
        buffer = T.alloc_buffer((288,), "uint8", scope="shared.dyn", align=1024, layout=None)
        buffer_1 = T.decl_buffer((2, 32), data=buffer.data, scope="shared.dyn", align=1024, layout=None)
        buffer_2 = T.decl_buffer((2,), "uint64", data=buffer.data, elem_offset=32, scope="shared.dyn", align=8, layout=None)
        buffer_3 = T.decl_buffer((2,), "uint64", data=buffer.data, elem_offset=34, scope="shared.dyn", align=8, layout=None)
        buffer_4 = T.alloc_local((1,), "int32", layout=None)
        buffer_4[0] = 0
        buffer_5 = T.alloc_local((1,), "int32", layout=None)
        buffer_6 = T.alloc_local((1,), "int32", layout=None)
        buffer_6[0] = 0
        buffer_7 = T.alloc_local((1,), "uint32", layout=None)
        if threadIdx_x == 0:
            for v_2 in T.unroll(2):
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_2])), T.uint32(1), "init", "", "shared", "b64", "")
                T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[v_2])), T.uint32(1), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
        T.cuda.cta_sync()
        if warp_id_in_cta == 0:
            buffer_5[0] = 1
            while T.Cast("int64", buffer_6[0]) < x_dim0:
                buffer_7[0] = T.uint32(0)
                while buffer_7[0] == T.uint32(0):
                    T.ptx.mbarrier(buffer_7[0], T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[buffer_4[0]])), T.Cast("uint32", buffer_5[0]), T.uint32(10000000), "try_wait", "parity", "", "", "", "shared", "b64", "")
                buffer_1[buffer_4[0], threadIdx_x & 31] = x[T.Cast("int64", buffer_6[0]) * T.int64(32) + T.Cast("int64", threadIdx_x & 31)] + T.float32(0.5)
                T.cuda.warp_sync()
                if threadIdx_x & 31 == 0:
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_4[0]])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
                buffer_4[0] = buffer_4[0] + 1
                if buffer_4[0] == 2:
                    buffer_4[0] = 0
                    buffer_5[0] = T.bitwise_xor(buffer_5[0], 1)
                buffer_6[0] = buffer_6[0] + 1
        else:
            buffer_5[0] = 0
            while T.Cast("int64", buffer_6[0]) < x_dim0:
                buffer_7[0] = T.uint32(0)
                while buffer_7[0] == T.uint32(0):
                    T.ptx.mbarrier(buffer_7[0], T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_4[0]])), T.Cast("uint32", buffer_5[0]), T.uint32(10000000), "try_wait", "parity", "", "", "", "shared", "b64", "")
                out[T.Cast("int64", buffer_6[0]) * T.int64(32) + T.Cast("int64", threadIdx_x & 31)] = buffer_1[buffer_4[0], threadIdx_x & 31] * buffer_1[buffer_4[0], threadIdx_x & 31]
                T.cuda.warp_sync()
                if threadIdx_x & 31 == 0:
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[buffer_4[0]])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
                buffer_4[0] = buffer_4[0] + 1
                if buffer_4[0] == 2:
                    buffer_4[0] = 0
                    buffer_5[0] = T.bitwise_xor(buffer_5[0], 1)
                buffer_6[0] = buffer_6[0] + 1
