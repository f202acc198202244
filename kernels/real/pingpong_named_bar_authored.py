# Two warpgroups taking turns on a shared accumulator (the ping-pong schedule of FA3-style
# kernels), authored in `tvm.script` tirx (apache-tvm 0.27) with warpgroup scope ids and
# named barriers.  In round r warpgroup r % 2 adds row r of x into acc; a warpgroup waits
# for its turn with bar.sync on its own barrier (2 + wg, 256 threads) and passes the turn
# with bar.arrive on the other's (3 - wg).  Warpgroup 0 starts without waiting; the last
# turn is not passed on.  After a CTA barrier warpgroup 1 writes out = the column sums of x.
from tvm.script import tirx as T

ROUNDS = 6


@T.prim_func
def pingpong_named_bar_authored(x: T.Buffer((ROUNDS, 128), "float32"), out: T.Buffer((128,), "float32")):
    T.device_entry()
    wg = T.warpgroup_id([2])
    warp = T.warp_id_in_wg([4])
    tid = T.thread_id_in_wg([128])
    acc = T.alloc_shared((128,), "float32")
    if wg == 0:
        acc[tid] = T.float32(0)
    T.cuda.cta_sync()
    for r in T.serial(ROUNDS // 2, unroll=False):
        if wg == 1 or r > 0:
            T.ptx.bar.sync(T.Cast("uint32", 2 + wg), 256)
        acc[tid] = acc[tid] + x[2 * r + wg, tid]
        if wg == 0 or r < ROUNDS // 2 - 1:
            T.ptx.bar.arrive(T.Cast("uint32", 3 - wg), 256)
    T.cuda.cta_sync()
    if wg == 1:
        out[tid] = acc[tid]
