# Review: a TMEM column is reloaded and then overwritten by the same warp without
# tcgen05.wait::ld in between.  Each warp stages x into its lane quarter of one TMEM
# column (tcgen05.st, wait::st), reads it back with tcgen05.ld, and then stores the
# next tile (y) into the same column — but waits for its load only afterwards.
# tcgen05.ld is asynchronous: without wait::ld the store may land before the load has
# read the cell (a write-after-read hazard on TMEM).  The store's data does not depend
# on the loaded register, so no register dependency orders it; the checker cannot see
# registers and reports a tmem_lifetime_review (review).  The fix,
# race_tmem_ld_st_no_wait_fixed.py, waits for the load before the store.
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def race_tmem_ld_st_no_wait(x: T.Tensor((128,), T.uint32), y: T.Tensor((128,), T.uint32), out: T.Tensor((256,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                first = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                second = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0] + T.Cast("uint32", warp * 32 * 65536)
                reg[0] = x[tx]
                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](first[0], taddr)
                reg[0] = y[tx]
                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx.tcgen05.wait__ld.sync.aligned()
                out[tx] = first[0]
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](second[0], taddr)
                T.ptx.tcgen05.wait__ld.sync.aligned()
                out[128 + tx] = second[0]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
