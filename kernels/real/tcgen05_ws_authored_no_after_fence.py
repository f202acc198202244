# Bug twin of tcgen05_ws_authored.py (reference bug B6): the epilogue warps read the TMEM
# accumulator right after their mbarrier wait on mma_done, without
# tcgen05.fence::after_thread_sync.  The wait orders the thread, not its tcgen05 operations:
# the tcgen05.ld may be performed before the MMAs the commit tracked have written D.
from tvm.script import tirx as T

M = 128
N = 64
K_STEPS = 2
A_WORDS = M * 16 // 2
B_WORDS = N * 16 // 2
IDESC = 16 + 128 + 1024 + (N // 8) * 131072 + (M // 16) * 16777216


@T.prim_func
def tcgen05_ws_authored_no_after_fence(a_img: T.Buffer((K_STEPS, A_WORDS), "uint32"), b_img: T.Buffer((K_STEPS, B_WORDS), "uint32"), D: T.Buffer((M, N), "float32")):
    T.device_entry()
    warp = T.warp_id([5])
    lane = T.lane_id([32])
    tid = T.thread_id([160])
    a_s = T.alloc_shared((K_STEPS, A_WORDS), "uint32", align=1024)
    b_s = T.alloc_shared((K_STEPS, B_WORDS), "uint32", align=1024)
    full = T.alloc_shared((K_STEPS,), "uint64")
    mma_done = T.alloc_shared((1,), "uint64")
    tmem_slot = T.alloc_shared((1,), "uint32")
    acc = T.alloc_local((16,), "float32")
    if tid == 0:
        for s in T.unroll(K_STEPS):
            T.ptx.mbarrier.init.shared.b64(T.address_of(full[s]), 128)
        T.ptx.mbarrier.init.shared.b64(T.address_of(mma_done[0]), 1)
        T.ptx.fence.mbarrier_init.release.cluster()
    if warp == 4:
        T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(T.address_of(tmem_slot[0]), T.uint32(N))
        T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
    T.ptx.tcgen05.fence__before_thread_sync()
    T.cuda.cta_sync()
    T.ptx.tcgen05.fence__after_thread_sync()
    if warp < 4:
        for s in T.serial(K_STEPS, unroll=False):
            for i in T.unroll(A_WORDS // 128):
                a_s[s, i * 128 + tid] = a_img[s, i * 128 + tid]
            for i in T.unroll(B_WORDS // 128):
                b_s[s, i * 128 + tid] = b_img[s, i * 128 + tid]
            T.ptx.fence.proxy.async_.shared__cta()
            T.ptx.mbarrier.arrive.shared.b64(T.address_of(full[s]))
        T.cuda.mbarrier_wait(T.address_of(mma_done[0]), 0)
        for c in T.serial(N // 16, unroll=False):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x16.b32"](acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7], acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15], tmem_slot[0] + T.Cast("uint32", warp * 32 * 65536 + c * 16))
            T.ptx.tcgen05.wait__ld.sync.aligned()
            for j in T.unroll(16):
                D[warp * 32 + lane, c * 16 + j] = acc[j]
    else:
        if T.cuda.elect_sync():
            for s in T.serial(K_STEPS, unroll=False):
                T.cuda.mbarrier_wait(T.address_of(full[s]), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                a_desc = T.Cast("uint64", T.cuda.cvta_generic_to_shared(T.address_of(a_s[s, 0])))
                b_desc = T.Cast("uint64", T.cuda.cvta_generic_to_shared(T.address_of(b_s[s, 0])))
                T.ptx.tcgen05.mma.cta_group__1.kind__f16(tmem_slot[0], (a_desc & T.uint64(262143)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46), (b_desc & T.uint64(262143)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(16) << T.uint64(32) | T.uint64(1) << T.uint64(46), T.uint32(IDESC), 0, 0, 0, 0, s > 0)
            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(T.address_of(mma_done[0]))
    T.ptx.tcgen05.fence__before_thread_sync()
    T.cuda.cta_sync()
    if warp == 4:
        T.ptx.tcgen05.fence__after_thread_sync()
        T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(tmem_slot[0], T.uint32(N))
