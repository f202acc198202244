# Inclusive prefix sums per warp (Hillis-Steele), two spellings.
#
# `out_ptx` uses T.ptx.shfl_sync.up.b32 (clamp value 0: a lane with no source lane
# keeps its own value and contributes nothing); `out_cuda` uses
# T.cuda.__shfl_up_sync on int32.  Several warps per CTA, several CTAs; each
# warp scans its own 32 elements independently.
from tvm_tirx.script import tirx as T

WARPS = 4
CTAS = 2
N = CTAS * WARPS * 32


@T.function
def warp_scan(x: T.Tensor((N,), T.uint32), y: T.Tensor((N,), T.int32), out_ptx: T.Tensor((N,), T.uint32),
              out_cuda: T.Tensor((N,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CTAS) as bx:
            with T.launch_thread("threadIdx.x", WARPS * 32) as tx:
                v = T.local_scalar(T.uint32)
                t = T.local_scalar(T.uint32)
                u = T.local_scalar(T.int32)
                lane: T.let[T.int32] = tx % 32
                i: T.let[T.int32] = bx * (WARPS * 32) + tx
                v = x[i]
                u = y[i]
                for k in T.unroll(5):
                    T.ptx.shfl_sync.up.b32(t, v, T.uint32(1 << k), T.uint32(0), T.uint32(0xFFFFFFFF))
                    if lane >= (1 << k):
                        v = v + t
                    w: T.let[T.int32] = T.cuda.__shfl_up_sync(T.uint32(0xFFFFFFFF), u, 1 << k, 32)
                    if lane >= (1 << k):
                        u = u + w
                out_ptx[i] = v
                out_cuda[i] = u
