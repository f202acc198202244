# A two-stage generic ring whose barrier steps are @T.inline helpers expanded at their call
# sites, with a T.meta_var constant, authored in `tvm.script` tirx (apache-tvm 0.27).
# Warp 0 writes row k of x * 4 into slot k % STAGES and arrives on full; warp 1 waits,
# stores out and releases the slot on empty.  Pending: modelcheck does not yet accept
# T.meta_var bindings (the lead is adding them, with @T.inline expansion).
from tvm.script import tirx as T

ROWS = 8
STAGES = 2


@T.inline
def wait_phase(bar, k, first_parity):
    T.cuda.mbarrier_wait(T.address_of(bar[k % STAGES]), (k // STAGES + first_parity) % 2)


@T.inline
def arrive_joined(bar, k, lane):
    T.cuda.warp_sync()
    if lane == 0:
        T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar[k % STAGES]))


@T.prim_func
def inline_ring_authored(x: T.Buffer((ROWS, 32), "float32"), out: T.Buffer((ROWS, 32), "float32")):
    T.device_entry()
    warp = T.warp_id([2])
    lane = T.lane_id([32])
    slots = T.alloc_shared((STAGES, 32), "float32")
    full = T.alloc_shared((STAGES,), "uint64")
    empty = T.alloc_shared((STAGES,), "uint64")
    scale = T.meta_var(T.float32(4))
    if warp == 0:
        if lane == 0:
            for s in T.unroll(STAGES):
                T.ptx.mbarrier.init.shared.b64(T.address_of(full[s]), 1)
                T.ptx.mbarrier.init.shared.b64(T.address_of(empty[s]), 1)
            T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cta_sync()
    if warp == 0:
        for k in T.serial(ROWS, unroll=False):
            wait_phase(empty, k, 1)
            slots[k % STAGES, lane] = x[k, lane] * scale
            arrive_joined(full, k, lane)
    else:
        for k in T.serial(ROWS, unroll=False):
            wait_phase(full, k, 0)
            out[k, lane] = slots[k % STAGES, lane]
            arrive_joined(empty, k, lane)
