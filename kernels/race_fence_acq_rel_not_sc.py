# Bug: fence.acq_rel where a store-buffering handshake needs fence.sc.  Warp 0
# lane 0 (P) posts a value to a shared mailbox, fences, and loads the `turn`
# flag; only if it is still 0 (warp 1 has not yet announced itself) does P set
# `go`.  Warp 1 lane 0 (Q) announces itself by storing turn = 1, fences, loads
# `go`, and reads the mailbox only if go is set.  The flags are relaxed (morally
# strong), the mailbox is a plain location.  With fence.sc on both sides, P's
# load of turn returning the old 0 forces P's fence before Q's in the Fence-SC
# order (else Q's store of turn would precede P's load in causality order), so
# P's fence synchronizes with Q's and the mailbox store happens before Q's
# mailbox load (PTX ISA §8.9.3, §8.9.4 item 1, §8.10.6 "SB").  With fence.acq_rel
# that is "not guaranteed" (§8.10.6): go = 1 carries no release/acquire pattern
# to Q (Q's fence precedes its load of go), so nothing orders the mailbox store
# before the load.  The fix, race_fence_acq_rel_not_sc_fixed.py, uses fence.sc.
from tvm_tirx.script import tirx as T


@T.function
def race_fence_acq_rel_not_sc(out: T.Tensor((1,), T.int32)):
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
                        T.ptx.fence.acq_rel.cta()
                        T.ptx.ld.relaxed.cta.shared.b32(seen, turn.ptr_to([0]))
                        if seen == 0:
                            T.ptx.st.relaxed.cta.shared.b32(go.ptr_to([0]), T.int32(1))
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    if lane == 0:
                        T.ptx.st.relaxed.cta.shared.b32(turn.ptr_to([0]), T.int32(1))
                        T.ptx.fence.acq_rel.cta()
                        T.ptx.ld.relaxed.cta.shared.b32(seen, go.ptr_to([0]))
                        if seen == 1:
                            out[0] = mailbox[0]
