# Fixed twin of race_tmem_dealloc_reader.py: every warp waits for its tcgen05.ld
# (tcgen05.wait::ld) before tcgen05.fence::before_thread_sync and the CTA barrier,
# so the loads are complete before warp 0 frees the columns.
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def race_tmem_dealloc_reader_fixed(x: T.Tensor((128,), T.uint32), out: T.Tensor((128,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0] + T.Cast("uint32", warp * 32 * 65536)
                reg[0] = x[tx] * T.uint32(3)
                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[0], taddr)
                T.ptx.tcgen05.wait__ld.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
                out[tx] = reg[0] + T.uint32(1)
