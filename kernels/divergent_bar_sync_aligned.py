# Bug: warp_collective_divergence.  Two halves of one warp exchange values through
# shared memory, each half at its own barrier site (lanes 0-15 in the `if`, 16-31 in the
# `else`), but with the aligned bar.sync: the aligned form requires every thread of the
# warp to execute the same bar.sync instruction, so a half-warp at each of two sites is
# undefined behaviour.  The fix (divergent_bar_sync_aligned_fixed.py) uses the
# non-aligned barrier.sync, which counts threads and lets the two independently
# scheduled halves complete one 32-thread generation.
from tvm_tirx.script import tirx as T


@T.function
def divergent_bar_sync_aligned(x: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                lane: T.let[T.int32] = tx % 32
                if lane < 16:
                    s[lane] = x[lane] * 3
                    T.ptx.bar.sync(1, 32)
                    out[lane] = s[lane + 16]
                else:
                    s[lane] = x[lane] + 100
                    T.ptx.bar.sync(1, 32)
                    out[lane] = s[lane - 16]
