# Fixed twin of kernels/wgmma_gemm_early_release.py: the consumer releases tile k's stage only after
# wgmma.wait_group 0 retired the tile's group (no group stays in flight across tiles, unlike
# kernels/wgmma_gemm.py, which keeps one and releases the previous stage).
from tvm_tirx.script import tirx as T

M = 128
N = 64
K = 256
BM = 64
BN = 64
BK = 64
STAGES = 2
K_TILES = K // BK
TILE_BYTES = (BM + BN) * BK * 2


@T.function
def wgmma_gemm_early_release_fixed(A: T.Tensor((M, K), T.bfloat16), B: T.Tensor((N, K), T.bfloat16), D: T.Tensor((M, N), T.float32)):
    # host: K-major BK x BM and BK x BN boxes, 128B swizzle (CU_TENSOR_MAP_SWIZZLE_128B = 3)
    tmap_a: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap_a, "bfloat16", 2, A.data, K, M, K * 2, BK, BM, 1, 1, 0, 3, 0, 0)
    tmap_b: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap_b, "bfloat16", 2, B.data, K, N, K * 2, BK, BN, 1, 1, 0, 3, 0, 0)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", N // BN) as bn:
            with T.launch_thread("blockIdx.y", M // BM) as bm:
                with T.launch_thread("threadIdx.x", 160) as tx:
                    a_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BM, BK), T.bfloat16, scope="shared", align=1024)])
                    b_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BN, BK), T.bfloat16, scope="shared", align=1024)])
                    full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    acc = T.alloc_tensor(ty_args=[T.Tensor((BN // 2,), T.float32, scope="local")])
                    warp: T.let[T.int32] = tx // 32
                    lane: T.let[T.int32] = tx % 32
                    if tx == 0:
                        for s in T.unroll(STAGES):
                            T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                            T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(4))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    T.cuda.cta_sync()
                    if warp == 4:
                        if T.cuda.elect_sync():
                            for k in range(K_TILES):
                                T.cuda.mbarrier_wait(empty.ptr_to([k % STAGES]), (k // STAGES + 1) % 2)
                                T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([k % STAGES]), T.uint32(TILE_BYTES))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](a_s.ptr_to([k % STAGES, 0, 0]), tmap_a, k * BK, bm * BM, full.ptr_to([k % STAGES]))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](b_s.ptr_to([k % STAGES, 0, 0]), tmap_b, k * BK, bn * BN, full.ptr_to([k % STAGES]))
                    else:
                        for k in range(K_TILES):
                            T.cuda.mbarrier_wait(full.ptr_to([k % STAGES]), (k // STAGES) % 2)
                            a_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([k % STAGES, 0, 0])))
                            b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([k % STAGES, 0, 0])))
                            # wgmma descriptors: start >> 4, LBO 16 B (unused), SBO 1024 B, layout 1 = 128B swizzle
                            a_desc: T.let[T.uint64] = (a_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(62)
                            b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(62)
                            T.ptx.wgmma.fence.sync.aligned()
                            for kk in T.unroll(BK // 16):
                                # K step of 16 bf16 = 32 bytes: start address + 32 >> 4; scale-d 0 starts the sum
                                T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"](acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7], acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15], acc[16], acc[17], acc[18], acc[19], acc[20], acc[21], acc[22], acc[23], acc[24], acc[25], acc[26], acc[27], acc[28], acc[29], acc[30], acc[31], a_desc + T.Cast("uint64", kk * 2), b_desc + T.Cast("uint64", kk * 2), k * 4 + kk > 0, 1, 1, 0, 0)
                            T.ptx.wgmma.commit_group.sync.aligned()
                            T.ptx.wgmma.wait_group.sync.aligned(0)
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared__cta.b64(empty.ptr_to([k % STAGES]))
                        T.ptx.wgmma.wait_group.sync.aligned(0)
                        for i in range(BN // 2):
                            D[bm * BM + warp * 16 + lane // 4 + 8 * (i // 2 % 2), bn * BN + 8 * (i // 4) + 2 * (lane % 4) + i % 2] = acc[i]
