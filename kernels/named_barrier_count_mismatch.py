# Bug: named_barrier_contract_mismatch.  Warps 0 and 1 meet on named barrier 1,
# but warp 1 passes a thread count of 32 (its own size) where warp 0 passes 64
# (both warps): one generation of a named barrier must have one thread count.
# Mirrors the reference tool's native_synccheck_named_barrier_contract_mismatch
# (64 vs 32).  The fix, named_barrier_count_mismatch_fixed.py, passes 64 on
# both sides.
from tvm_tirx.script import tirx as T


@T.function
def named_barrier_count_mismatch(out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if warp == 0:
                    s[lane] = lane * 3
                    T.ptx.bar.sync(1, 64)
                else:
                    T.ptx.bar.sync(1, 32)
                    out[lane] = s[31 - lane]
