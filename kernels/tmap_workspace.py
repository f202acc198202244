# from tvm.script import tirx as T

# A tensor map held in global memory, in the apache-tvm 0.27 pre-lowering form.  `maps` (int64 words) holds a
# template map at byte 0 and, at byte 128, the workspace slot a previous launch left (kernels/inputs/tma.py:
# tmap_workspace).  Warp 0 (one elected lane) initializes the mbarrier; after a CTA barrier it copies the
# template into the slot with ld/st.global.v4.b64, points the copy at row ROW0 of `x` (tensormap.replace
# global_address), gives it GROWS rows (global_dim 1) and releases it to the tensormap proxy.  After the CTA barrier warp 1 acquires the slot,
# TMA-loads the BOX_Y x 32 box at (0, 0) through it and writes the tile to `out`: out = x[ROW0:ROW0 + BOX_Y].
#
# Seeded bugs (manifest entries of the same names):
#   FENCE = 0 (tmap_workspace_no_fence): neither fence.proxy.tensormap::generic.release nor .acquire: the
#     TMA may read the slot's map through the tensormap proxy before the generic-proxy edit is visible to it.
#   SYNC = 0 (tmap_workspace_stale): no CTA barrier between the edit and the TMA: warp 1 may load through
#     the slot's stale map (the previous launch's), a race between tensormap.replace and the TMA's read.

ROW0 = 8
GROWS = 16
BOX_Y = 8
FENCE = 1
SYNC = 1


@T.prim_func
def tmap_workspace(x: T.Buffer((32, 32), "float32"), maps: T.Buffer((32,), "int64"), out: T.Buffer((BOX_Y, 32), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v_1 = T.cta_id([1])
    v_2 = T.warp_id([2])
    v_3 = T.lane_id([32])
    tile = T.alloc_buffer((BOX_Y, 32), "float32", scope="shared.dyn", align=1024)
    bar = T.alloc_buffer((1,), "uint64", scope="shared")
    if v_2 == 0:
        e0: T.uint32
        e1: T.uint32
        T.ptx.elect_sync(e0, e1, T.uint32(4294967295), "")
        if e1 == T.uint32(1):
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(1), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
    T.cuda.cta_sync()
    if v_2 == 0:
        e4: T.uint32
        e5: T.uint32
        T.ptx.elect_sync(e4, e5, T.uint32(4294967295), "")
        if e5 == T.uint32(1):
            regs = T.alloc_local((4,), "uint64")
            for c in T.unroll(4):
                T.ptx.ld(regs[0], regs[1], regs[2], regs[3], T.reinterpret(T.handle().ty, T.reinterpret("uint64", T.address_of(maps[0])) + T.Cast("uint64", c * 32)), "", "", "global", "", "", "", "", "", "", "v4", "b64", "")
                T.ptx.st(T.reinterpret(T.handle().ty, T.reinterpret("uint64", T.address_of(maps[16])) + T.Cast("uint64", c * 32)), regs[0], regs[1], regs[2], regs[3], "", "", "global", "", "", "", "", "v4", "b64", "")
            T.ptx.tensormap_replace(T.address_of(maps[16]), T.reinterpret("uint64", T.address_of(x[ROW0, 0])), "tile", "global_address", "global", "b1024", "b64", "")
            T.ptx.tensormap_replace(T.address_of(maps[16]), 1, T.uint32(GROWS), "tile", "global_dim", "global", "b1024", "b32", "")
            if FENCE == 1:
                T.ptx.fence("proxy", "tensormap::generic", "release", "gpu", "")
    if SYNC == 1:
        T.cuda.cta_sync()
    if v_2 == 1:
        e2: T.uint32
        e3: T.uint32
        T.ptx.elect_sync(e2, e3, T.uint32(4294967295), "")
        if e3 == T.uint32(1):
            if FENCE == 1:
                T.ptx.fence(T.address_of(maps[16]), "proxy", "tensormap::generic", "acquire", "gpu", "")
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(BOX_Y * 128), "arrive", "expect_tx", "", "", "shared", "b64", "")
            T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(tile[0, 0])), T.reinterpret(T.handle().ty, T.address_of(maps[16])), 0, 0, T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), "async", "bulk", "tensor", "2d", "shared::cta", "global", "tile", "mbarrier::complete_tx::bytes", "", "", "", "")
        T.cuda.mbarrier_wait(T.address_of(bar[0]), 0)
        for k in range(BOX_Y):
            out[k, v_3] = tile[k, v_3]
