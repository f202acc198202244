# Bug: a write/write race between two warps.  Both warps set up the header word
# of a shared tile: warp 0 writes the default tag, warp 1 overrides it with its
# own.  Nothing orders the two stores, so which tag survives depends on the
# schedule (the simulated run happens to let warp 1 win).  Mirrors the
# reference tool's native_racecheck_write_write.  The fix,
# race_write_write_fixed.py, hands the word from warp 0 to warp 1 with an
# mbarrier: warp 1 overrides only after it has observed warp 0's arrival.
from tvm_tirx.script import tirx as T


@T.function
def race_write_write(out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                header = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    if lane == 0:
                        header[0] = 7
                else:
                    if lane == 0:
                        header[0] = 9
                T.cuda.cta_sync()
                if tx == 0:
                    out[0] = header[0]
