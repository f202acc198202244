# Bug: an elected lane arrives for the whole warp before the warp's writes are
# joined.  Every lane of the producer warp writes its element of the tile, then
# lane 0 alone arrives on `full` (count 1).  An mbarrier arrive releases only
# the arriving lane's own history: lanes 1-31's writes are not published, so
# the consumer's reads of them race.  The fix,
# race_elect_arrive_unjoined_fixed.py, joins the lanes with warp_sync before the
# elected arrive.
from tvm_tirx.script import tirx as T


@T.function
def race_elect_arrive_unjoined(src: T.Tensor((32,), T.float32), out: T.Tensor((32,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((32,), T.float32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    tile[lane] = src[lane] * T.float32(0.5)
                    if lane == 0:
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    out[lane] = tile[lane]
