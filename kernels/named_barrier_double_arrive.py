# Bug: named_barrier_arrival_overflow.  Warp 0 produces ROUNDS rows and signals
# each with bar.arrive on named barrier 1 (64 threads: producer and consumer);
# warp 1 consumes each row after bar.sync on barrier 1.  Nothing makes the
# producer wait for the consumer, so its round-1 bar.arrive lands in the same
# generation as its round-0 arrive: warp 0 contributes twice to one generation,
# which on hardware completes the barrier without the consumer.  The fix,
# named_barrier_double_arrive_fixed.py, adds the hand-back on barrier 2.
from tvm_tirx.script import tirx as T

ROUNDS = 2


@T.function
def named_barrier_double_arrive(out: T.Tensor((ROUNDS, 32), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                for r in range(ROUNDS):
                    if warp == 0:
                        s[lane] = r * 100 + lane
                        T.ptx.bar.arrive(1, 64)
                    else:
                        T.ptx.bar.sync(1, 64)
                        out[r, lane] = s[lane]
