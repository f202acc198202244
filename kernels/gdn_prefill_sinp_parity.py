# Gated DeltaNet (GDN) prefill slice, the state_input ring of reference K6 on small tiles.
# Per head h (one CTA), token t, key row r, value column j, state S (DK x DV, fp32):
#     S_t = a_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T,   o_t = S_t^T q_t,
# a_t = exp(g_t).  Chunked over CHUNK tokens with G_i = g_0 + ... + g_i inside the chunk and
# S0 the state before it:
#     u_i = beta_i (v_i - e^{G_i} S0^T k_i - sum_{l<i} e^{G_i - G_l} (k_i . k_l) u_l)
#     o_i = e^{G_i} S0^T q_i + sum_{l<=i} e^{G_i - G_l} (q_i . k_l) u_l
#     S'  = e^{G_last} S0 + sum_l e^{G_last - G_l} k_l u_l^T
# Roles (96 threads):
#   warp 0  TMA loader: q, k, v chunk tiles into the IN_STAGES-slot input ring (`in_full`
#           armed by arrive.expect_tx from an elected lane, `in_empty` released by both
#           consumers: 64 arrivals, each after a fence.proxy.async, since the next TMA
#           into the slot is an async-proxy write after their generic reads).
#   warp 1  state keeper (lane = key row r // 2, eight value columns): publishes S0 of
#           every chunk through the SINP_STAGES-slot state_input ring (`sinp_empty` wait
#           with the producer parity, fp32 stores, 32 arrivals on `sinp_full`); after
#           `u_full` folds the chunk's new values into S.
#   warp 2  chunk compute (lane = token of the chunk; stands in for K6's MMA warp and
#           CG0): after `in_full` and `sinp_full`, K S0 and Q S0 from the state_input
#           slot, then releases it (`sinp_empty`); the triangular solve for u and the
#           outputs by lane shuffles; u and the decays go to the keeper through the
#           one-slot u ring (`u_empty` / `u_full`); o through a staging tile and a TMA
#           store (bulk group; the tile is rewritten after wait_group.read 0).
# Every ring cursor is arithmetic in the chunk counter: slot c % D, consumer parity
# (c // D) % 2, producer parity (c // D + 1) % 2.  The input ring has one slot (the chunk
# recurrence serializes the chunks anyway; with two, `modelcheck prove` times out in its
# invariant search), the state_input ring two.  Inputs and the token-by-token numpy
# reference come from kernels/inputs/gdn.py.
# BUG (twin of gdn_prefill.py): the compute warp waits `sinp_full` with the producer's
# parity (c // SINP_STAGES + 1) % 2.  The first pass over each slot waits for the parity
# the freshly initialized barrier already shows, so K S0 and Q S0 read a state_input slot
# the keeper has not written (or is writing) - the consumer side of B4/B10's state_input
# ring defects.
from tvm_tirx.script import tirx as T

H = 1
NUM_CHUNKS = 4
CHUNK = 32
SEQ_LEN = NUM_CHUNKS * CHUNK
DK = 16
DV = 16
IN_STAGES = 1
SINP_STAGES = 2
IN_BYTES = 3 * CHUNK * DK * 2


