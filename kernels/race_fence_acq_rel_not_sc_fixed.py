# The fixed twin of race_fence_acq_rel_not_sc.py: both warps fence with fence.sc.
# In the runs where Q reads the mailbox it has seen go = 1, so P had loaded
# turn = 0, the value before Q's store of turn: that load (after P's fence) and
# that store (before Q's fence) force P's fence before Q's in the Fence-SC order,
# P's fence synchronizes with Q's, and the mailbox store happens before the load
# (PTX ISA §8.9.3, §8.9.4 item 1, §8.10.6 "SB").  The guard matters: when Q's
# store of turn comes first, P sees turn = 1, never sets go, and Q does not read.
from tvm_tirx.script import tirx as T


@T.function
def race_fence_acq_rel_not_sc_fixed(out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                mailbox = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                turn = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                go = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                seen = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    mailbox[0] = -1
                    turn[0] = 0
                    go[0] = 0
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        mailbox[0] = 42
                        T.ptx.fence.sc.cta()
                        T.ptx.ld.relaxed.cta.shared.b32(seen, turn.ptr_to([0]))
                        if seen == 0:
                            T.ptx.st.relaxed.cta.shared.b32(go.ptr_to([0]), T.int32(1))
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    if lane == 0:
                        T.ptx.st.relaxed.cta.shared.b32(turn.ptr_to([0]), T.int32(1))
                        T.ptx.fence.sc.cta()
                        T.ptx.ld.relaxed.cta.shared.b32(seen, go.ptr_to([0]))
                        if seen == 1:
                            out[0] = mailbox[0]
