# A warp-specialized kernel that rebalances registers with setmaxnreg (clean): three warpgroups,
# 384 threads.  Warpgroup 0 is the producer: all four of its warps lower their limit to
# PRODUCER_REGS, then warp 0 fills a STAGES-deep shared ring from x.  Warpgroups 1 and 2 are the
# consumers: they raise theirs to CONSUMER_REGS, wait `full`, each computes half of a row of
# out = 2 x + 1, joins its four warps on a named barrier and releases the slot on `empty`
# (count 2: one arrival per consumer warpgroup).  40 + 232 + 232 registers per thread fit the
# 64K pool.  Seeded bugs: PARTIAL=1 issues the producer's setmaxnreg from warp 0 only
# (setmaxnreg_incomplete_warpgroup); PRODUCER_REGS=96 leaves 96 + 232 + 232 > 512 per thread
# (register_oversubscription: a consumer's inc can never be satisfied).
from tvm_tirx.script import tirx as T

ROUNDS = 4
STAGES = 2
ROW = 256
PRODUCER_REGS = 40
CONSUMER_REGS = 232
PARTIAL = 0


@T.function
def ws_setmaxnreg(x: T.Tensor((ROUNDS, ROW), T.float32), out: T.Tensor((ROUNDS, ROW), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 384) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((STAGES, ROW), T.float32, scope="shared")])
                wg: T.let[T.int32] = tx // 128
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), T.uint32(1))
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), T.uint32(2))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if wg == 0:
                    if PARTIAL == 0 or warp == 0:
                        T.ptx.setmaxnreg.dec.sync.aligned.u32(PRODUCER_REGS)
                    if warp == 0:
                        for r in range(ROUNDS):
                            T.cuda.mbarrier_wait(empty.ptr_to([r % STAGES]), (r // STAGES + 1) % 2)
                            for k in T.unroll(ROW // 32):
                                buf[r % STAGES, k * 32 + lane] = x[r, k * 32 + lane]
                            T.cuda.warp_sync()
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([r % STAGES]))
                else:
                    T.ptx.setmaxnreg.inc.sync.aligned.u32(CONSUMER_REGS)
                    col: T.let[T.int32] = (wg - 1) * 128 + tx % 128
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([r % STAGES]), (r // STAGES) % 2)
                        out[r, col] = buf[r % STAGES, col] * T.float32(2.0) + T.float32(1.0)
                        T.ptx.bar.sync(T.Cast("uint32", wg), T.uint32(128))
                        if tx % 128 == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([r % STAGES]))
