# from tvm.script import tirx as T

# A row softmax in the apache-tvm 0.27 printer's lowered form, written the way lowering leaves a
# kernel whose shared memory is one dynamic pool: `alloc_buffer((0,), "uint8", scope="shared.dyn")`
# sized by the host's launch (`tirx.use_dyn_shared_memory` in the launch parameters), views on it
# whose offsets lowering folded into their indices (the row sum lives at `buffer_2[128]`, past the
# one-element view's extent but inside the pool), and the CUDA math library called as
# `T.call_pure_extern("float32", "expf", ...)`.  Per row: every thread stores expf(x) in the tile;
# thread 0 sums the tile; every thread divides.  Bug: the barrier between thread 0's sum and the
# division is missing (dyn_pool_softmax_lowered has it), so threads read the row sum at buffer_2[128]
# while thread 0 is still writing it: a data race.

@T.prim_func
def dyn_pool_softmax_lowered_race(x_ptr: T.handle("float32", "global"), out_ptr: T.handle("float32", "global")):
    T.func_attr({"calling_conv": 2, "tirx.is_global_func": True, "tirx.kernel_launch_params": ["blockIdx.x", "threadIdx.x", "tirx.use_dyn_shared_memory"], "tirx.noalias": True})
    out_dim0 = T.int64()
    out = T.decl_buffer((out_dim0 * T.int64(128),), data=out_ptr, elem_offset=0, layout=None)
    x_dim0 = T.int64()
    x = T.decl_buffer((x_dim0 * T.int64(128),), data=x_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 128)
        buffer = T.alloc_buffer((0,), "uint8", scope="shared.dyn", layout=None)
        buffer_1 = T.decl_buffer((128,), data=buffer.data, scope="shared.dyn", layout=None)
        buffer_2 = T.decl_buffer((1,), data=buffer.data, scope="shared.dyn", layout=None)
        buffer_3 = T.alloc_local((1,), "int32", layout=None)
        buffer_4 = T.alloc_local((1,), layout=None)
        buffer_3[0] = 0
        while T.Cast("int64", buffer_3[0]) < x_dim0:
            buffer_4[0] = T.call_pure_extern("float32", "expf", x[T.Cast("int64", buffer_3[0]) * T.int64(128) + T.Cast("int64", threadIdx_x)])
            buffer_1[threadIdx_x] = buffer_4[0]
            T.ptx.bar(T.uint32(0), T.uint32(128), "", "sync", "")
            if threadIdx_x == 0:
                buffer_2[128] = T.float32(0.0)
                for i in range(128):
                    buffer_2[128] = buffer_2[128] + buffer_1[i]
            out[T.Cast("int64", buffer_3[0]) * T.int64(128) + T.Cast("int64", threadIdx_x)] = buffer_4[0] / buffer_2[128]
            T.ptx.bar(T.uint32(0), T.uint32(128), "", "sync", "")
            buffer_3[0] = buffer_3[0] + 1
