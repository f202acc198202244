# from tvm.script import tirx as T

# Two warpgroups handing a shared tile back and forth through named barriers, in the
# apache-tvm 0.27 printer's lowered form (handle parameters with T.int64() dims, flat
# decl_buffer views, launch_thread, the warp id broadcast by __shfl_sync, one-element
# local buffers for loop state).  Per row: warpgroup 0 writes tile = x + 1 and signals
# with bar.arrive 1, 256; warpgroup 1 waits with bar.sync 1, 256, writes out = 2 * tile
# and hands the tile back with bar.arrive 2, 256, which warpgroup 0 waits for (bar.sync
# 2, 256) before it overwrites the tile for the next row.

@T.prim_func
def named_bar_wg_lowered(x_ptr: T.handle("float32", "global"), out_ptr: T.handle("float32", "global")):
    T.func_attr({"calling_conv": 2, "tirx.is_global_func": True, "tirx.kernel_launch_params": ["blockIdx.x", "threadIdx.x"], "tirx.noalias": True})
    out_dim0 = T.int64()
    out = T.decl_buffer((out_dim0 * T.int64(128),), data=out_ptr, elem_offset=0, layout=None)
    x_dim0 = T.int64()
    x = T.decl_buffer((x_dim0 * T.int64(128),), data=x_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 256)
        warp_id_in_cta: T.let[T.int32] = T.cuda.__shfl_sync(T.uint32(4294967295), threadIdx_x >> 5, 0, 32)
        v: T.let[T.int32] = blockIdx_x
        v_1: T.let[T.int32] = warp_id_in_cta
        v_2: T.let[T.int32] = threadIdx_x
        T.evaluate(blockIdx_x)
        T.evaluate(warp_id_in_cta)
        T.evaluate(threadIdx_x)
        buffer = T.alloc_buffer((128,), scope="shared", layout=None)
        buffer_1 = T.alloc_local((1,), "int32", layout=None)
        buffer_1[0] = 0
        if warp_id_in_cta < 4:
            while T.Cast("int64", buffer_1[0]) < x_dim0:
                if buffer_1[0] > 0:
                    T.ptx.bar(T.uint32(2), T.uint32(256), "", "sync", "")
                buffer[threadIdx_x] = x[T.Cast("int64", buffer_1[0]) * T.int64(128) + T.Cast("int64", threadIdx_x)] + T.float32(1.0)
                T.ptx.bar(T.uint32(1), T.uint32(256), "", "arrive", "")
                buffer_1[0] = buffer_1[0] + 1
        else:
            while T.Cast("int64", buffer_1[0]) < x_dim0:
                T.ptx.bar(T.uint32(1), T.uint32(256), "", "sync", "")
                out[T.Cast("int64", buffer_1[0]) * T.int64(128) + T.Cast("int64", threadIdx_x - 128)] = buffer[threadIdx_x - 128] * T.float32(2.0)
                if T.Cast("int64", buffer_1[0] + 1) < x_dim0:
                    T.ptx.bar(T.uint32(2), T.uint32(256), "", "arrive", "")
                buffer_1[0] = buffer_1[0] + 1
