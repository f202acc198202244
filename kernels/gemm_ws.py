# Warp-specialized tcgen05 GEMM, the skeleton of reference K1: D = A . B^T with A (M x K)
# and B (N x K) in bf16, both K-major, and D (M x N) in fp32; one CTA per BM x BN tile.
# Warps 0-3 form the epilogue warpgroup (warp 0 also allocates and frees TMEM), warp 4
# is the TMA producer, warp 5 the MMA issuer.  A 2-stage ring of shared tiles: `full[s]`
# completes when both TMA loads of the stage landed (the producer arms it with
# arrive.expect_tx), `empty[s]` when the MMAs that read the stage finished (tcgen05.commit).
# K is walked in K_TILES tiles of BK = 64 (128 bytes of bf16: one 128B-swizzled row per tile
# row, 8-row groups 1024 bytes apart); a tile is BK / 16 MMAs of K = 16 into one TMEM
# accumulator of BN fp32 columns.  After the last tile the MMA warp commits to `mma_done`;
# the epilogue waits for it and reads its 32 TMEM lanes with tcgen05.ld 32x32b.x16, 16
# columns at a time.  Inputs come from kernels/inputs/gemm.py:gemm_ws.
from tvm_tirx.script import tirx as T

M = 128
N = 128
K = 512
BM = 128
BN = 128
BK = 64
STAGES = 2
K_TILES = K // BK
TILE_BYTES = (BM + BN) * BK * 2
IDESC = 16 + 128 + 1024 + (BN // 8) * 131072 + (BM // 16) * 16777216
CHUNK = 16


@T.function
def gemm_ws(A: T.Tensor((M, K), T.bfloat16), B: T.Tensor((N, K), T.bfloat16), D: T.Tensor((M, N), T.float32)):
    # host: K-major BK x BM and BK x BN boxes, 128B swizzle (CU_TENSOR_MAP_SWIZZLE_128B = 3)
    tmap_a: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap_a, "bfloat16", 2, A.data, K, M, K * 2, BK, BM, 1, 1, 0, 3, 0, 0)
    tmap_b: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", tmap_b, "bfloat16", 2, B.data, K, N, K * 2, BK, BN, 1, 1, 0, 3, 0, 0)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", N // BN) as bn:
            with T.launch_thread("blockIdx.y", M // BM) as bm:
                with T.launch_thread("threadIdx.x", 192) as tx:
                    a_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BM, BK), T.bfloat16, scope="shared", align=1024)])
                    b_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BN, BK), T.bfloat16, scope="shared", align=1024)])
                    full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    mma_done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                    acc = T.alloc_tensor(ty_args=[T.Tensor((CHUNK,), T.float32, scope="local")])
                    warp: T.let[T.int32] = tx // 32
                    lane: T.let[T.int32] = tx % 32
                    if tx == 0:
                        for s in T.unroll(STAGES):
                            T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                            T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(mma_done.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    if warp == 0:
                        T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(BN))
                        T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cta_sync()
                    T.ptx.tcgen05.fence__after_thread_sync()
                    taddr: T.let[T.uint32] = tmem_slot[0]
                    if warp == 4:
                        if T.cuda.elect_sync():
                            for k in range(K_TILES):
                                T.cuda.mbarrier_wait(empty.ptr_to([k % STAGES]), (k // STAGES + 1) % 2)
                                T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([k % STAGES]), T.uint32(TILE_BYTES))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](a_s.ptr_to([k % STAGES, 0, 0]), tmap_a, k * BK, bm * BM, full.ptr_to([k % STAGES]))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](b_s.ptr_to([k % STAGES, 0, 0]), tmap_b, k * BK, bn * BN, full.ptr_to([k % STAGES]))
                    elif warp == 5:
                        if T.cuda.elect_sync():
                            for k in range(K_TILES):
                                T.cuda.mbarrier_wait(full.ptr_to([k % STAGES]), (k // STAGES) % 2)
                                T.ptx.tcgen05.fence__after_thread_sync()
                                a_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([k % STAGES, 0, 0])))
                                b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([k % STAGES, 0, 0])))
                                # smem descriptors: start >> 4, LBO 16 B (unused), SBO 1024 B, version 1, 128B swizzle
                                a_desc: T.let[T.uint64] = (a_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                for kk in T.unroll(BK // 16):
                                    # K step of 16 bf16 = 32 bytes: start address + 32 >> 4
                                    T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr, a_desc + T.Cast("uint64", kk * 2), b_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, k * 4 + kk > 0)
                                T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(empty.ptr_to([k % STAGES]))
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(mma_done.ptr_to([0]))
                    else:
                        T.cuda.mbarrier_wait(mma_done.ptr_to([0]), 0)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        for c in range(BN // CHUNK):
                            T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7], acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15], taddr + T.Cast("uint32", warp * 32 * 65536 + c * CHUNK))
                            T.ptx.tcgen05.wait__ld.sync.aligned()
                            for j in range(CHUNK):
                                D[bm * BM + warp * 32 + lane, bn * BN + c * CHUNK + j] = acc[j]
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cta_sync()
                    if warp == 0:
                        T.ptx.tcgen05.fence__after_thread_sync()
                        T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(BN))
