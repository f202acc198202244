# 2-CTA (cta_group::2) cluster GEMM with multicast TMA and a cluster-launch-control tile scheduler (issue 17,
# items 1, 2 and 5): D = A . B^T, A (M x K) and B (N x K) bf16 K-major, D (M x N) fp32.  A cluster of 4 CTAs is
# two CTA pairs (ranks 0-1 and 2-3); pair p computes the 256 x BN tile of columns p * BN of one 256-row block,
# so both pairs read the same A rows: the CTAs of pair 0 load them once, multicast to the same-parity CTA of
# pair 1 (`.multicast::cluster` with ctaMask (1 << r) | (1 << (r + 2))), as production 2-CTA GEMMs share an
# operand across the cluster.  NUM_CLUSTERS clusters are launched, one row block each, but a running cluster
# steals the blocks of clusters that have not started with clusterlaunchcontrol.try_cancel (NumSim runs one
# cluster at a time; Synccheck also runs every other answer of the requests).
# Per CTA (224 threads): warps 0-3 epilogue (TMEM -> registers -> D; warp 0 also allocates and frees the
# pair's TMEM), warp 4 TMA producer, warp 5 MMA issuer (even CTAs only), warp 6 CLC scheduler.
# Barriers:
#   full[s]{1}        in each pair's even CTA: the pair's loads of stage s complete on it (.cta_group::2: the
#                     multicast copies of A too, each on the even CTA of the pair it lands in)
#   empty[s]          in each CTA: the MMAs that read what its producer wrote into stage s finished: pair 0's
#                     CTAs write A into pair 1's CTAs too, so theirs counts both pairs' MMAs (2), pair 1's its
#                     own pair's (1); pair 0's MMA commits to pair 0, pair 1's to all 4 CTAs (a commit to a
#                     producer that does not wait for it could reach its next generation first)
#   tmem_full{1}      in each CTA: the accumulator holds a finished tile (commit multicast to the pair)
#   tmem_empty{256}   in each pair's even CTA: both CTAs' epilogue threads drained the accumulator
#   clc_full{1}       in each CTA: the CLC response landed (16 tx bytes, try_cancel multicast)
#   clc_empty{CLC_READERS} in CTA rank 0: every reader of the response is done with it
# Seeded bugs, multicast byte count off: TX_BUG = 1 (manifest gemm_2cta_clc_multicast_tx_short): pair 1's even
# CTA arms full[s] with the bytes of its own loads only, forgetting the multicast share of A pair 0 sends it;
# TX_BUG = 2 (gemm_2cta_clc_multicast_tx_long): pair 0's even CTA also counts the copies of A it sends to pair 1,
# which complete on pair 1's barrier, not its own.
# Other seeded bugs (each a manifest entry setting its constant): COMMIT_LOCAL = 1 (the tmem_full commit is not
# multicast: the odd CTA's epilogue hangs), EARLY_READ = 1 (the readers load the CLC response before waiting on
# clc_full: a race), NO_FINAL_SYNC = 1 (no cluster barrier before teardown).
from tvm_tirx.script import tirx as T

