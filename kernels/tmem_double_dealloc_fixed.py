# Fixed twin of tmem_double_dealloc.py.  Two warpgroups share one TMEM allocation:
# warp 0 allocates NCOLS columns, every warp stores tx into its lane quarter (warp % 4)
# at column warp // 4, loads it back and writes it to out[tx].  The teardown frees the
# allocation from warp 0 only, the warp that allocated it (the buggy twin's predicate
# `warp % 4 == 0` also held for warp 4 and freed it twice).
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def tmem_double_dealloc_fixed(out: T.Tensor((256,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 256) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0] + T.Cast("uint32", warp % 4 * 32 * 65536 + warp // 4)
                reg[0] = T.Cast("uint32", tx)
                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[0], taddr)
                T.ptx.tcgen05.wait__ld.sync.aligned()
                out[tx] = reg[0]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
