# Bug: deadlock from a data-dependent arrive guard.  Four warps publish on four
# mbarriers with the arrival shapes of the reference tool's
# native_lane_and_elect_mbarrier: thread 0 alone (count 1), thread 0 under a
# data guard (count 1), one elected lane per warp (count 4), and a per-warp
# leader relay (warp_sync, then lane 0 arrives through the arrive predicate;
# count 4).  Every warp waits on all four.  The data-guarded arrive only happens
# when flags[0] == EPOCH; with EPOCH = 1 and the flags at 0, the generation of
# `b_data` gets no arrival and all warps block on it.  The fix,
# mbar_lane_elect_arrivals.py, has EPOCH = 0 (the epoch the data carries).
from tvm_tirx.script import tirx as T

WARPS = 4
EPOCH = 1


@T.function
def mbar_lane_elect_starved(flags: T.Tensor((1,), T.int32), out: T.Tensor((WARPS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", WARPS * 32) as tx:
                b_thread0 = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                b_data = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                b_elect = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                b_relay = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                rows = T.alloc_tensor(ty_args=[T.Tensor((WARPS, 32), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(b_thread0.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(b_data.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(b_elect.ptr_to([0]), T.uint32(WARPS))
                    T.ptx.mbarrier.init.shared.b64(b_relay.ptr_to([0]), T.uint32(WARPS))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                rows[warp, lane] = warp * 100 + lane
                if tx == 0:
                    T.ptx.mbarrier.arrive.shared.b64(b_thread0.ptr_to([0]))
                if tx == 0 and flags[0] == EPOCH:
                    T.ptx.mbarrier.arrive.shared.b64(b_data.ptr_to([0]))
                if T.cuda.elect_sync():
                    T.ptx.mbarrier.arrive.shared.b64(b_elect.ptr_to([0]))
                T.cuda.warp_sync()
                T.ptx.mbarrier.arrive.shared.b64(b_relay.ptr_to([0]), 1, pred=lane == 0)
                T.cuda.mbarrier_wait(b_thread0.ptr_to([0]), 0)
                T.cuda.mbarrier_wait(b_data.ptr_to([0]), 0)
                T.cuda.mbarrier_wait(b_elect.ptr_to([0]), 0)
                T.cuda.mbarrier_wait(b_relay.ptr_to([0]), 0)
                out[tx] = rows[(warp + 1) % WARPS, lane]
