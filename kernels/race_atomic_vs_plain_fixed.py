# The fixed twin of race_atomic_vs_plain.py: both warps update the counter with
# atom.add (strong, same proxy, covering scopes), so the updates do not race.
from tvm_tirx.script import tirx as T


@T.function
def race_atomic_vs_plain_fixed(x: T.Tensor((64,), T.int32), out: T.Tensor((1,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                count = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                old = T.local_scalar(T.uint32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    count[0] = T.uint32(0)
                T.cuda.cta_sync()
                if warp == 0:
                    # each lane of warp 0 counts its element if it is non-negative
                    if x[tx] >= 0:
                        T.ptx.atom.shared.add.u32(old, count.ptr_to([0]), T.uint32(1))
                else:
                    # warp 1 reduces its elements first and adds the warp's total once
                    n: T.let[T.int32] = T.cuda.warp_sum(T.Select(x[tx] >= 0, 1, 0))
                    if lane == 0:
                        T.ptx.atom.shared.add.u32(old, count.ptr_to([0]), T.Cast("uint32", n))
                T.cuda.cta_sync()
                if tx == 0:
                    out[0] = count[0]
