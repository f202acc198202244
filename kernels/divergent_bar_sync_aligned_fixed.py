# Two halves of one warp exchange values through shared memory, each half at its own
# barrier site.  Lanes 0-15 take the `if`, lanes 16-31 the `else`; each half writes its
# slots, meets the other at named barrier 1 (32 threads), and reads the other half's
# slots.  Since Volta the two sides of a divergent branch are scheduled independently,
# and the non-aligned barrier.sync counts threads: the 16 + 16 threads from the two
# sites complete one 32-thread generation.  (The buggy twin,
# divergent_bar_sync_aligned.py, uses the aligned bar.sync, which needs the whole warp at
# one site.)
from tvm_tirx.script import tirx as T


@T.function
def divergent_bar_sync_aligned_fixed(x: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                lane: T.let[T.int32] = tx % 32
                if lane < 16:
                    s[lane] = x[lane] * 3
                    T.ptx.barrier.sync(1, 32)
                    out[lane] = s[lane + 16]
                else:
                    s[lane] = x[lane] + 100
                    T.ptx.barrier.sync(1, 32)
                    out[lane] = s[lane - 16]
