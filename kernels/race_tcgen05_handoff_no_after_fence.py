# Bug: a cross-warpgroup TMEM handoff without tcgen05.fence::after_thread_sync.
# Warpgroup 0 (warps 0-3) computes per-row values into TMEM column 0 of its lane
# quarters (tcgen05.st, wait::st), executes tcgen05.fence::before_thread_sync and
# arrives on `ready` (count 128).  Warpgroup 1 (warps 4-7: warp 4 + q reaches the
# same lane quarter q) waits on `ready` and reads the column with tcgen05.ld.  The
# mbarrier orders the threads, but tcgen05 operations are ordered across a thread
# synchronization only with fence::before_thread_sync before it *and*
# fence::after_thread_sync after it: without the latter the loads may run ahead of
# the wait and read cells the stores have not written.  The fix,
# race_tcgen05_handoff_no_after_fence_fixed.py, adds the fence after the wait.
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def race_tcgen05_handoff_no_after_fence(x: T.Tensor((128,), T.uint32), out: T.Tensor((128,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 256) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(128))
                    T.ptx.fence.mbarrier_init.release.cluster()
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0] + T.Cast("uint32", warp % 4 * 32 * 65536)
                if warp < 4:
                    reg[0] = x[tx] * T.uint32(5) + T.uint32(1)
                    T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                    T.ptx.tcgen05.wait__st.sync.aligned()
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[0], taddr)
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    out[tx - 128] = reg[0]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
