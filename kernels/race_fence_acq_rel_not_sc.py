# Bug: fence.acq_rel where the protocol needs fence.sc.  Warp 0 lane 0 posts a
# value to a shared mailbox and executes a fence; warp 1 lane 0, later, executes
# a fence and reads the mailbox — there is no flag between them.  With fence.sc
# on both sides the two fences are ordered one way or the other in the fence-SC
# order, and either way the store and the load are ordered (the load sees the
# old value or the new one, never a racing one).  fence.acq_rel only orders
# through a release/acquire pattern on some flag, and there is none: the
# publisher's fence.acq_rel gives no edge to the reader.  Mirrors the reference
# tool's test_sc_causality_and_lane_controls.  The fix,
# race_fence_acq_rel_not_sc_fixed.py, uses fence.sc on the publisher too.
from tvm_tirx.script import tirx as T


@T.function
def race_fence_acq_rel_not_sc(out: T.Tensor((1,), T.int32)):
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
                        T.ptx.fence.acq_rel.cta()
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    if lane == 0:
                        T.ptx.fence.sc.cta()
                        out[0] = mailbox[0]
