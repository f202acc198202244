# Bug: fixed_sync_protocol_error — aligned and unaligned syncs that can meet in
# one named-barrier generation.  Two independent pairs reuse named barrier 2:
# warps 0-1 with the aligned bar.sync, warps 2-3 with the unaligned
# barrier.sync, both with 64 threads.  The simulated run completes the first
# pair's generation before the second pair arrives, so each generation it saw
# was all aligned or all unaligned.  In the schedule where warp 0 and warp 2 meet
# first, one generation mixes aligned and unaligned blocking syncs.  Mirrors the
# phase-B case of the reference tool's test_native_split_site_named_barrier.  The
# fix, named_barrier_alignment_schedule_fixed.py, gives the second pair its own
# barrier id.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_alignment_schedule(out: T.Tensor((128,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((128,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                s[tx] = tx + 11
                if warp < 2:
                    T.ptx.bar.sync(2, 64)
                    out[tx] = s[63 - tx]
                else:
                    T.ptx.barrier.sync(2, 64)
                    out[tx] = s[64 + 127 - tx]
