# The fixed twin of trailing_warp_count288.py, the reference tool's
# native_trailing_warp_mbarrier(256): nine warps, eight of which arrive with all
# 32 threads on `done`, initialized with the 256 arrivals that come; all nine
# warps (the trailing warp 8 included) wait for phase 0.
from tvm_tirx.script import tirx as T

WARPS = 9
EXPECTED = 256


@T.function
def trailing_warp_count256(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", WARPS * 32) as tx:
                done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                rows = T.alloc_tensor(ty_args=[T.Tensor((WARPS - 1, 32), T.int32, scope="shared")])
                acc = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(done.ptr_to([0]), T.uint32(EXPECTED))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp < WARPS - 1:
                    rows[warp, lane] = warp * 32 + lane
                    T.ptx.mbarrier.arrive.shared.b64(done.ptr_to([0]))
                T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
                if warp == WARPS - 1:
                    acc = 0
                    for k in range(WARPS - 1):
                        acc = acc + rows[k, lane]
                    out[lane] = acc
