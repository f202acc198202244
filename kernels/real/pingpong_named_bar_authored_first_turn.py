# Bug twin of pingpong_named_bar_authored.py: the turn guard says `r > 0` for both
# warpgroups (it should exempt only warpgroup 0's first turn), so warpgroup 1 starts its
# first round without waiting for warpgroup 0 to pass the turn.  Both warpgroups then
# read-modify-write acc in round 0 at once: a shared-memory race that can lose a row.
from tvm.script import tirx as T

ROUNDS = 6


@T.prim_func
def pingpong_named_bar_authored_first_turn(x: T.Buffer((ROUNDS, 128), "float32"), out: T.Buffer((128,), "float32")):
    T.device_entry()
    wg = T.warpgroup_id([2])
    warp = T.warp_id_in_wg([4])
    tid = T.thread_id_in_wg([128])
    acc = T.alloc_shared((128,), "float32")
    if wg == 0:
        acc[tid] = T.float32(0)
    T.cuda.cta_sync()
    for r in T.serial(ROUNDS // 2, unroll=False):
        if r > 0:
            T.ptx.bar.sync(T.Cast("uint32", 2 + wg), 256)
        acc[tid] = acc[tid] + x[2 * r + wg, tid]
        if wg == 0 or r < ROUNDS // 2 - 1:
            T.ptx.bar.arrive(T.Cast("uint32", 3 - wg), 256)
    T.cuda.cta_sync()
    if wg == 1:
        out[tid] = acc[tid]
