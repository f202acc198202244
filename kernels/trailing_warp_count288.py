# Bug: deadlock from an arrival count that includes a warp that never arrives.
# Nine warps; warps 0-7 each publish a row and arrive on `done` with all 32
# threads (256 arrivals), then all nine warps wait for phase 0 and warp 8, the
# trailing warp, sums the rows.  `done` is initialized with 9 * 32 = 288, as if
# the trailing warp arrived too: the phase stays at 256/288 arrivals and every
# warp blocks.  Mirrors the reference tool's native_trailing_warp_mbarrier(288)
# ("arrival_count=256/288").  The fix, trailing_warp_count256.py, initializes
# with the 256 arrivals that do come.
from tvm_tirx.script import tirx as T

WARPS = 9
EXPECTED = 288


@T.function
def trailing_warp_count288(out: T.Tensor((32,), T.int32)):
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
