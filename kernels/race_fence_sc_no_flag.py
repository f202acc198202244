# Bug: a flagless handoff that trusts fence.sc to order it.  Warp 0 lane 0 posts
# a value to a shared mailbox and executes fence.sc; warp 1 lane 0, later in the
# simulated run, executes fence.sc and reads the mailbox.  PTX orders every pair
# of morally strong fence.sc in the Fence-SC order, but which one comes first is
# "determined at runtime" (PTX ISA §8.9.3): when the reader's fence comes first,
# it synchronizes with the publisher's, which orders nothing the handoff needs —
# the reader's load is after its fence and the publisher's store before its own.
# Nothing in this kernel forces the publisher's fence first (no access after it
# is observed by the reader before its fence), so the store and the load race.
# (Until issue 21 this file was race_fence_acq_rel_not_sc_fixed.py and checked
# clean: the checker took the simulated order of the two fences as the Fence-SC
# order.)  The fix, race_fence_sc_no_flag_fixed.py, publishes through a flag.
from tvm_tirx.script import tirx as T


@T.function
def race_fence_sc_no_flag(out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                mailbox = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    mailbox[0] = -1
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        mailbox[0] = 42
                        T.ptx.fence.sc.cta()
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    if lane == 0:
                        T.ptx.fence.sc.cta()
                        out[0] = mailbox[0]
