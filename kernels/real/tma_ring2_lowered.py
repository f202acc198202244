# from tvm.script import tirx as T

# The device function of a two-stage TMA ring as the apache-tvm 0.27 printer prints it after
# lowering: the host encodes the tensor map and passes it as a `T.TensorMap()` parameter
# (a __grid_constant__ CUtensorMap), the output arrives as a handle; the producer warp
# prefetches the map, then one elected lane arms full[s] with expect_tx and loads 8 x 32
# float32 tiles with an L2 cache hint; warp 1 polls full[s] with try_wait.parity, writes
# out = 2 * x + 1, fences its reads for the async proxy and releases the slot (warp_sync,
# lane 0 arrives on empty, count 1).  8 tiles, so both slots are reused and the parity flips.

@T.prim_func
def tma_ring2_lowered(x_map: T.TensorMap(), out_ptr: T.handle("float32", "global")):
    T.func_attr({"calling_conv": 2, "tirx.is_global_func": True, "tirx.kernel_launch_params": ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"], "tirx.noalias": True})
    out = T.decl_buffer((2048,), data=out_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 64)
        warp_id_in_cta: T.let[T.int32] = T.cuda.__shfl_sync(T.uint32(4294967295), threadIdx_x >> 5, 0, 32)
        v: T.let[T.int32] = warp_id_in_cta
        v_1: T.let[T.int32] = threadIdx_x & 31
        T.evaluate(warp_id_in_cta)
        T.evaluate(threadIdx_x & 31)
        buffer = T.alloc_buffer((2080,), "uint8", scope="shared.dyn", align=1024, layout=None)
        buffer_1 = T.decl_buffer((512,), data=buffer.data, scope="shared.dyn", align=1024, layout=None)
        buffer_2 = T.decl_buffer((4,), "uint64", data=buffer.data, elem_offset=256, scope="shared.dyn", align=8, layout=None)
        buffer_3 = T.alloc_local((1,), "int32", layout=None)
        buffer_3[0] = 0
        buffer_4 = T.alloc_local((1,), "int32", layout=None)
        buffer_5 = T.alloc_local((1,), "int32", layout=None)
        buffer_5[0] = 0
        buffer_6 = T.alloc_local((1,), "uint32", layout=None)
        if warp_id_in_cta == 0:
            T.ptx.prefetch(T.reinterpret(T.handle().ty, T.address_of(x_map)), "", "", "", "tensormap", "")
            buffer_7 = T.alloc_local((1,), "uint32", layout=None)
            buffer_8 = T.alloc_local((1,), "uint32", layout=None)
            T.ptx.elect_sync(buffer_7[0], buffer_8[0], T.uint32(4294967295), "")
            if buffer_8[0] == T.uint32(1):
                for v_2 in T.unroll(2):
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_2])), T.uint32(1), "init", "", "shared", "b64", "")
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_2 + 2])), T.uint32(1), "init", "", "shared", "b64", "")
                T.ptx.fence("mbarrier_init", "release", "cluster", "")
        T.cuda.cta_sync()
        if warp_id_in_cta == 0:
            buffer_4[0] = 1
            while buffer_5[0] < 8:
                T.cuda.mbarrier_wait(T.address_of(buffer_2[buffer_3[0] + 2]), buffer_4[0])
                buffer_7 = T.alloc_local((1,), "uint32", layout=None)
                buffer_8 = T.alloc_local((1,), "uint32", layout=None)
                T.ptx.elect_sync(buffer_7[0], buffer_8[0], T.uint32(4294967295), "")
                if buffer_8[0] == T.uint32(1):
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_3[0]])), T.uint32(1024), "arrive", "expect_tx", "", "", "shared", "b64", "")
                    T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[buffer_3[0] * 256])), T.reinterpret(T.handle().ty, T.address_of(x_map)), 0, buffer_5[0] * 8, T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_3[0]])), T.uint64(0), "async", "bulk", "tensor", "2d", "shared::cta", "global", "tile", "mbarrier::complete_tx::bytes", "", "L2::cache_hint", "")
                buffer_3[0] = buffer_3[0] + 1
                if buffer_3[0] == 2:
                    buffer_3[0] = 0
                    buffer_4[0] = T.bitwise_xor(buffer_4[0], 1)
                buffer_5[0] = buffer_5[0] + 1
        else:
            buffer_4[0] = 0
            while buffer_5[0] < 8:
                buffer_6[0] = T.uint32(0)
                while buffer_6[0] == T.uint32(0):
                    T.ptx.mbarrier(buffer_6[0], T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_3[0]])), T.Cast("uint32", buffer_4[0]), T.uint32(10000000), "try_wait", "parity", "", "acquire", "cta", "shared::cta", "b64", "")
                for v_2 in range(8):
                    out[buffer_5[0] * 256 + v_2 * 32 + (threadIdx_x & 31)] = buffer_1[buffer_3[0] * 256 + v_2 * 32 + (threadIdx_x & 31)] * T.float32(2.0) + T.float32(1.0)
                T.ptx.fence("proxy", "async", "shared::cta", "")
                T.cuda.warp_sync()
                if threadIdx_x & 31 == 0:
                    T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[buffer_3[0] + 2])), T.uint32(1), "arrive", "", "", "shared", "b64", "")
                buffer_3[0] = buffer_3[0] + 1
                if buffer_3[0] == 2:
                    buffer_3[0] = 0
                    buffer_4[0] = T.bitwise_xor(buffer_4[0], 1)
                buffer_5[0] = buffer_5[0] + 1
