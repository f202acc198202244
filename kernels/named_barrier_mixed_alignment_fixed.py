# The fixed twin of named_barrier_mixed_alignment.py: both role branches use the
# unaligned barrier.sync on named barrier 3 (different static sites are fine for
# the unaligned form).
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_mixed_alignment_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    s[lane] = lane + 5
                    T.ptx.barrier.sync(3, 64)
                else:
                    T.ptx.barrier.sync(3, 64)
                    out[lane] = s[lane]
