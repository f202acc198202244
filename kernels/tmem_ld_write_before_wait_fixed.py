# Fixed twin of tmem_ld_write_before_wait.py: each chunk's tcgen05.ld is followed by
# tcgen05.wait::ld, the registers are stored to `out`, and only then is the register tile
# cleared for the next chunk.
from tvm_tirx.script import tirx as T

NCOLS = 32
CHUNK = 4


@T.function
def tmem_ld_write_before_wait_fixed(x: T.Tensor((128, NCOLS), T.float32), out: T.Tensor((128, NCOLS), T.float32)):
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
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    for j in range(CHUNK):
                        out[tx, c * CHUNK + j] = acc[j]
                    for j in range(CHUNK):
                        acc[j] = T.float32(0)
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