@T.function
def gdn_prefill_sinp_parity(q: T.Tensor((H * SEQ_LEN, DK), T.bfloat16), k: T.Tensor((H * SEQ_LEN, DK), T.bfloat16), v: T.Tensor((H * SEQ_LEN, DV), T.bfloat16), g: T.Tensor((H * SEQ_LEN,), T.float32), beta: T.Tensor((H * SEQ_LEN,), T.float32), o: T.Tensor((H * SEQ_LEN, DV), T.float32)):
    # host: unswizzled CHUNK-row boxes over the token-major q, k, v and o
    tmap_q: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_q, q.data, DK, H * SEQ_LEN, DK * 2, DK, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2)
    tmap_k: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_k, k.data, DK, H * SEQ_LEN, DK * 2, DK, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2)
    tmap_v: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_v, v.data, DV, H * SEQ_LEN, DV * 2, DV, CHUNK, 1, 1, descriptor_dtype="bfloat16", rank=2)
    tmap_o: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)
    T.cuda.tensormap_encode_tiled(tmap_o, o.data, DV, H * SEQ_LEN, DV * 4, DV, CHUNK, 1, 1, descriptor_dtype="float32", rank=2)
    with T.device_entry():
        with T.launch_thread("blockIdx.x", H) as h:
            with T.launch_thread("threadIdx.x", 96) as tx:
                q_s = T.alloc_tensor(ty_args=[T.Tensor((IN_STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=128)])
                k_s = T.alloc_tensor(ty_args=[T.Tensor((IN_STAGES, CHUNK, DK), T.bfloat16, scope="shared", align=128)])
                v_s = T.alloc_tensor(ty_args=[T.Tensor((IN_STAGES, CHUNK, DV), T.bfloat16, scope="shared", align=128)])
                state_in = T.alloc_tensor(ty_args=[T.Tensor((SINP_STAGES, DK, DV), T.float32, scope="shared")])
                u_s = T.alloc_tensor(ty_args=[T.Tensor((CHUNK, DV), T.float32, scope="shared")])
                decay_s = T.alloc_tensor(ty_args=[T.Tensor((CHUNK + 1,), T.float32, scope="shared")])
                o_s = T.alloc_tensor(ty_args=[T.Tensor((CHUNK, DV), T.float32, scope="shared", align=128)])
                in_full = T.alloc_tensor(ty_args=[T.Tensor((IN_STAGES,), T.uint64, scope="shared")])
                in_empty = T.alloc_tensor(ty_args=[T.Tensor((IN_STAGES,), T.uint64, scope="shared")])
                sinp_full = T.alloc_tensor(ty_args=[T.Tensor((SINP_STAGES,), T.uint64, scope="shared")])
                sinp_empty = T.alloc_tensor(ty_args=[T.Tensor((SINP_STAGES,), T.uint64, scope="shared")])
                u_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                u_empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                st = T.alloc_tensor(ty_args=[T.Tensor((8,), T.float32, scope="local")])
                kr = T.alloc_tensor(ty_args=[T.Tensor((DK,), T.float32, scope="local")])
                qr = T.alloc_tensor(ty_args=[T.Tensor((DK,), T.float32, scope="local")])
                ur = T.alloc_tensor(ty_args=[T.Tensor((DV,), T.float32, scope="local")])
                outr = T.alloc_tensor(ty_args=[T.Tensor((DV,), T.float32, scope="local")])
                gsum = T.local_scalar(T.float32)
                kk = T.local_scalar(T.float32)
                qk = T.local_scalar(T.float32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(IN_STAGES):
                        T.ptx.mbarrier.init.shared.b64(in_full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(in_empty.ptr_to([s]), T.uint32(64))
                    for s in T.unroll(SINP_STAGES):
                        T.ptx.mbarrier.init.shared.b64(sinp_full.ptr_to([s]), T.uint32(32))
                        T.ptx.mbarrier.init.shared.b64(sinp_empty.ptr_to([s]), T.uint32(32))
                    T.ptx.mbarrier.init.shared.b64(u_full.ptr_to([0]), T.uint32(32))
                    T.ptx.mbarrier.init.shared.b64(u_empty.ptr_to([0]), T.uint32(32))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for c in range(NUM_CHUNKS):
                        T.cuda.mbarrier_wait(in_empty.ptr_to([c % IN_STAGES]), (c // IN_STAGES + 1) % 2)
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(in_full.ptr_to([c % IN_STAGES]), T.uint32(IN_BYTES))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](q_s.ptr_to([c % IN_STAGES, 0, 0]), tmap_q, 0, h * SEQ_LEN + c * CHUNK, in_full.ptr_to([c % IN_STAGES]))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](k_s.ptr_to([c % IN_STAGES, 0, 0]), tmap_k, 0, h * SEQ_LEN + c * CHUNK, in_full.ptr_to([c % IN_STAGES]))
                            T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](v_s.ptr_to([c % IN_STAGES, 0, 0]), tmap_v, 0, h * SEQ_LEN + c * CHUNK, in_full.ptr_to([c % IN_STAGES]))
                elif warp == 1:
                    row: T.let[T.int32] = lane // 2
                    col0: T.let[T.int32] = lane % 2 * 8
                    for i in range(8):
                        st[i] = T.float32(0)
                    for c in range(NUM_CHUNKS):
                        # publish S0 of chunk c once the compute warp released the slot's previous state
                        T.cuda.mbarrier_wait(sinp_empty.ptr_to([c % SINP_STAGES]), (c // SINP_STAGES + 1) % 2)
                        for i in range(8):
                            state_in[c % SINP_STAGES, row, col0 + i] = st[i]
                        T.ptx.mbarrier.arrive.shared.b64(sinp_full.ptr_to([c % SINP_STAGES]))
                        # S' = e^{G_last} S0 + sum_l e^{G_last - G_l} k_l u_l^T
                        T.cuda.mbarrier_wait(u_full.ptr_to([0]), c % 2)
                        T.cuda.mbarrier_wait(in_full.ptr_to([c % IN_STAGES]), (c // IN_STAGES) % 2)
                        for i in range(8):
                            st[i] = st[i] * decay_s[CHUNK]
                        for l in range(CHUNK):
                            kw: T.let[T.float32] = T.Cast("float32", k_s[c % IN_STAGES, l, row]) * decay_s[l]
                            for i in range(8):
                                st[i] = st[i] + kw * u_s[l, col0 + i]
                        T.ptx.mbarrier.arrive.shared.b64(u_empty.ptr_to([0]))
                        # the next TMA into this slot is an async-proxy write after these generic reads
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.mbarrier.arrive.shared.b64(in_empty.ptr_to([c % IN_STAGES]))
                elif warp == 2:
                    for c in range(NUM_CHUNKS):
                        base: T.let[T.int32] = h * SEQ_LEN + c * CHUNK
                        gsum = T.float32(0)
                        for i in range(CHUNK):
                            gsum = gsum + T.if_then_else(i <= lane, g[base + i], T.float32(0))
                        gam: T.let[T.float32] = T.exp(gsum)
                        b: T.let[T.float32] = beta[base + lane]
                        T.cuda.mbarrier_wait(in_full.ptr_to([c % IN_STAGES]), (c // IN_STAGES) % 2)
                        for r in range(DK):
                            kr[r] = T.Cast("float32", k_s[c % IN_STAGES, lane, r])
                            qr[r] = T.Cast("float32", q_s[c % IN_STAGES, lane, r])
                        # K S0 and Q S0 read the state_input slot, then hand it back to the keeper
                        # BUG: producer parity on the consumer side
                        T.cuda.mbarrier_wait(sinp_full.ptr_to([c % SINP_STAGES]), (c // SINP_STAGES + 1) % 2)
                        for j in range(DV):
                            ur[j] = T.float32(0)
                            outr[j] = T.float32(0)
                            for r in range(DK):
                                ur[j] = ur[j] + kr[r] * state_in[c % SINP_STAGES, r, j]
                                outr[j] = outr[j] + qr[r] * state_in[c % SINP_STAGES, r, j]
                        T.ptx.mbarrier.arrive.shared.b64(sinp_empty.ptr_to([c % SINP_STAGES]))
                        for j in range(DV):
                            ur[j] = b * (T.Cast("float32", v_s[c % IN_STAGES, lane, j]) - gam * ur[j])
                            outr[j] = gam * outr[j]
                        # forward substitution: at step l lane l's u is final; lanes after it take it out
                        for l in range(CHUNK):
                            gl: T.let[T.float32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), gsum, l, 32)
                            kk = T.float32(0)
                            for r in range(DK):
                                kk = kk + kr[r] * T.Cast("float32", k_s[c % IN_STAGES, l, r])
                            coef: T.let[T.float32] = T.if_then_else(l < lane, b * T.exp(gsum - gl) * kk, T.float32(0))
                            for j in range(DV):
                                ul: T.let[T.float32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), ur[j], l, 32)
                                ur[j] = ur[j] - coef * ul
                        for l in range(CHUNK):
                            gl2: T.let[T.float32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), gsum, l, 32)
                            qk = T.float32(0)
                            for r in range(DK):
                                qk = qk + qr[r] * T.Cast("float32", k_s[c % IN_STAGES, l, r])
                            w: T.let[T.float32] = T.if_then_else(l <= lane, T.exp(gsum - gl2) * qk, T.float32(0))
                            for j in range(DV):
                                uo: T.let[T.float32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), ur[j], l, 32)
                                outr[j] = outr[j] + w * uo
                        glast: T.let[T.float32] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), gsum, CHUNK - 1, 32)
                        # u and the decays to the keeper (one-slot ring)
                        T.cuda.mbarrier_wait(u_empty.ptr_to([0]), (c + 1) % 2)
                        for j in range(DV):
                            u_s[lane, j] = ur[j]
                        decay_s[lane] = T.exp(glast - gsum)
                        if lane == CHUNK - 1:
                            decay_s[CHUNK] = T.exp(glast)
                        T.ptx.mbarrier.arrive.shared.b64(u_full.ptr_to([0]))
                        # o through the staging tile: the previous store must have read it
                        if lane == 0:
                            T.ptx.cp.async_.bulk.wait_group.read(0)
                        T.cuda.warp_sync()
                        T.ptx.fence.proxy.async_.shared__cta()
                        for j in range(DV):
                            o_s[lane, j] = outr[j]
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap_o, 0, base, o_s.ptr_to([0, 0]))
                            T.ptx.cp.async_.bulk.commit_group()
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.ptx.mbarrier.arrive.shared.b64(in_empty.ptr_to([c % IN_STAGES]))
                    if lane == 0:
                        T.ptx.cp.async_.bulk.wait_group(0)
