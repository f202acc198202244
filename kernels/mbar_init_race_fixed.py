# The fixed twin of mbar_init_race.py, and a mirror of the reference tool's
# native_synccheck_cta_sync_publishes_init: the CTA barrier between warp 0's
# init and warp 1's arrive orders them.  No fence.mbarrier_init is needed for
# that — the cta_sync alone publishes the init inside the CTA.
from tvm_tirx.script import tirx as T


@T.function
def mbar_init_race_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                ready = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(ready.ptr_to([0]), T.uint32(1))
                T.cuda.cta_sync()
                if warp == 0:
                    T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)
                    out[lane] = slot[0] + lane
                else:
                    if lane == 0:
                        slot[0] = 42
                        T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))
