# Bug: fixed_sync_protocol_error — a schedule-dependent named-barrier contract
# mismatch.  Two independent groups reuse named barrier 1 for their own
# rendezvous: the pair of warps 0-1 with bar.sync(1, 64) and the trio of warps
# 2-4 with bar.sync(1, 96).  The simulated run happens to complete the pair's
# generation before the trio arrives, so every generation it saw had one thread
# count.  Nothing orders the two groups, though: in the schedule where warp 2
# reaches barrier 1 while only warp 0 is there, one generation gets both 64 and
# 96.  Phase B (the schedule exploration) finds it; phase A cannot.  The fix,
# named_barrier_group_sizes_fixed.py, gives the trio its own barrier id.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_group_sizes(out: T.Tensor((160,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 160) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((160,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                s[tx] = tx * 2
                if warp < 2:
                    T.ptx.bar.sync(1, 64)
                    out[tx] = s[63 - tx]
                else:
                    T.ptx.bar.sync(1, 96)
                    out[tx] = s[64 + 159 - tx]
