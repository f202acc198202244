# The fixed twin of named_barrier_leftover.py: named barrier 1 counts all three
# workers (WORKERS * 32 threads), so their arrivals make exactly one generation
# in every schedule.
from tvm_tirx.script import tirx as T

WORKERS = 3
COUNT = WORKERS * 32


@T.function
def named_barrier_leftover_fixed(out: T.Tensor((WORKERS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", WORKERS * 32) as tx:
                out[tx] = tx * 3
                T.ptx.bar.arrive(1, COUNT)
