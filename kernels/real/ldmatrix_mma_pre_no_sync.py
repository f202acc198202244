# from typing import TypeVar
# from tvm.script import tirx as T

# ldmatrix_mma_pre with its second CTA barrier removed: warp 0 loads A^T (ldmatrix.x4 of
# buffer_2) while warp 1 may still be writing it (stmatrix.x4), so the warp-collective shared
# read and write of the same rows are unordered -- a data race between warps; warp 0 may also
# read rows never written.

@T.prim_func
def ldmatrix_mma_pre_no_sync(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 8), "float16"), D: T.Buffer((16, 8), "float32"), dmax: T.Buffer((1,), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([1])
    v_1 = T.warp_id([2])
    v_2 = T.lane_id([32])
    v_3 = T.thread_id([64])
    buffer = T.alloc_buffer((16, 16), "float16", scope="shared")
    buffer_1 = T.alloc_buffer((16, 8), "float16", scope="shared")
    buffer_2 = T.alloc_buffer((16, 16), "float16", scope="shared")
    for v_4 in range(4):
        buffer[v_3 // 4, v_3 % 4 * 4 + v_4] = A[v_3 // 4, v_3 % 4 * 4 + v_4]
    for v_4 in range(2):
        buffer_1[v_3 // 4, v_3 % 4 * 2 + v_4] = B[v_3 // 4, v_3 % 4 * 2 + v_4]
    T.cuda.cta_sync()
    if v_1 == 1:
        buffer_3 = T.alloc_local((4,), "uint32")
        buffer_4 = T.alloc_local((4,), "uint32")
        T.ptx.ldmatrix(buffer_3[0], buffer_3[1], buffer_3[2], buffer_3[3], T.cuda.cvta_generic_to_shared(T.address_of(buffer[v_2 % 8 + v_2 // 8 % 2 * 8, v_2 // 16 * 8])), "sync", "aligned", "m8n8", "x4", "", "shared", "b16", "")
        for v_4 in range(4):
            T.ptx.movmatrix(buffer_4[v_4], buffer_3[v_4], "sync", "aligned", "m8n8", "trans", "b16", "")
        T.ptx.stmatrix(T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_2 % 8 + v_2 // 16 * 8, v_2 // 8 % 2 * 8])), buffer_4[0], buffer_4[1], buffer_4[2], buffer_4[3], "sync", "aligned", "m8n8", "x4", "", "shared", "b16", "")
    if v_1 == 0:
        buffer_3 = T.alloc_local((4,), "uint32")
        buffer_4 = T.alloc_local((2,), "uint32")
        buffer_5 = T.alloc_local((4,), "float32")
        T.ptx.ldmatrix(buffer_3[0], buffer_3[1], buffer_3[2], buffer_3[3], T.cuda.cvta_generic_to_shared(T.address_of(buffer_2[v_2 % 8 + v_2 // 8 % 2 * 8, v_2 // 16 * 8])), "sync", "aligned", "m8n8", "x4", "", "shared", "b16", "")
        T.ptx.ldmatrix(buffer_4[0], buffer_4[1], T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[v_2 % 16, 0])), "sync", "aligned", "m8n8", "x2", "trans", "shared", "b16", "")
        T.ptx.mma(buffer_5[0], buffer_5[1], buffer_5[2], buffer_5[3], buffer_3[0], buffer_3[1], buffer_3[2], buffer_3[3], buffer_4[0], buffer_4[1], T.float32(0.0), T.float32(0.0), T.float32(0.0), T.float32(0.0), "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32", "")
        D[v_2 // 4, v_2 % 4 * 2] = buffer_5[0]
        D[v_2 // 4, v_2 % 4 * 2 + 1] = buffer_5[1]
        D[v_2 // 4 + 8, v_2 % 4 * 2] = buffer_5[2]
        D[v_2 // 4 + 8, v_2 % 4 * 2 + 1] = buffer_5[3]
        buffer_6: T.float32 = T.max(T.max(buffer_5[0], buffer_5[1]), T.max(buffer_5[2], buffer_5[3]))
        buffer_7: T.float32
        T.ptx.redux_sync(buffer_7, buffer_6, T.uint32(4294967295), "max", "", "NaN", "f32", "")
        if v_2 == 0:
            dmax[0] = buffer_7
