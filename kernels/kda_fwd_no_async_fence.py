# Bug (b) of the KDA case study, on kernels/kda_fwd.py: the prep warps wait for the
# operand slot's release (`op_empty`, committed by the MMAs of chunk c - 2 that read the
# slot through the async proxy) and then overwrite it with generic st.shared, without a
# fence.proxy.async.shared::cta between: the MMA reads and the generic writes are ordered
# in time but not across proxies (a tcgen05.commit completion carries no proxy bridge).
# The fixed twin (manifest entry kda_fwd_no_async_fence_fixed) is kernels/kda_fwd.py
# itself at the same launch size, which fences after the waits.
from tvm_tirx.script import tirx as T

H = 1
SEQ_LEN = 128
CHUNK = 64
NC = SEQ_LEN // CHUNK
DK = 64
DV = 64
STAGES = 2             # raw (TMA) ring, operand ring and O accumulators
DVEC_STAGES = 3
LOOK = 2               # the decay-vector producer runs this many chunks ahead
M_O_STAGES = 2         # `m_o` barriers, indexed like the O accumulators
TILE_BYTES = CHUNK * DK * 2
A_COL = 0
O_COL = 64
S_COL = 192
TMEM_COLS = 256
PREP_NB = 1
STORE_NB = 2
IDESC = 16 + 128 + 1024 + (64 // 8) * 131072 + (64 // 16) * 16777216


@T.function
def kda_fwd_no_async_fence(q: T.Tensor((H * SEQ_LEN, DK), T.bfloat16), k: T.Tensor((H * SEQ_LEN, DK), T.bfloat16), v: T.Tensor((H * SEQ_LEN, DV), T.bfloat16), g: T.Tensor((H, SEQ_LEN, DK), T.float32), o: T.Tensor((H * SEQ_LEN, DV), T.bfloat16)):
    # host: 128B-swizzled CHUNK-row boxes over the token-major q, k, v and o
    tmap_q: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_q, q.data, DK, H * SEQ_LEN, DK * 2, DK, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_k: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_k, k.data, DK, H * SEQ_LEN, DK * 2, DK, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_v: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_v, v.data, DV, H * SEQ_LEN, DV * 2, DV, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    tmap_o: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_o, o.data, DV, H * SEQ_LEN, DV * 2, DV, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2, swizzle=3)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", H) as h:
            with T.launch_thread("threadIdx.x", 384) as tx:
                raw_q = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=1024)])
                raw_k = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=1024)])
                raw_v = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DV), T.bfloat16, scope="shared", align=1024)])
                op_q = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=1024)])
                op_k = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=1024)])
                op_kh = T.alloc_tensor(ty_args=[T.Tensor((STAGES, DK, CHUNK), T.bfloat16, scope="shared", align=1024)])
                op_vt = T.alloc_tensor(ty_args=[T.Tensor((STAGES, DV, CHUNK), T.bfloat16, scope="shared", align=1024)])
                p_s = T.alloc_tensor(ty_args=[T.Tensor((CHUNK, CHUNK), T.bfloat16, scope="shared", align=1024)])
                s_s = T.alloc_tensor(ty_args=[T.Tensor((DV, DK), T.bfloat16, scope="shared", align=1024)])
                o_s = T.alloc_tensor(ty_args=[T.Tensor((STAGES, CHUNK, DV), T.bfloat16, scope="shared", align=1024)])
                dvec = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES, DK), T.float32, scope="shared")])
                raw_full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                raw_empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                op_full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                op_empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                dvec_full = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES,), T.uint64, scope="shared")])
                dvec_empty = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES,), T.uint64, scope="shared")])
                a_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                p_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                state_ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                s_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                m_o = T.alloc_tensor(ty_args=[T.Tensor((M_O_STAGES,), T.uint64, scope="shared")])
                o_empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                acc = T.alloc_tensor(ty_args=[T.Tensor((2,), T.float32, scope="local")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((32,), T.float32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(raw_full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(raw_empty.ptr_to([s]), T.uint32(2))
                        T.ptx.mbarrier.init.shared.b64(op_full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(op_empty.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(o_empty.ptr_to([s]), T.uint32(4))
                    for s in T.unroll(DVEC_STAGES):
                        T.ptx.mbarrier.init.shared.b64(dvec_full.ptr_to([s]), T.uint32(2))
                        T.ptx.mbarrier.init.shared.b64(dvec_empty.ptr_to([s]), T.uint32(4))
                    for s in T.unroll(M_O_STAGES):
                        T.ptx.mbarrier.init.shared.b64(m_o.ptr_to([s]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(a_full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(p_full.ptr_to([0]), T.uint32(4))
                    T.ptx.mbarrier.init.shared.b64(state_ready.ptr_to([0]), T.uint32(4))
                    T.ptx.mbarrier.init.shared.b64(s_full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 2:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(TMEM_COLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = tmem_slot[0]
                if warp < 2:
                    d: T.let[T.int32] = tx
                    # decay vectors of the first LOOK chunks (fresh slots: the producer parity passes)
                    for j in range(LOOK):
                        if j < NC:
                            T.cuda.mbarrier_wait(dvec_empty.ptr_to([j % DVEC_STAGES]), (j // DVEC_STAGES + 1) % 2)
                            acc[0] = T.float32(0)
                            for t in range(CHUNK):
                                acc[0] = acc[0] + g[h, j * CHUNK + t, d]
                            dvec[j % DVEC_STAGES, d] = T.exp(acc[0])
                            T.cuda.warp_sync()
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared.b64(dvec_full.ptr_to([j % DVEC_STAGES]))
                    for c in range(NC):
                        s: T.let[T.int32] = c % STAGES
                        if c + LOOK < NC:
                            # wait for the slot's release before writing chunk c + LOOK's decay vector
                            T.cuda.mbarrier_wait(dvec_empty.ptr_to([(c + LOOK) % DVEC_STAGES]), ((c + LOOK) // DVEC_STAGES + 1) % 2)
                            acc[0] = T.float32(0)
                            for t in range(CHUNK):
                                acc[0] = acc[0] + g[h, (c + LOOK) * CHUNK + t, d]
                            dvec[(c + LOOK) % DVEC_STAGES, d] = T.exp(acc[0])
                            T.cuda.warp_sync()
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared.b64(dvec_full.ptr_to([(c + LOOK) % DVEC_STAGES]))
                        T.cuda.mbarrier_wait(raw_full.ptr_to([s]), (c // STAGES) % 2)
                        T.cuda.mbarrier_wait(op_empty.ptr_to([s]), (c // STAGES + 1) % 2)
                        acc[1] = T.float32(0)
                        for t in range(CHUNK):
                            acc[1] = acc[1] + g[h, c * CHUNK + t, d]
                        acc[0] = T.float32(0)
                        for t in range(CHUNK):
                            acc[0] = acc[0] + g[h, c * CHUNK + t, d]
                            qv: T.let[T.float32] = T.Cast("float32", raw_q[s, t, (d // 8 ^ t % 8) * 8 + d % 8])
                            kv: T.let[T.float32] = T.Cast("float32", raw_k[s, t, (d // 8 ^ t % 8) * 8 + d % 8])
                            op_q[s, t, (d // 8 ^ t % 8) * 8 + d % 8] = T.Cast("bfloat16", qv * T.exp(acc[0]))
                            op_k[s, t, (d // 8 ^ t % 8) * 8 + d % 8] = T.Cast("bfloat16", kv * T.exp(T.float32(0) - acc[0]))
                            op_kh[s, d, (t // 8 ^ d % 8) * 8 + t % 8] = T.Cast("bfloat16", kv * T.exp(acc[1] - acc[0]))
                            op_vt[s, d, (t // 8 ^ d % 8) * 8 + t % 8] = raw_v[s, t, (d // 8 ^ t % 8) * 8 + d % 8]
                        # generic writes of the operand tiles, generic reads of the raw slot -> async proxy
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(raw_empty.ptr_to([s]))
                        T.ptx.bar.sync(PREP_NB, 64)
                        if tx == 0:
                            T.ptx.mbarrier.arrive.shared.b64(op_full.ptr_to([s]))
                elif warp == 2:
                    if T.cuda.elect_sync():
                        for c in range(NC):
                            s: T.let[T.int32] = c % STAGES
                            T.cuda.mbarrier_wait(op_full.ptr_to([s]), (c // STAGES) % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            # smem descriptors: start >> 4, LBO 16 B (unused), SBO 1024 B, version 1, 128B swizzle
                            q_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(op_q.ptr_to([s, 0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            k_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(op_k.ptr_to([s, 0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            kh_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(op_kh.ptr_to([s, 0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            vt_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(op_vt.ptr_to([s, 0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            p_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(p_s.ptr_to([0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            s_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(s_s.ptr_to([0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(2) << T.uint64(61)
                            # A = q~ k~^T  (K step of 16 bf16 = 32 bytes: start address + 2)
                            for kk in T.unroll(DK // 16):
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(A_COL), q_desc + T.Cast("uint64", kk * 2), k_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, kk > 0)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(a_full.ptr_to([0]))
                            T.cuda.mbarrier_wait(o_empty.ptr_to([s]), (c // STAGES + 1) % 2)
                            T.cuda.mbarrier_wait(state_ready.ptr_to([0]), c % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            # O = q~ S (B = the state keepers' bf16 S^T) and S^T += v^T kh
                            for kk in T.unroll(DK // 16):
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.Cast("uint32", O_COL + s * DV), q_desc + T.Cast("uint64", kk * 2), s_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, kk > 0)
                            for kk in T.unroll(CHUNK // 16):
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.uint32(S_COL), vt_desc + T.Cast("uint64", kk * 2), kh_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, True)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(s_full.ptr_to([0]))
                            T.cuda.mbarrier_wait(p_full.ptr_to([0]), c % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            # O += P v  (B = v^T, K-major over tokens)
                            for kk in T.unroll(CHUNK // 16):
                                T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr + T.Cast("uint32", O_COL + s * DV), p_desc + T.Cast("uint64", kk * 2), vt_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, True)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(m_o.ptr_to([c % M_O_STAGES]))
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(op_empty.ptr_to([s]))
                elif warp == 3:
                    if T.cuda.elect_sync():
                        for c in range(NC):
                            s: T.let[T.int32] = c % STAGES
                            T.cuda.mbarrier_wait(raw_empty.ptr_to([s]), (c // STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(raw_full.ptr_to([s]), T.uint32(3 * TILE_BYTES))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](raw_q.ptr_to([s, 0, 0]), tmap_q, 0, h * SEQ_LEN + c * CHUNK, raw_full.ptr_to([s]))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](raw_k.ptr_to([s, 0, 0]), tmap_k, 0, h * SEQ_LEN + c * CHUNK, raw_full.ptr_to([s]))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](raw_v.ptr_to([s, 0, 0]), tmap_v, 0, h * SEQ_LEN + c * CHUNK, raw_full.ptr_to([s]))
                elif warp < 8:
                    # state keeper: TMEM lanes 32q..32q+15 hold rows 16q..16q+15; threads 16..31 the upper 32 columns
                    row: T.let[T.int32] = (warp % 4) * 16 + lane % 16
                    half: T.let[T.int32] = lane // 16
                    lbase: T.let[T.uint32] = taddr + T.Cast("uint32", (warp % 4) * 32 * 65536)
                    for c in range(NC):
                        if c > 0:
                            T.cuda.mbarrier_wait(s_full.ptr_to([0]), (c - 1) % 2)
                            T.ptx.tcgen05.fence__after_thread_sync()
                            T.ptx["tcgen05.ld.sync.aligned.16x32bx2.x32.b32"](reg[0], reg[1], reg[2], reg[3], reg[4], reg[5], reg[6], reg[7], reg[8], reg[9], reg[10], reg[11], reg[12], reg[13], reg[14], reg[15], reg[16], reg[17], reg[18], reg[19], reg[20], reg[21], reg[22], reg[23], reg[24], reg[25], reg[26], reg[27], reg[28], reg[29], reg[30], reg[31], lbase + T.uint32(S_COL), 32)
                            T.ptx.tcgen05.wait__ld.sync.aligned()
                            # the previous chunk's q~ S MMA read the bf16 state copy through the async proxy
                            T.ptx.fence.proxy.async_.shared__cta()
                        else:
                            for r in range(32):
                                reg[r] = T.float32(0)
                        for r in range(32):
                            s_s[row, ((half * 32 + r) // 8 ^ row % 8) * 8 + r % 8] = T.Cast("bfloat16", reg[r])
                        T.cuda.mbarrier_wait(dvec_full.ptr_to([c % DVEC_STAGES]), (c // DVEC_STAGES) % 2)
                        for r in range(32):
                            reg[r] = reg[r] * dvec[c % DVEC_STAGES, half * 32 + r]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(dvec_empty.ptr_to([c % DVEC_STAGES]))
                        T.ptx["tcgen05.st.sync.aligned.16x32bx2.x32.b32"](lbase + T.uint32(S_COL), 32, reg[0], reg[1], reg[2], reg[3], reg[4], reg[5], reg[6], reg[7], reg[8], reg[9], reg[10], reg[11], reg[12], reg[13], reg[14], reg[15], reg[16], reg[17], reg[18], reg[19], reg[20], reg[21], reg[22], reg[23], reg[24], reg[25], reg[26], reg[27], reg[28], reg[29], reg[30], reg[31])
                        T.ptx.tcgen05.wait__st.sync.aligned()
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(state_ready.ptr_to([0]))
                        # causal mask of A = q~ k~^T into P (bf16)
                        T.cuda.mbarrier_wait(a_full.ptr_to([0]), c % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        T.ptx["tcgen05.ld.sync.aligned.16x32bx2.x32.b32"](reg[0], reg[1], reg[2], reg[3], reg[4], reg[5], reg[6], reg[7], reg[8], reg[9], reg[10], reg[11], reg[12], reg[13], reg[14], reg[15], reg[16], reg[17], reg[18], reg[19], reg[20], reg[21], reg[22], reg[23], reg[24], reg[25], reg[26], reg[27], reg[28], reg[29], reg[30], reg[31], lbase + T.uint32(A_COL), 32)
                        T.ptx.tcgen05.wait__ld.sync.aligned()
                        # `a_full` also completes the previous chunk's P v MMA, which read P asynchronously
                        T.ptx.fence.proxy.async_.shared__cta()
                        for r in range(32):
                            p_s[row, ((half * 32 + r) // 8 ^ row % 8) * 8 + r % 8] = T.Cast("bfloat16", T.if_then_else(half * 32 + r <= row, reg[r], T.float32(0)))
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(p_full.ptr_to([0]))
                else:
                    # store: O of chunk c from TMEM slot c % 2 -> staging tile c % 2 -> TMA store
                    row: T.let[T.int32] = (warp % 4) * 16 + lane % 16
                    half: T.let[T.int32] = lane // 16
                    lbase: T.let[T.uint32] = taddr + T.Cast("uint32", (warp % 4) * 32 * 65536)
                    for c in range(NC):
                        s: T.let[T.int32] = c % STAGES
                        T.cuda.mbarrier_wait(m_o.ptr_to([c % M_O_STAGES]), (c // M_O_STAGES) % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        T.ptx["tcgen05.ld.sync.aligned.16x32bx2.x32.b32"](reg[0], reg[1], reg[2], reg[3], reg[4], reg[5], reg[6], reg[7], reg[8], reg[9], reg[10], reg[11], reg[12], reg[13], reg[14], reg[15], reg[16], reg[17], reg[18], reg[19], reg[20], reg[21], reg[22], reg[23], reg[24], reg[25], reg[26], reg[27], reg[28], reg[29], reg[30], reg[31], lbase + T.Cast("uint32", O_COL + s * DV), 32)
                        T.ptx.tcgen05.wait__ld.sync.aligned()
                        T.ptx.tcgen05.fence__before_thread_sync()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(o_empty.ptr_to([s]))
                        if tx == 256:
                            # the store of chunk c - 2 has finished reading staging tile s
                            T.ptx.cp.async_.bulk.wait_group.read(1)
                        T.ptx.bar.sync(STORE_NB, 128)
                        T.ptx.fence.proxy.async_.shared__cta()
                        for r in range(32):
                            o_s[s, row, ((half * 32 + r) // 8 ^ row % 8) * 8 + r % 8] = T.Cast("bfloat16", reg[r])
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.bar.sync(STORE_NB, 128)
                        if tx == 256:
                            T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap_o, 0, h * SEQ_LEN + c * CHUNK, o_s.ptr_to([s, 0, 0]))
                            T.ptx.cp.async_.bulk.commit_group()
                    if tx == 256:
                        T.ptx.cp.async_.bulk.wait_group(0)
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 2:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(TMEM_COLS))
