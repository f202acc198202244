# from tvm.script import tirx as T

# Bug twin of tcgen05_mma_lowered.py: warp 0 frees the TMEM columns as soon as its own
# loads are done, without the final CTA barrier that waits for the other three warps.
# Their tcgen05.ld of the accumulator may run after the dealloc (reference bug B4b/B7:
# TMEM freed while another role still reads it).

@T.prim_func
def tcgen05_mma_lowered_early_dealloc(a_img_ptr: T.handle("uint32", "global"), b_img_ptr: T.handle("uint32", "global"), D_ptr: T.handle("float32", "global")):
    T.func_attr({"calling_conv": 2, "tirx.is_global_func": True, "tirx.kernel_launch_params": ["blockIdx.x", "threadIdx.x"], "tirx.noalias": True})
    D = T.decl_buffer((8192,), data=D_ptr, elem_offset=0, layout=None)
    b_img = T.decl_buffer((512,), "uint32", data=b_img_ptr, elem_offset=0, layout=None)
    a_img = T.decl_buffer((1024,), "uint32", data=a_img_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 128)
        warp_id_in_cta: T.let[T.int32] = T.cuda.__shfl_sync(T.uint32(4294967295), threadIdx_x >> 5, 0, 32)
        v: T.let[T.int32] = warp_id_in_cta
        v_1: T.let[T.int32] = threadIdx_x & 31
        T.evaluate(warp_id_in_cta)
        T.evaluate(threadIdx_x & 31)
        buffer = T.alloc_buffer((1024,), "uint32", scope="shared", align=1024, layout=None)
        buffer_1 = T.alloc_buffer((512,), "uint32", scope="shared", align=1024, layout=None)
        buffer_2 = T.alloc_buffer((1,), "uint64", scope="shared", align=8, layout=None)
        buffer_3 = T.alloc_buffer((1,), "uint32", scope="shared", align=4, layout=None)
        buffer_4 = T.alloc_local((16,), layout=None)
        if threadIdx_x == 0:
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), T.uint32(1), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
        if warp_id_in_cta == 0:
            T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[0])), T.uint32(64), "alloc", "cta_group::1", "sync", "aligned", "shared::cta", "b32", "")
            T.ptx.tcgen05("relinquish_alloc_permit", "cta_group::1", "sync", "aligned", "")
        for v_2 in range(8):
            buffer[v_2 * 128 + threadIdx_x] = a_img[v_2 * 128 + threadIdx_x]
        for v_2 in range(4):
            buffer_1[v_2 * 128 + threadIdx_x] = b_img[v_2 * 128 + threadIdx_x]
        T.ptx.fence("proxy", "async", "shared::cta", "")
        T.ptx.tcgen05("fence::before_thread_sync", "")
        T.cuda.cta_sync()
        T.ptx.tcgen05("fence::after_thread_sync", "")
        buffer_5: T.let[T.uint32] = buffer_3[0]
        if threadIdx_x == 0:
            buffer_6: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(T.address_of(buffer[0])))
            buffer_7: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0])))
            T.ptx.tcgen05(buffer_5, (buffer_6 & T.uint64(262143)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46), (buffer_7 & T.uint64(262143)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46), T.uint32(135267472), T.uint32(0), T.uint32(0), T.uint32(0), T.uint32(0), T.bool(False), "mma", "cta_group::1", "kind::f16", "", "p8")
            T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), "commit", "cta_group::1", "mbarrier::arrive::one", "shared::cluster", "b64", "")
        T.cuda.mbarrier_wait(T.address_of(buffer_2[0]), 0)
        T.ptx.tcgen05("fence::after_thread_sync", "")
        for v_2 in range(4):
            T.ptx.tcgen05(buffer_4[0], buffer_4[1], buffer_4[2], buffer_4[3], buffer_4[4], buffer_4[5], buffer_4[6], buffer_4[7], buffer_4[8], buffer_4[9], buffer_4[10], buffer_4[11], buffer_4[12], buffer_4[13], buffer_4[14], buffer_4[15], buffer_5 + T.Cast("uint32", warp_id_in_cta * 32 * 65536 + v_2 * 16), "ld", "sync", "aligned", "32x32b", "x16", "", "b32", "")
            T.ptx.tcgen05("wait::ld", "sync", "aligned", "")
            for v_3 in range(16):
                D[threadIdx_x * 64 + v_2 * 16 + v_3] = buffer_4[v_3]
        if warp_id_in_cta == 0:
            T.ptx.tcgen05(buffer_5, T.uint32(64), "dealloc", "cta_group::1", "sync", "aligned", "b32", "")
