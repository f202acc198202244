# from typing import TypeVar
# from tvm.script import tirx as T

# An fp8 tcgen05 MMA whose descriptors the kernel encodes itself, in the apache-tvm 0.27
# printer's pre-lowering form: D (128 x 64, fp32) = A . B^T with A (128 x 64) and B
# (64 x 64) float8_e4m3fn, K-major without swizzle (8-row x 16-byte core matrices, LBO
# 128 B, SBO 512 B).  The 128 threads copy the operands' shared images from global memory,
# fence them for the async proxy and meet at a CTA barrier; warp 0 has allocated 64 TMEM
# columns.  Thread 0 encodes the instruction descriptor (kind::f8f6f4, M 128, N 64, K 32)
# and, for each of the two K-steps, the shared-memory descriptors of A and B at that step
# (T.cuda.tcgen05.encode_matrix_descriptor: LBO and SBO in 16-byte units, swizzle 0), issues
# the MMA (the second accumulates) and commits both to an mbarrier.  Every warp waits for the
# commit, loads its 32 TMEM lanes and stores D; warp 0 frees the columns after a final barrier.
# apache-tvm 0.27 prints encode_instr_descriptor with positional fields (the corpus form, read by
# modelcheck too) but its parser takes them by keyword only, so this kernel spells them as keywords.
# The bug: the mbarrier wait before the loads is gone (a tcgen05 fence stands in its place), so
# the warps read D while the MMAs may still write it (Racecheck: data_race on TMEM).

@T.prim_func
def tcgen05_fp8_encode_pre_no_wait(a_img: T.Buffer((2048,), "uint32"), b_img: T.Buffer((1024,), "uint32"), D: T.Buffer((128, 64), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([1])
    v_1 = T.warp_id([4])
    v_2 = T.lane_id([32])
    v_3 = T.thread_id([128])
    buffer = T.alloc_buffer((2048,), "uint32", scope="shared", align=1024)
    buffer_1 = T.alloc_buffer((1024,), "uint32", scope="shared", align=1024)
    buffer_2 = T.alloc_buffer((1,), "uint64", scope="shared", align=8)
    buffer_3 = T.alloc_buffer((1,), "uint32", scope="shared", align=4)
    buffer_4 = T.alloc_local((16,))
    if v_3 == 0:
        T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), T.uint32(1), "init", "", "shared", "b64", "")
        T.ptx.fence("mbarrier_init", "release", "cluster", "")
    if v_1 == 0:
        T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(T.address_of(buffer_3[0])), T.uint32(64), "alloc", "cta_group::1", "sync", "aligned", "shared::cta", "b32", "")
        T.ptx.tcgen05("relinquish_alloc_permit", "cta_group::1", "sync", "aligned", "")
    for v_4 in range(16):
        buffer[v_4 * 128 + v_3] = a_img[v_4 * 128 + v_3]
    for v_4 in range(8):
        buffer_1[v_4 * 128 + v_3] = b_img[v_4 * 128 + v_3]
    T.ptx.fence("proxy", "async", "shared::cta", "")
    T.ptx.tcgen05("fence::before_thread_sync", "")
    T.cuda.cta_sync()
    T.ptx.tcgen05("fence::after_thread_sync", "")
    buffer_5: T.uint32 = buffer_3[0]
    if v_3 == 0:
        buffer_6: T.uint32
        T.cuda.tcgen05.encode_instr_descriptor(T.address_of(buffer_6), d_dtype="float32", a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", M=128, N=64, K=32, trans_a=T.bool(False), trans_b=T.bool(False), n_cta_groups=1, neg_a=T.bool(False), neg_b=T.bool(False), sat_d=T.bool(False), is_sparse=T.bool(False))
        buffer_7: T.uint64
        buffer_8: T.uint64
        for v_4 in range(2):
            T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(buffer_7), T.address_of(buffer[v_4 * 64]), 8, 32, 0)
            T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(buffer_8), T.address_of(buffer_1[v_4 * 64]), 8, 32, 0)
            T.ptx.tcgen05(buffer_5, buffer_7, buffer_8, buffer_6, T.uint32(0), T.uint32(0), T.uint32(0), T.uint32(0), T.Cast("uint32", v_4), "mma", "cta_group::1", "kind::f8f6f4", "", "p8")
        T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[0])), "commit", "cta_group::1", "mbarrier::arrive::one", "shared::cluster", "b64", "")
    T.ptx.tcgen05("fence::before_thread_sync", "")
    T.ptx.tcgen05("fence::after_thread_sync", "")
    for v_4 in range(4):
        T.ptx.tcgen05(buffer_4[0], buffer_4[1], buffer_4[2], buffer_4[3], buffer_4[4], buffer_4[5], buffer_4[6], buffer_4[7], buffer_4[8], buffer_4[9], buffer_4[10], buffer_4[11], buffer_4[12], buffer_4[13], buffer_4[14], buffer_4[15], buffer_5 + T.Cast("uint32", v_1 * 32 * 65536 + v_4 * 16), "ld", "sync", "aligned", "32x32b", "x16", "", "b32", "")
        T.ptx.tcgen05("wait::ld", "sync", "aligned", "")
        for v_5 in range(16):
            D[v_3, v_4 * 16 + v_5] = buffer_4[v_5]
    T.ptx.tcgen05("fence::before_thread_sync", "")
    T.cuda.cta_sync()
    if v_1 == 0:
        T.ptx.tcgen05("fence::after_thread_sync", "")
        T.ptx.tcgen05(buffer_5, T.uint32(64), "dealloc", "cta_group::1", "sync", "aligned", "b32", "")
