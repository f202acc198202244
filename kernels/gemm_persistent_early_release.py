# Persistent warp-specialized tcgen05 GEMM, reference K1 (textbook WS persistent GEMM):
# D = A . B^T with A (M x K) and B (N x K) bf16, K-major, D (M x N) fp32.  NUM_CTAS CTAs
# each walk TILES_PER_CTA output tiles of BM x BN (tile = bx + t * NUM_CTAS, row-major over
# TILES_M x TILES_N), K_TILES K steps of BK per tile.
# Roles (192 threads):
#   warps 0-3  epilogue warpgroup: TMEM -> registers (tcgen05.ld 32x32b) -> smem staging
#              tile -> TMA store (bulk group); warp 0 also allocates and frees TMEM
#   warp 4     TMA producer: the whole warp waits and keeps a PipelineState cursor
#              (stage, phase) starting at phase 1; an elected lane issues the loads
#   warp 5     MMA issuer: the same with its cursor at phase 0; an elected lane issues
#              the MMAs and the commits
# Barriers:
#   full[s]{1}         TMA A+B landed in stage s (arrive.expect_tx + complete_tx)
#   empty[s]{1}        the MMAs that read stage s finished (tcgen05.commit)
#   tmem_full[a]{1}    accumulator a (TMEM columns a*BN..) holds a finished tile (commit)
#   tmem_empty[a]{128} the epilogue drained accumulator a (every epilogue thread arrives
#                      after tcgen05.wait::ld and fence::before_thread_sync)
#   named barrier 1 (128 threads): the epilogue warpgroup's staging-tile handoffs around
#   the TMA store (store source free -> write -> fence.proxy.async -> store).
# The smem ring has STAGES stages and its cursors run on across tiles; the TMEM
# accumulator is double-buffered (ACC_STAGES = 2, a = t % 2, parity (t // 2) % 2; the MMA
# warp waits tmem_empty with the producer parity (t // 2 + 1) % 2).  Inputs come from
# kernels/inputs/gemm_persistent.py:gemm_persistent.
# BUG (twin: manifest entry gemm_persistent_early_release_fixed = gemm_persistent.py): the epilogue arrives on tmem_empty
# before tcgen05.wait::ld, so the MMA warp may start tile t + 2 in an accumulator whose
# loads for tile t are still in flight (reference bug B10: a TMEM region published after
# tcgen05.ld issue but before wait::ld).  Synchronization alone is in order.
from tvm_tirx.script import tirx as T