NUM_CLUSTERS = 3
K_TILES = 2
BN = 64
BK = 64
STAGES = 2
M = NUM_CLUSTERS * 256
N = 2 * BN
K = K_TILES * BK
A_BYTES = 128 * BK * 2
B_BYTES = (BN // 2) * BK * 2
CTA_BYTES = A_BYTES + B_BYTES
IDESC = 16 + 128 + 1024 + (BN // 8) * 131072 + (256 // 16) * 16777216
CLC_READERS = 4 * (128 + 32 + 32) + 2 * 32
CHUNK = 16
TX_BUG = 0
COMMIT_LOCAL = 0
EARLY_READ = 0
NO_FINAL_SYNC = 0


@T.function
def gemm_2cta_clc(A: T.Tensor((M, K), T.bfloat16), B: T.Tensor((N, K), T.bfloat16), D: T.Tensor((M, N), T.float32)):
    tmap_a: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_a, A.data, K, M, K * 2, BK, 128, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_b: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_b, B.data, K, N, K * 2, BK, BN // 2, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", NUM_CLUSTERS * 4) as bx:
            with T.launch_thread("clusterCtaIdx.x", 4) as cx:
                with T.launch_thread("threadIdx.x", 224) as tx:
                    a_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 128, BK), T.bfloat16, scope="shared", align=1024)])
                    b_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, BN // 2, BK), T.bfloat16, scope="shared", align=1024)])
                    full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                    tmem_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    tmem_empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    clc_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    clc_empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    clc_resp = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint32, scope="shared", align=16)])
                    tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                    acc = T.alloc_tensor(ty_args=[T.Tensor((BN,), T.float32, scope="local")])
                    remote = T.local_scalar(T.uint32)
                    resp = T.local_scalar(T.uint128)
                    canceled = T.local_scalar(T.uint32)
                    next_cta = T.local_scalar(T.uint32)
                    tile = T.local_scalar(T.int32)
                    it = T.local_scalar(T.int32)
                    stage = T.local_scalar(T.int32)
                    phase = T.local_scalar(T.int32)
                    warp: T.let[T.int32] = tx // 32
                    odd: T.let[T.int32] = cx % 2
                    even: T.let[T.int32] = cx - cx % 2
                    if tx == 0:
                        for s in T.unroll(STAGES):
                            T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                            T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(2 - cx // 2))
                        T.ptx.mbarrier.init.shared.b64(tmem_full.ptr_to([0]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(tmem_empty.ptr_to([0]), T.uint32(256))
                        T.ptx.mbarrier.init.shared.b64(clc_full.ptr_to([0]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(clc_empty.ptr_to([0]), T.uint32(CLC_READERS))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    if warp == 0:
                        T.ptx.tcgen05.alloc.cta_group__2.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(BN))
                        T.ptx.tcgen05.relinquish_alloc_permit.cta_group__2.sync.aligned()
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cluster_sync()
                    T.ptx.tcgen05.fence__after_thread_sync()
                    taddr: T.let[T.uint32] = tmem_slot[0]
                    tile = bx // 4
                    it = 0
                    stage = 0
                    phase = 0
                    while tile >= 0:
                        if warp == 6:
                            # the scheduler: CTA rank 0 asks for the next tile once every reader released the
                            # last response; each CTA expects the 16 bytes its copy of the response brings
                            if cx == 0:
                                T.cuda.mbarrier_wait(clc_empty.ptr_to([0]), (it + 1) % 2)
                                if T.cuda.elect_sync():
                                    T.ptx.clusterlaunchcontrol.try_cancel.async_.shared__cta.mbarrier__complete_tx__bytes.multicast__cluster__all.b128(clc_resp.ptr_to([0]), clc_full.ptr_to([0]))
                            if T.cuda.elect_sync():
                                T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(clc_full.ptr_to([0]), T.uint32(16))
                        elif warp == 4:
                            for k in range(K_TILES):
                                T.cuda.mbarrier_wait(empty.ptr_to([stage]), phase ^ 1)
                                if T.cuda.elect_sync():
                                    T.ptx.mapa.shared__cluster.u32(remote, T.Cast("uint32", T.cuda.cvta_generic_to_shared(full.ptr_to([stage]))), T.Cast("uint32", even))
                                    if odd == 0:
                                        # the pair's loads: A for both CTAs (own or multicast from pair 0), B halves
                                        if TX_BUG == 1 and cx == 2:
                                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([stage]), T.uint32(2 * B_BYTES))
                                        elif TX_BUG == 2 and cx == 0:
                                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([stage]), T.uint32(2 * CTA_BYTES + 2 * A_BYTES))
                                        else:
                                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([stage]), T.uint32(2 * CTA_BYTES))
                                    if cx < 2:
                                        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2.multicast::cluster"](a_s.ptr_to([stage, 0, 0]), tmap_a, k * BK, tile * 256 + odd * 128, remote, T.uint16(5 << cx))
                                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"](b_s.ptr_to([stage, 0, 0]), tmap_b, k * BK, (cx // 2) * BN + odd * (BN // 2), remote)
                                stage = stage + 1
                                if stage == STAGES:
                                    stage = 0
                                    phase = phase ^ 1
                        elif warp == 5:
                            if odd == 0:
                                T.cuda.mbarrier_wait(tmem_empty.ptr_to([0]), (it + 1) % 2)
                                T.ptx.tcgen05.fence__after_thread_sync()
                                for k in range(K_TILES):
                                    T.cuda.mbarrier_wait(full.ptr_to([stage]), phase)
                                    T.ptx.tcgen05.fence__after_thread_sync()
                                    if T.cuda.elect_sync():
                                        a_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([stage, 0, 0])))
                                        b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([stage, 0, 0])))
                                        a_desc: T.let[T.uint64] = (a_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                        b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                                        for kk in T.unroll(BK // 16):
                                            T.ptx.tcgen05.mma.cta_group__2.kind__f16(taddr, a_desc + T.Cast("uint64", kk * 2), b_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), k * 4 + kk > 0)
                                        T.ptx.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64(empty.ptr_to([stage]), T.uint16(3 + 12 * (cx // 2)))
                                    stage = stage + 1
                                    if stage == STAGES:
                                        stage = 0
                                        phase = phase ^ 1
                                if T.cuda.elect_sync():
                                    if COMMIT_LOCAL == 1:
                                        T.ptx.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster.b64(tmem_full.ptr_to([0]))
                                    else:
                                        T.ptx.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64(tmem_full.ptr_to([0]), T.uint16(3 << cx))
                        elif warp < 4:
                            T.cuda.mbarrier_wait(tmem_full.ptr_to([0]), it % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            for c in T.unroll(BN // CHUNK):
                                T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](acc[c * CHUNK + 0], acc[c * CHUNK + 1], acc[c * CHUNK + 2], acc[c * CHUNK + 3], acc[c * CHUNK + 4], acc[c * CHUNK + 5], acc[c * CHUNK + 6], acc[c * CHUNK + 7], acc[c * CHUNK + 8], acc[c * CHUNK + 9], acc[c * CHUNK + 10], acc[c * CHUNK + 11], acc[c * CHUNK + 12], acc[c * CHUNK + 13], acc[c * CHUNK + 14], acc[c * CHUNK + 15], taddr + T.Cast("uint32", warp * 32 * 65536 + c * CHUNK))
                            T.ptx.tcgen05.wait__ld.sync.aligned()
                            T.ptx.tcgen05.fence__before_thread_sync()
                            T.ptx.mapa.shared__cluster.u32(remote, T.Cast("uint32", T.cuda.cvta_generic_to_shared(tmem_empty.ptr_to([0]))), T.Cast("uint32", even))
                            T.ptx.mbarrier.arrive.shared__cluster.b64(remote)
                            for j in range(BN):
                                D[tile * 256 + odd * 128 + tx, (cx // 2) * BN + j] = acc[j]
                        # every reader: the next tile from the response, then release it to CTA rank 0
                        if warp != 5 or odd == 0:
                            if EARLY_READ == 1:
                                T.ptx.ld.shared.b128(resp, T.cuda.cvta_generic_to_shared(clc_resp.ptr_to([0])))
                                T.cuda.mbarrier_wait(clc_full.ptr_to([0]), it % 2)
                            else:
                                T.cuda.mbarrier_wait(clc_full.ptr_to([0]), it % 2)
                                T.ptx.ld.shared.b128(resp, T.cuda.cvta_generic_to_shared(clc_resp.ptr_to([0])))
                            T.ptx.clusterlaunchcontrol.query_cancel.is_canceled.pred.b128(canceled, resp)
                            next_cta = T.uint32(0xFFFFFFFF)
                            T.ptx.clusterlaunchcontrol.query_cancel.get_first_ctaid__x.b32.b128(next_cta, resp, pred=canceled != T.uint32(0))
                            T.ptx.fence.proxy.async_.shared__cta()
                            T.ptx.mapa.shared__cluster.u32(remote, T.Cast("uint32", T.cuda.cvta_generic_to_shared(clc_empty.ptr_to([0]))), T.uint32(0))
                            T.ptx.mbarrier.arrive.shared__cluster.b64(remote)
                            if next_cta == T.uint32(0xFFFFFFFF):
                                tile = -1
                            else:
                                tile = T.Cast("int32", next_cta // T.uint32(4))
                        else:
                            tile = -1
                        it = it + 1
                    # the odd CTA's last remote arrivals and the MMAs into its TMEM are done before either exits
                    if NO_FINAL_SYNC == 0:
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.cuda.cluster_sync()
                        T.ptx.tcgen05.fence__after_thread_sync()
                    if warp == 0:
                        T.ptx.tcgen05.dealloc.cta_group__2.sync.aligned.b32(taddr, T.uint32(BN))
