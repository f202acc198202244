# The fixed twin of named_barrier_double_arrive.py: after copying a row the
# consumer hands the buffer back with bar.arrive on named barrier 2, and the
# producer waits on barrier 2 (bar.sync) before it overwrites the row and
# signals barrier 1 again, so each generation of barrier 1 gets one
# contribution from each warp.
from tvm_tirx.script import tirx as T

ROUNDS = 2


@T.function
def named_barrier_double_arrive_fixed(out: T.Tensor((ROUNDS, 32), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                for r in range(ROUNDS):
                    if warp == 0:
                        if r > 0:
                            T.ptx.bar.sync(2, 64)
                        s[lane] = r * 100 + lane
                        T.ptx.bar.arrive(1, 64)
                    else:
                        T.ptx.bar.sync(1, 64)
                        out[r, lane] = s[lane]
                        if r < ROUNDS - 1:
                            T.ptx.bar.arrive(2, 64)
