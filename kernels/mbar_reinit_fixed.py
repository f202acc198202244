# The fixed twin of mbar_reinit.py: every round ends with the whole warp past the
# round's wait (warp_sync), then thread 0 invalidates `bar`, so the next round's
# init runs on an invalidated barrier.
from tvm_tirx.script import tirx as T

ROUNDS = 2


@T.function
def mbar_reinit_fixed(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                for r in range(ROUNDS):
                    if tx == 0:
                        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                    if tx == 0:
                        out[r] = r
                    T.cuda.warp_sync()
                    if tx == 0:
                        T.ptx.mbarrier.inval.shared.b64(bar.ptr_to([0]))
