# Bug: a tcgen05.mma operand tile is rewritten by generic stores after the MMA's
# completion was observed, with no proxy fence.  D = A0 . B^T + A1 . B^T in two
# rounds through one shared A tile: each round every thread copies its part of A_r
# into `a_s` (fence.proxy.async: generic writes -> the MMA's async-proxy reads),
# thread 0 issues the MMA (accumulating from round 1 on) and commits it to `bar`,
# and every thread waits for that commit before the next round overwrites `a_s`.
# The MMA read `a_s` through the async proxy; observing its tcgen05.commit orders
# the completion but bridges no proxy, so the round-1 generic writes may still
# race with the round-0 MMA's reads (PTX memory model: async-proxy accesses need
# fence.proxy.async to be ordered with generic ones).  The fix,
# race_tcgen05_mma_smem_reuse_fixed.py, fences after the wait, before the rewrite.
# Operands: K-major, no swizzle (LBO 128 B, SBO 256 B), staged by
# kernels/inputs/mma_smem.py:mma_smem_reuse.
from tvm_tirx.script import tirx as T

M = 128
N = 64
K = 16
ROUNDS = 2
A_WORDS = M * K // 2
B_WORDS = N * K // 2
IDESC = 16 + 128 + 1024 + (N // 8) * 131072 + (M // 16) * 16777216
CHUNK = 16


@T.function
def race_tcgen05_mma_smem_reuse(a_img: T.Tensor((ROUNDS, A_WORDS), T.uint32), b_img: T.Tensor((B_WORDS,), T.uint32), D: T.Tensor((M, N), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                a_s = T.alloc_tensor(ty_args=[T.Tensor((A_WORDS,), T.uint32, scope="shared", align=1024)])
                b_s = T.alloc_tensor(ty_args=[T.Tensor((B_WORDS,), T.uint32, scope="shared", align=1024)])
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                acc = T.alloc_tensor(ty_args=[T.Tensor((CHUNK,), T.float32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(N))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                for i in range(B_WORDS // 128):
                    b_s[i * 128 + tx] = b_img[i * 128 + tx]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = tmem_slot[0]
                for r in range(ROUNDS):
                    for i in range(A_WORDS // 128):
                        a_s[i * 128 + tx] = a_img[r, i * 128 + tx]
                    T.ptx.fence.proxy.async_.shared__cta()
                    T.cuda.cta_sync()
                    if tx == 0:
                        a_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([0])))
                        b_addr: T.let[T.uint64] = T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([0])))
                        # smem descriptors: start >> 4, LBO 128 B, SBO 256 B, version 1, no swizzle
                        a_desc: T.let[T.uint64] = (a_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46)
                        b_desc: T.let[T.uint64] = (b_addr & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46)
                        T.ptx.tcgen05.mma.cta_group__1.kind__f16(taddr, a_desc, b_desc, T.uint32(IDESC), 0, 0, 0, 0, r > 0)
                        T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(bar.ptr_to([0]))
                    T.cuda.mbarrier_wait(bar.ptr_to([0]), r % 2)
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
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(taddr, T.uint32(N))
