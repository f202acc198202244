# The fixed twin of named_barrier_rendezvous.py: the coordinator warp 1 meets
# warp 0 on named barrier 1 and warp 2 on named barrier 2, so each rendezvous
# has its own barrier and no schedule can pair warps 0 and 2.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_rendezvous_fixed(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((96,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    s[lane] = lane + 1
                    T.ptx.bar.sync(1, 64)
                elif warp == 1:
                    T.ptx.bar.sync(1, 64)
                    s[32 + lane] = s[lane] * 2
                    T.ptx.bar.sync(2, 64)
                else:
                    T.ptx.bar.sync(2, 64)
                    out[lane] = s[32 + lane]
