# Bug: the consumer reads the tile before it waits for it.  Warp 0 (producer)
# fills a shared tile, reconverges with warp_sync and its lane 0 arrives on
# `full`; warp 1 (consumer) waits on `full` and copies the tile out.  But the
# consumer's load of the tile was hoisted above its wait, so the read is not
# ordered after the producer's writes: it can see stale bytes.  The simulated
# run happens to run the producer first, so the values even look right.  The
# fix, race_read_before_wait_fixed.py, reads after the wait.
from tvm_tirx.script import tirx as T


@T.function
def race_read_before_wait(src: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                tile = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    tile[lane] = src[lane] * 3
                    T.cuda.warp_sync()
                    if lane == 0:
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    v: T.let[T.int32] = tile[31 - lane]
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    out[lane] = v
