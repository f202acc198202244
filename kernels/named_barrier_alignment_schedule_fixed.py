# The fixed twin of named_barrier_alignment_schedule.py: the aligned pair (warps
# 0-1) meets on named barrier 2 and the unaligned pair (warps 2-3) on named
# barrier 3, so no generation can mix the two forms.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_alignment_schedule_fixed(out: T.Tensor((128,), T.int32)):
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
                    T.ptx.barrier.sync(3, 64)
                    out[tx] = s[64 + 127 - tx]
