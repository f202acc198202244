# Bug: a schedule-dependent deadlock (phase B `deadlock`).  The coordinator warp
# 1 meets warp 0 (to take its row) and then warp 2 (to hand the doubled row on),
# both times on named barrier 1 with 64 threads.  The simulated run happens to
# pair them as intended (warp 0 is there first, then warp 2 joins the
# coordinator's second sync).  But nothing keeps warp 2 away from the first
# generation: if warps 0 and 2 reach barrier 1 first, they complete it together
# and the coordinator's sync waits forever for a partner.  Phase A sees a clean
# run; phase B finds the schedule.  The fix, named_barrier_rendezvous_fixed.py,
# uses a separate barrier id for each rendezvous.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_rendezvous(out: T.Tensor((32,), T.int32)):
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
                    T.ptx.bar.sync(1, 64)
                else:
                    T.ptx.bar.sync(1, 64)
                    out[lane] = s[32 + lane]
