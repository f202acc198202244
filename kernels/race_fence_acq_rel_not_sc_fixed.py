# The fixed twin of race_fence_acq_rel_not_sc.py: both sides execute fence.sc,
# so the publisher's fence and the reader's fence are ordered in the fence-SC
# order and the mailbox store and load are ordered whichever comes first.
from tvm_tirx.script import tirx as T


@T.function
def race_fence_acq_rel_not_sc_fixed(out: T.Tensor((1,), T.int32)):
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
