# An epilogue that overwrites its tcgen05.ld registers too early.
#
# Four warps stage x in TMEM (tcgen05.st, wait::st), then each loads its 32 lanes back,
# four columns at a time, with tcgen05.ld.32x32b.x4 and stores them to `out`.  The reset
# of the register tile for the next chunk is hoisted above tcgen05.wait::ld: tcgen05.ld
# writes its destinations asynchronously, and only the wait orders that write before the
# thread's own write (a read would be a true register dependency, which the hardware
# respects; a write is not).  The fixed twin (tmem_ld_write_before_wait_fixed.py) resets
# the tile after the wait and the store.
from tvm_tirx.script import tirx as T

NCOLS = 32
CHUNK = 4


@T.function
def tmem_ld_write_before_wait(x: T.Tensor((128, NCOLS), T.float32), out: T.Tensor((128, NCOLS), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                acc = T.alloc_tensor(ty_args=[T.Tensor((CHUNK,), T.float32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                taddr: T.let[T.uint32] = slot[0] + T.Cast("uint32", warp * 32 * 65536)
                for c in range(NCOLS // CHUNK):
                    for j in range(CHUNK):
                        acc[j] = x[tx, c * CHUNK + j]
                    T.ptx["tcgen05.st.sync.aligned.32x32b.x4.b32"](taddr + T.Cast("uint32", c * CHUNK), acc[0], acc[1], acc[2], acc[3])
                T.ptx.tcgen05.wait__st.sync.aligned()
                for c in range(NCOLS // CHUNK):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x4.b32"](acc[0], acc[1], acc[2], acc[3], taddr + T.Cast("uint32", c * CHUNK))
                    for j in range(CHUNK):
                        acc[j] = T.float32(0)
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    for j in range(CHUNK):
                        out[tx, c * CHUNK + j] = acc[j]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
