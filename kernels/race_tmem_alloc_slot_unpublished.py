# Bug: warp 1 reads the TMEM base from `slot` with nothing ordering it after warp
# 0's tcgen05.alloc, whose store of the address is a weak store (PTX ISA
# 9.7.16.7.1): the read races with it and may see a stale value.  Warp 0's own
# lanes reading the slot right after the alloc are fine (the fixed twin keeps
# that); the fix, race_tmem_alloc_slot_unpublished_fixed.py, moves warp 1's read
# after the CTA barrier.
from tvm_tirx.script import tirx as T

NCOLS = 32


@T.function
def race_tmem_alloc_slot_unpublished(x: T.Tensor((64,), T.uint32), out: T.Tensor((64,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                reg = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="local")])
                warp: T.let[T.int32] = tx // 32
                if warp == 0:
                    T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(slot.ptr_to([0]), T.uint32(NCOLS))
                    taddr: T.let[T.uint32] = slot[0]
                    reg[0] = x[tx] * T.uint32(3)
                    T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](taddr, reg[0])
                    T.ptx.tcgen05.wait__st.sync.aligned()
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[0], taddr)
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    out[tx] = reg[0] + T.uint32(1)
                    T.ptx.tcgen05.relinquish_alloc_permit.cta_group__1.sync.aligned()
                if warp == 1:
                    out[tx] = slot[0] + x[tx]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(slot[0], T.uint32(NCOLS))
