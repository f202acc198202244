# The fixed twin of race_relaxed_try_wait.py: the consumer polls with
# mbarrier.try_wait.parity.acquire.cta, whose successful poll acquires what the
# producer released with its arrive.
from tvm_tirx.script import tirx as T


@T.function
def race_relaxed_try_wait_fixed(x: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                params = T.alloc_tensor(ty_args=[T.Tensor((2,), T.int32, scope="shared")])
                ok = T.local_scalar(T.uint32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        params[0] = x[0] + 3
                        params[1] = x[1] * 2
                        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
                else:
                    ok = T.uint32(0)
                    while ok == T.uint32(0):
                        T.ptx.mbarrier.try_wait.parity.acquire.cta.shared__cta.b64(ok, bar.ptr_to([0]), T.uint32(0))
                    out[lane] = x[lane] * params[0] + params[1]
