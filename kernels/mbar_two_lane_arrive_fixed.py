# The fixed twin of mbar_two_lane_arrive.py: `ready` expects ACTIVE arrivals,
# one per lane that publishes a value (the slot-1 case of the reference tool's
# native_synccheck_data_dependent_protocol).
from tvm_tirx.script import tirx as T

ACTIVE = 2


@T.function
def mbar_two_lane_arrive_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((ACTIVE,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(ACTIVE))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane < ACTIVE:
                        slot[lane] = lane + 1
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[lane % ACTIVE]
