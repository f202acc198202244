# Fixed twin of race_tmem_ld_st_no_wait.py: each warp waits for its tcgen05.ld
# (tcgen05.wait::ld) before the tcgen05.st that overwrites the same TMEM column, so
# the load has read the cell before the next tile replaces it.
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def race_tmem_ld_st_no_wait_fixed(x: T.Tensor((128,), T.uint32), y: T.Tensor((128,), T.uint32), out: T.Tensor((256,), T.uint32)):
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
                T.ptx.tcgen05.wait__ld.sync.aligned()
                reg[0] = y[tx]
                T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                T.ptx.tcgen05.wait__st.sync.aligned()
                out[tx] = first[0]
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](second[0], taddr)
                T.ptx.tcgen05.wait__ld.sync.aligned()
                out[128 + tx] = second[0]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
