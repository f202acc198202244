# The fixed twin of named_barrier_count_mismatch.py: both warps pass the thread
# count of the whole rendezvous (64) to named barrier 1.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_count_mismatch_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    s[lane] = lane * 3
                    T.ptx.bar.sync(1, 64)
                else:
                    T.ptx.bar.sync(1, 64)
                    out[lane] = s[31 - lane]
