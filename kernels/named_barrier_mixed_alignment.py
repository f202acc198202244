# Bug: aligned_sync_contract_mismatch.  Two role branches meet on named barrier
# 3: the producer branch uses the aligned form bar.sync (barrier.sync.aligned),
# the consumer branch the unaligned barrier.sync.  One generation of a named
# barrier must not mix aligned and unaligned blocking syncs (the aligned form
# promises every participant executes that same instruction).  The historical
# fix (reference bug B5) respells every site as the unaligned barrier.sync:
# named_barrier_mixed_alignment_fixed.py.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_mixed_alignment(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    s[lane] = lane + 5
                    T.ptx.bar.sync(3, 64)
                else:
                    T.ptx.barrier.sync(3, 64)
                    out[lane] = s[lane]
