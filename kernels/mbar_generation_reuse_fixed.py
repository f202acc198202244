# The fixed twin of mbar_generation_reuse.py, the reference tool's
# native_synccheck_generation_reuse(consume=1): the warp waits for generation 0
# (parity 0) before its second arrive starts generation 1, then waits for
# generation 1 (parity 1).
from tvm_tirx.script import tirx as T

CONSUME = 1


@T.function
def mbar_generation_reuse_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                if CONSUME == 1:
                    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
                if tx == 0:
                    T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)
                out[tx] = tx
