# The fixed twin of race_fence_sc_no_flag.py: the publisher sets a flag with a
# relaxed store after its fence, and the reader spins on the flag with relaxed
# loads and fences after it has seen it set.  "fence; st.relaxed flag" is a
# release pattern and "ld.relaxed flag; fence" an acquire pattern; the load that
# reads the flag set synchronizes them (PTX ISA §8.8, §8.9.4 item 4), so the
# mailbox store happens before the mailbox load in every execution.  (The
# fences could as well be fence.acq_rel: message passing does not need fence.sc.)
from tvm_tirx.script import tirx as T


@T.function
def race_fence_sc_no_flag_fixed(out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                mailbox = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                flag = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                seen = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    mailbox[0] = -1
                    flag[0] = 0
                T.cuda.cta_sync()
                if warp == 0:
                    if lane == 0:
                        mailbox[0] = 42
                        T.ptx.fence.sc.cta()
                        T.ptx.st.relaxed.cta.shared.b32(flag.ptr_to([0]), T.int32(1))
                else:
                    if lane == 0:
                        seen = 0
                        while seen == 0:
                            T.ptx.ld.relaxed.cta.shared.b32(seen, flag.ptr_to([0]))
                        T.ptx.fence.sc.cta()
                        out[0] = mailbox[0]
