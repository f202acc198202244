# Bug: mbarrier_arrival_overflow.  `ready` expects one arrival, but the arrive is
# guarded by `lane < ACTIVE` with ACTIVE = 2: two lanes arrive, and an mbarrier
# arrive counts once per executing lane ("received 2 arrivals, expected 1").
# Mirrors the reference tool's native_synccheck_plain_arrival_overflow and the
# slot-0 case of native_synccheck_data_dependent_protocol.  The fix,
# mbar_two_lane_arrive_fixed.py, initializes the count to ACTIVE.
from tvm_tirx.script import tirx as T

ACTIVE = 2


@T.function
def mbar_two_lane_arrive(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((ACTIVE,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane < ACTIVE:
                        slot[lane] = lane + 1
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[lane % ACTIVE]
