# The fixed twin of mbar_arrive_before_init.py, and a mirror of the reference
# tool's one-warp clean case (native_synccheck_clean): thread 0 initializes
# `bar` with count 1, fences the init and arrives; the whole warp then waits for
# phase 0 by parity 0 (the arrive completed it, so the wait passes at once and
# consumes generation 0).
from tvm_tirx.script import tirx as T


@T.function
def mbar_arrive_before_init_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                out[tx] = tx
