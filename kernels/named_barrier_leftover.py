# Bug: fixed_sync_nonconfluent.  Three worker warps each signal the end of their
# work with bar.arrive on named barrier 1, whose thread count says 64 (it was
# sized for two workers before a third was added).  Nobody waits on barrier 1
# here, so nothing hangs, but the generations depend on the schedule: whichever
# two warps arrive first complete generation 0 and the third is left alone in
# generation 1 — the kernel ends in a different barrier state depending on
# which warp is last.  Phase A sees one run and no violation; phase B finds
# schedules that end in different protocol states.  The fix,
# named_barrier_leftover_fixed.py, counts all three workers (96).
from tvm_tirx.script import tirx as T

WORKERS = 3
COUNT = 64


@T.function
def named_barrier_leftover(out: T.Tensor((WORKERS * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", WORKERS * 32) as tx:
                out[tx] = tx * 3
                T.ptx.bar.arrive(1, COUNT)
