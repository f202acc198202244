# tcgen05 ts-form MMA: D = A . B^T with A (M x K, bf16) held in Tensor Memory and B
# (N x K, bf16, K-major) in shared memory.  Warp q stores rows 32q..32q+31 of A into TMEM
# with tcgen05.st 32x32b (thread t owns row 32q + t; register r packs A[row][2r] in its
# low and A[row][2r + 1] in its high half, so A takes K / 2 columns from A_COL), waits
# for its stores (wait::st); thread 0 loads B with a 64B-swizzled TMA (K = 32 bf16 = 64
# bytes per row).  After a CTA barrier bracketed by the tcgen05 thread-sync fences,
# thread 0 waits for B, issues K / 16 MMAs that read A from TMEM and commits them to
# `mma_done`; every warp then reads its 32 lanes of D (columns 0..N-1) with tcgen05.ld.
# Inputs come from kernels/inputs/gemm.py:mma_ts.
from tvm_tirx.script import tirx as T

M = 128
N = 64
K = 32
A_COL = 64             # TMEM column of A (D uses columns 0..N-1)
TMEM_COLS = 128
IDESC = 16 + 128 + 1024 + (N // 8) * 131072 + (M // 16) * 16777216
CHUNK = 16


@T.function
def mma_ts(a_packed: T.Tensor((M, K // 2), T.uint32), tmap_b: T.Ptr(T.void), D: T.Tensor((M, N), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                b_s = T.alloc_tensor(ty_args=[T.Tensor((N, K), T.bfloat16, scope="shared", align=1024)])
                tma_bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                mma_done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                regs = T.alloc_tensor(ty_args=[T.Tensor((K // 2,), T.uint32, scope="local")])
                acc = T.alloc_tensor(ty_args=[T.Tensor((CHUNK,), T.float32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(tma_bar.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(mma_done.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(TMEM_COLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = tmem_slot[0]
                if tx == 0:
                    T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(tma_bar.ptr_to([0]), T.uint32(N * K * 2))
                    T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](b_s.ptr_to([0, 0]), tmap_b, 0, 0, tma_bar.ptr_to([0]))
                for r in range(K // 2):
                    regs[r] = a_packed[warp * 32 + lane, r]
                T.ptx["tcgen05.st.sync.aligned.32x32b.x16.b32"](taddr + T.Cast("uint32", warp * 32 * 65536 + A_COL), regs[0], regs[1], regs[2], regs[3], regs[4], regs[5], regs[6], regs[7], regs[8], regs[9], regs[10], regs[11], regs[12], regs[13], regs[14], regs[15])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                if tx == 0:
                    T.cuda.mbarrier_wait(tma_bar.ptr_to([0]), 0)
                    b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([0, 0])))
                    # K-major, 64B swizzle: start >> 4, LBO 16 B (unused), SBO 512 B (8 rows x 64 B), version 1
                    b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(1) << T.uint64(16) | T.uint64(32) << T.uint64(32) | T.uint64(1) << T.uint64(46) | T.uint64(4) << T.uint64(61)
                    for kk in T.unroll(K // 16):
                        T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr, taddr + T.Cast("uint32", A_COL + kk * 8), b_desc + T.Cast("uint64", kk * 2), T.uint32(IDESC), 0, 0, 0, 0, kk > 0)
                    T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(mma_done.ptr_to([0]))
                T.cuda.mbarrier_wait(mma_done.ptr_to([0]), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for c in range(N // CHUNK):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7], acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15], taddr + T.Cast("uint32", warp * 32 * 65536 + c * CHUNK))
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    for j in range(CHUNK):
                        D[warp * 32 + lane, c * CHUNK + j] = acc[j]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(TMEM_COLS))
