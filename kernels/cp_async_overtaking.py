# Bug: mbarrier_arrive_before_consumption through deferred arrivals.  The
# producer warp 0 loads a 128-element tile per round with cp.async (16 bytes per
# lane) and signals `full` with cp.async.mbarrier.arrive.noinc: each lane's
# arrival lands when its copies are done (`full` expects 32).  Nothing makes the
# producer wait for the consumer, so round 1's arrivals land on `full` before
# the consumer (warp 1) has observed generation 0 — and its copies overwrite the
# tile the consumer has not read yet.  The fix, cp_async_overtaking_fixed.py,
# adds the `empty` back-pressure barrier.
from tvm_tirx.script import tirx as T

ROUNDS = 3


@T.function
def cp_async_overtaking(g: T.Tensor((ROUNDS * 128,), T.int32), out: T.Tensor((ROUNDS * 128,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                s = T.alloc_tensor(ty_args=[T.Tensor((128,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(32))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.ptx.cp.async_.ca.shared.global_(s.ptr_to([lane * 4]), g.ptr_to([r * 128 + lane * 4]), 16)
                        T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        for k in T.unroll(4):
                            out[r * 128 + lane * 4 + k] = s[lane * 4 + k]
