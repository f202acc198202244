# Bug (the P buffer is overwritten while the MMA that reads it may still run; the shape of
# history bug B6, whose fix added a `pv_done` commit and wait): softmax writes P_j into
# `p_s` without first waiting for `pv_done`, the tcgen05.commit of PV_(j-1), which reads
# P_(j-1) from the same bytes through the async proxy.  The MMA warp waits `p_ready` only
# before PV_j, so nothing orders PV_(j-1)'s read before softmax's st.shared of P_j:
# Racecheck reports a `data_race` on `p_s` (classified as a missing generic->async proxy
# bridge, the first rule of the race classification order (docs/semantics.md#happens-before); the missing piece is the pv_done wait, after
# which the existing fence.proxy.async bridges the proxies).  The sync protocol stays consistent
# (the correction role still consumes every `pv_done` generation), so Synccheck is clean.
# Everything else is kernels/fa4_fwd.py, the fixed twin (its header describes the kernel).
from tvm_tirx.script import tirx as T

BM = 128
D = 64
BN = 64
NKV = 2
KV_STAGES = 2
Q_BYTES = BM * D * 2
KV_BYTES = BN * D * 2
S_COL = 0
O_COL = BN
TMEM_COLS = 128
CHUNK = 16
# kind::f16 instruction descriptors: fp32 D, bf16 A and B, M = BM; PV's B (V) is MN-major
IDESC_QK = 16 + 128 + 1024 + (BN // 8) * 131072 + (BM // 16) * 16777216
IDESC_PV = 16 + 128 + 1024 + 65536 + (D // 8) * 131072 + (BM // 16) * 16777216


@T.function
def fa4_fwd_p_overwrite(Q: T.Tensor((BM, D), T.bfloat16), K: T.Tensor((NKV * BN, D), T.bfloat16), V: T.Tensor((NKV * BN, D), T.bfloat16), O: T.Tensor((BM, D), T.float32)):
    # host: 128B-swizzled boxes, the whole Q tile and one BN-key tile of K or V
    tmap_q: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_q, Q.data, D, BM, D * 2, D, BM, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_k: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_k, K.data, D, NKV * BN, D * 2, D, BN, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_v: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_v, V.data, D, NKV * BN, D * 2, D, BN, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 320) as tx:
                q_s = T.alloc_tensor(ty_args=[T.Tensor((BM, D), T.bfloat16, scope="shared", align=1024)])
                kv_s = T.alloc_tensor(ty_args=[T.Tensor((KV_STAGES, BN, D), T.bfloat16, scope="shared", align=1024)])
                p_s = T.alloc_tensor(ty_args=[T.Tensor((BM, BN), T.bfloat16, scope="shared", align=1024)])
                scale_s = T.alloc_tensor(ty_args=[T.Tensor((BM,), T.float32, scope="shared")])
                q_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                kv_full = T.alloc_tensor(ty_args=[T.Tensor((KV_STAGES,), T.uint64, scope="shared")])
                kv_empty = T.alloc_tensor(ty_args=[T.Tensor((KV_STAGES,), T.uint64, scope="shared")])
                s_ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                p_ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                o_ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                pv_done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                corr_free = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                s_reg = T.alloc_tensor(ty_args=[T.Tensor((BN,), T.float32, scope="local")])
                o_reg = T.alloc_tensor(ty_args=[T.Tensor((D,), T.float32, scope="local")])
                m_run = T.local_scalar(T.float32)
                m_new = T.local_scalar(T.float32)
                l_run = T.local_scalar(T.float32)
                row_sum = T.local_scalar(T.float32)
                alpha = T.local_scalar(T.float32)
                warp: T.let[T.int32] = tx // 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(q_full.ptr_to([0]), T.uint32(1))
                    for s in T.unroll(KV_STAGES):
                        T.ptx.mbarrier.init.shared.b64(kv_full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(kv_empty.ptr_to([s]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(s_ready.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(p_ready.ptr_to([0]), T.uint32(128))
                    T.ptx.mbarrier.init.shared.b64(o_ready.ptr_to([0]), T.uint32(128))
                    T.ptx.mbarrier.init.shared.b64(pv_done.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(corr_free.ptr_to([0]), T.uint32(128))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(TMEM_COLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = tmem_slot[0]
                sm_scale: T.let[T.float32] = T.rsqrt(T.float32(D))
                if warp < 4:
                    # softmax: thread tx owns query row tx (TMEM lane tx)
                    m_run = T.float32(-1.0e30)
                    l_run = T.float32(0)
                    for j in range(NKV):
                        T.cuda.mbarrier_wait(s_ready.ptr_to([0]), j % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        for c in T.unroll(BN // CHUNK):
                            T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](s_reg[c * CHUNK + 0], s_reg[c * CHUNK + 1], s_reg[c * CHUNK + 2], s_reg[c * CHUNK + 3], s_reg[c * CHUNK + 4], s_reg[c * CHUNK + 5], s_reg[c * CHUNK + 6], s_reg[c * CHUNK + 7], s_reg[c * CHUNK + 8], s_reg[c * CHUNK + 9], s_reg[c * CHUNK + 10], s_reg[c * CHUNK + 11], s_reg[c * CHUNK + 12], s_reg[c * CHUNK + 13], s_reg[c * CHUNK + 14], s_reg[c * CHUNK + 15], taddr + T.Cast("uint32", warp * 32 * 65536 + S_COL + c * CHUNK))
                        T.ptx.tcgen05.wait__ld.sync.aligned()
                        m_new = m_run
                        for i in range(BN):
                            m_new = T.max(m_new, s_reg[i] * sm_scale)
                        if j > 0:
                            T.cuda.mbarrier_wait(corr_free.ptr_to([0]), (j - 1) % 2)
                        scale_s[tx] = T.exp(m_run - m_new)
                        T.ptx.bar.arrive(1, 256)
                        row_sum = T.float32(0)
                        for i in range(BN):
                            p: T.let[T.float32] = T.exp(s_reg[i] * sm_scale - m_new)
                            row_sum = row_sum + p
                            # row tx, key i: the 16-byte chunk i // 8 of the 128-byte row is XORed with tx % 8
                            p_s[tx, (i // 8 ^ tx % 8) * 8 + i % 8] = T.Cast("bfloat16", p)
                        l_run = l_run * T.exp(m_run - m_new) + row_sum
                        m_run = m_new
                        # make the generic stores of P visible to the MMA's async-proxy reads
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.ptx.mbarrier.arrive.shared.b64(p_ready.ptr_to([0]))
                    T.cuda.mbarrier_wait(corr_free.ptr_to([0]), (NKV - 1) % 2)
                    scale_s[tx] = l_run
                    T.ptx.bar.arrive(1, 256)
                elif warp < 8:
                    # correction: thread tx owns row tx - 128 of O (its warp's TMEM lane quarter)
                    row: T.let[T.int32] = tx - 128
                    for j in range(NKV):
                        T.ptx.bar.sync(1, 256)
                        alpha = scale_s[row]
                        T.ptx.mbarrier.arrive.shared.b64(corr_free.ptr_to([0]))
                        if j > 0:
                            T.cuda.mbarrier_wait(pv_done.ptr_to([0]), (j - 1) % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            for c in T.unroll(D // CHUNK):
                                T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](o_reg[c * CHUNK + 0], o_reg[c * CHUNK + 1], o_reg[c * CHUNK + 2], o_reg[c * CHUNK + 3], o_reg[c * CHUNK + 4], o_reg[c * CHUNK + 5], o_reg[c * CHUNK + 6], o_reg[c * CHUNK + 7], o_reg[c * CHUNK + 8], o_reg[c * CHUNK + 9], o_reg[c * CHUNK + 10], o_reg[c * CHUNK + 11], o_reg[c * CHUNK + 12], o_reg[c * CHUNK + 13], o_reg[c * CHUNK + 14], o_reg[c * CHUNK + 15], taddr + T.Cast("uint32", (warp - 4) * 32 * 65536 + O_COL + c * CHUNK))
                            T.ptx.tcgen05.wait__ld.sync.aligned()
                            for i in range(D):
                                o_reg[i] = o_reg[i] * alpha
                            for c in T.unroll(D // CHUNK):
                                T.ptx["tcgen05.st.sync.aligned.32x32b.x16.b32"](taddr + T.Cast("uint32", (warp - 4) * 32 * 65536 + O_COL + c * CHUNK), o_reg[c * CHUNK + 0], o_reg[c * CHUNK + 1], o_reg[c * CHUNK + 2], o_reg[c * CHUNK + 3], o_reg[c * CHUNK + 4], o_reg[c * CHUNK + 5], o_reg[c * CHUNK + 6], o_reg[c * CHUNK + 7], o_reg[c * CHUNK + 8], o_reg[c * CHUNK + 9], o_reg[c * CHUNK + 10], o_reg[c * CHUNK + 11], o_reg[c * CHUNK + 12], o_reg[c * CHUNK + 13], o_reg[c * CHUNK + 14], o_reg[c * CHUNK + 15])
                            T.ptx.tcgen05.wait__st.sync.aligned()
                            T.ptx.tcgen05.fence__before_thread_sync()
                        T.ptx.mbarrier.arrive.shared.b64(o_ready.ptr_to([0]))
                    T.ptx.bar.sync(1, 256)
                    alpha = T.float32(1) / scale_s[row]
                    T.cuda.mbarrier_wait(pv_done.ptr_to([0]), (NKV - 1) % 2)
                    T.ptx.tcgen05.fence__after_thread_sync()
                    for c in T.unroll(D // CHUNK):
                        T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](o_reg[c * CHUNK + 0], o_reg[c * CHUNK + 1], o_reg[c * CHUNK + 2], o_reg[c * CHUNK + 3], o_reg[c * CHUNK + 4], o_reg[c * CHUNK + 5], o_reg[c * CHUNK + 6], o_reg[c * CHUNK + 7], o_reg[c * CHUNK + 8], o_reg[c * CHUNK + 9], o_reg[c * CHUNK + 10], o_reg[c * CHUNK + 11], o_reg[c * CHUNK + 12], o_reg[c * CHUNK + 13], o_reg[c * CHUNK + 14], o_reg[c * CHUNK + 15], taddr + T.Cast("uint32", (warp - 4) * 32 * 65536 + O_COL + c * CHUNK))
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    for i in range(D):
                        O[row, i] = o_reg[i] * alpha
                elif warp == 8:
                    if T.cuda.elect_sync():
                        T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(q_full.ptr_to([0]), T.uint32(Q_BYTES))
                        T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](q_s.ptr_to([0, 0]), tmap_q, 0, 0, q_full.ptr_to([0]))
                        # K_0, V_0, K_1, V_1, ...: load i (K_j is load 2j, V_j load 2j + 1) goes to stage i % KV_STAGES
                        for j in range(NKV):
                            T.cuda.mbarrier_wait(kv_empty.ptr_to([2 * j % KV_STAGES]), (2 * j // KV_STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(kv_full.ptr_to([2 * j % KV_STAGES]), T.uint32(KV_BYTES))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](kv_s.ptr_to([2 * j % KV_STAGES, 0, 0]), tmap_k, 0, j * BN, kv_full.ptr_to([2 * j % KV_STAGES]))
                            T.cuda.mbarrier_wait(kv_empty.ptr_to([(2 * j + 1) % KV_STAGES]), ((2 * j + 1) // KV_STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(kv_full.ptr_to([(2 * j + 1) % KV_STAGES]), T.uint32(KV_BYTES))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](kv_s.ptr_to([(2 * j + 1) % KV_STAGES, 0, 0]), tmap_v, 0, j * BN, kv_full.ptr_to([(2 * j + 1) % KV_STAGES]))
                elif warp == 9:
                    if T.cuda.elect_sync():
                        T.cuda.mbarrier_wait(q_full.ptr_to([0]), 0)
                        q_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(q_s.ptr_to([0, 0])))
                        # smem descriptors: start >> 4, LBO 16 B (unused), SBO 1024 B (8 rows of 128 B), version 1, 128B swizzle
                        q_desc: T.let[T.uint64] = (q_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                        p_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(p_s.ptr_to([0, 0])))
                        p_desc: T.let[T.uint64] = (p_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                        # software pipelined: S_0 = Q K_0^T; for j = 1..NKV-1: S_j = Q K_j^T, then O += P_(j-1) V_(j-1); then PV_(NKV-1)
                        T.cuda.mbarrier_wait(kv_full.ptr_to([0]), 0)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        k0_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(kv_s.ptr_to([0, 0, 0])))
                        k0_desc: T.let[T.uint64] = (k0_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                        for kk in T.unroll(D // 16):
                            # K step of 16 bf16 = 32 bytes along the 128-byte rows
                            T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(S_COL), q_desc + T.Cast("uint64", kk * 2), k0_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC_QK), 0, 0, 0, 0, kk > 0)
                        T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(s_ready.ptr_to([0]))
                        T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(kv_empty.ptr_to([0]))
                        for j in range(1, NKV):
                            # softmax finished reading S_(j-1) and wrote P_(j-1)
                            T.cuda.mbarrier_wait(p_ready.ptr_to([0]), (j - 1) % 2)
                            T.cuda.mbarrier_wait(kv_full.ptr_to([2 * j % KV_STAGES]), 2 * j // KV_STAGES % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            k_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(kv_s.ptr_to([2 * j % KV_STAGES, 0, 0])))
                            k_desc: T.let[T.uint64] = (k_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            for kk in T.unroll(D // 16):
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(S_COL), q_desc + T.Cast("uint64", kk * 2), k_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC_QK), 0, 0, 0, 0, kk > 0)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(s_ready.ptr_to([0]))
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(kv_empty.ptr_to([2 * j % KV_STAGES]))
                            # correction rescaled O for tile j - 1; V_(j-1) is load 2j - 1
                            T.cuda.mbarrier_wait(o_ready.ptr_to([0]), (j - 1) % 2)
                            T.cuda.mbarrier_wait(kv_full.ptr_to([(2 * j - 1) % KV_STAGES]), (2 * j - 1) // KV_STAGES % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            v_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(kv_s.ptr_to([(2 * j - 1) % KV_STAGES, 0, 0])))
                            # V is MN-major for B (D contiguous per key): keys 128 B apart, SBO 1024 B per 8 keys
                            v_desc: T.let[T.uint64] = (v_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            for kk in T.unroll(BN // 16):
                                # A = P (16 keys = 32 bytes along its rows), B = V from key 16 kk (2048 bytes on)
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(O_COL), p_desc + T.Cast("uint64", kk * 2), v_desc + T.Cast("uint64", kk * 128), T.uint32(IDESC_PV), 0, 0, 0, 0, (j - 1) * (BN // 16) + kk > 0)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(kv_empty.ptr_to([(2 * j - 1) % KV_STAGES]))
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(pv_done.ptr_to([0]))
                        T.cuda.mbarrier_wait(p_ready.ptr_to([0]), (NKV - 1) % 2)
                        T.cuda.mbarrier_wait(o_ready.ptr_to([0]), (NKV - 1) % 2)
                        T.cuda.mbarrier_wait(kv_full.ptr_to([(2 * NKV - 1) % KV_STAGES]), (2 * NKV - 1) // KV_STAGES % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        vl_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(kv_s.ptr_to([(2 * NKV - 1) % KV_STAGES, 0, 0])))
                        vl_desc: T.let[T.uint64] = (vl_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                        for kk in T.unroll(BN // 16):
                            T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(O_COL), p_desc + T.Cast("uint64", kk * 2), vl_desc + T.Cast("uint64", kk * 128), T.uint32(IDESC_PV), 0, 0, 0, 0, (NKV - 1) * (BN // 16) + kk > 0)
                        T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(kv_empty.ptr_to([(2 * NKV - 1) % KV_STAGES]))
                        T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(pv_done.ptr_to([0]))
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(TMEM_COLS))