NUM_CTAS = 2
TILES_PER_CTA = 3
K_TILES = 2
BM = 128
BN = 64
BK = 64
STAGES = 3
ACC_STAGES = 2
TILES_N = 2
TILES_M = (TILES_PER_CTA * NUM_CTAS + TILES_N - 1) // TILES_N
M = TILES_M * BM
N = TILES_N * BN
K = K_TILES * BK
TILE_BYTES = (BM + BN) * BK * 2
IDESC = 16 + 128 + 1024 + (BN // 8) * 131072 + (BM // 16) * 16777216
CHUNK = 16
TMEM_COLS = ACC_STAGES * BN


@T.function
def gemm_persistent_early_release(A: T.Tensor((M, K), T.bfloat16), B: T.Tensor((N, K), T.bfloat16), D: T.Tensor((M, N), T.float32)):
    # host: K-major 128B-swizzled load boxes over A and B, an unswizzled BN x BM store box over D
    tmap_a: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_a, A.data, K, M, K * 2, BK, BM, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_b: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_b, B.data, K, N, K * 2, BK, BN, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_d: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_d, D.data, N, M, N * 4, BN, BM, 1, 1, descriptor_dtype="float32", rank=2)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", NUM_CTAS) as bx:
            with T.launch_thread("threadIdx.x", 192) as tx:
                a_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BM, BK), T.bfloat16, scope="shared", align=1024)])
                b_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BN, BK), T.bfloat16, scope="shared", align=1024)])
                d_s = T.alloc_tensor(ty_args=[T.Tensor((BM, BN), T.float32, scope="shared", align=1024)])
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tmem_full = T.alloc_tensor(ty_args=[T.Tensor((ACC_STAGES,), T.uint64, scope="shared")])
                tmem_empty = T.alloc_tensor(ty_args=[T.Tensor((ACC_STAGES,), T.uint64, scope="shared")])
                tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                acc = T.alloc_tensor(ty_args=[T.Tensor((BN,), T.float32, scope="local")])
                stage = T.local_scalar(T.int32)
                phase = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(1))
                    for s in T.unroll(ACC_STAGES):
                        T.ptx.mbarrier.init.shared.b64(tmem_full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(tmem_empty.ptr_to([s]), T.uint32(128))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(TMEM_COLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = tmem_slot[0]
                if warp == 4:
                    # the whole warp walks the ring (its cursor stays warp-uniform); one elected lane issues
                    stage = 0
                    phase = 1
                    for t in range(TILES_PER_CTA):
                        ptile: T.let[T.int32] = bx + t * NUM_CTAS
                        for k in range(K_TILES):
                            T.cuda.mbarrier_wait(empty.ptr_to([stage]), phase)
                            if T.cuda.elect_sync():
                                T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([stage]), T.uint32(TILE_BYTES))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](a_s.ptr_to([stage, 0, 0]), tmap_a, k * BK, ptile // TILES_N * BM, full.ptr_to([stage]))
                                T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](b_s.ptr_to([stage, 0, 0]), tmap_b, k * BK, ptile % TILES_N * BN, full.ptr_to([stage]))
                            stage = stage + 1
                            if stage == STAGES:
                                stage = 0
                                phase = phase ^ 1
                elif warp == 5:
                    stage = 0
                    phase = 0
                    for t in range(TILES_PER_CTA):
                        # accumulator t % 2 is free once the epilogue drained the tile two back
                        T.cuda.mbarrier_wait(tmem_empty.ptr_to([t % ACC_STAGES]), (t // ACC_STAGES + 1) % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        d_tmem: T.let[T.uint32] = taddr + T.Cast("uint32", t % ACC_STAGES * BN)
                        for k in range(K_TILES):
                            T.cuda.mbarrier_wait(full.ptr_to([stage]), phase)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            if T.cuda.elect_sync():
                                a_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([stage, 0, 0])))
                                b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([stage, 0, 0])))
                                # K-major, 128B swizzle: start >> 4, LBO 16 B (unused), SBO 1024 B (8 rows x 128 B), version 1
                                a_desc: T.let[T.uint64] = (a_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                for kk in T.unroll(BK // 16):
                                    T.ptx.tcgen05.mma.cta_group__1.kind__f16(d_tmem, a_desc + T.Cast("uint64", kk * 2), b_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, k * 4 + kk > 0)
                                # stage free once these MMAs finished reading it
                                T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(empty.ptr_to([stage]))
                            stage = stage + 1
                            if stage == STAGES:
                                stage = 0
                                phase = phase ^ 1
                        if T.cuda.elect_sync():
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(tmem_full.ptr_to([t % ACC_STAGES]))
                elif warp < 4:
                    for t in range(TILES_PER_CTA):
                        tile: T.let[T.int32] = bx + t * NUM_CTAS
                        T.cuda.mbarrier_wait(tmem_full.ptr_to([t % ACC_STAGES]), t // ACC_STAGES % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        for c in T.unroll(BN // CHUNK):
                            T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](acc[c * CHUNK + 0], acc[c * CHUNK + 1], acc[c * CHUNK + 2], acc[c * CHUNK + 3], acc[c * CHUNK + 4], acc[c * CHUNK + 5], acc[c * CHUNK + 6], acc[c * CHUNK + 7], acc[c * CHUNK + 8], acc[c * CHUNK + 9], acc[c * CHUNK + 10], acc[c * CHUNK + 11], acc[c * CHUNK + 12], acc[c * CHUNK + 13], acc[c * CHUNK + 14], acc[c * CHUNK + 15], taddr + T.Cast("uint32", warp * 32 * 65536 + t % ACC_STAGES * BN + c * CHUNK))
                        # BUG: the accumulator is released before its loads completed
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.ptx.mbarrier.arrive.shared.b64(tmem_empty.ptr_to([t % ACC_STAGES]))
                        T.ptx.tcgen05.wait__ld.sync.aligned()
                        # the staging tile is free once the previous TMA store finished reading it
                        if tx == 0:
                            T.ptx.cp.async_.bulk.wait_group.read(0)
                        T.ptx.bar.sync(1, 128)
                        # the store's smem reads were async-proxy accesses: bridge them to these generic writes
                        T.ptx.fence.proxy.async_.shared__cta()
                        for j in range(BN):
                            d_s[tx, j] = acc[j]
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.bar.sync(1, 128)
                        if tx == 0:
                            T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap_d, tile % TILES_N * BN, tile // TILES_N * BM, d_s.ptr_to([0, 0]))
                            T.ptx.cp.async_.bulk.commit_group()
                    if tx == 0:
                        T.ptx.cp.async_.bulk.wait_group(0)
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(TMEM_COLS))
