# Bug: launch_exceeds_hardware_limits.  A pipelined copy stages STAGES tiles of 128 x 128
# float32 (64 KB each) in shared memory: with four stages the CTA asks for 256 KB, above
# the 227 KB a thread block may use on sm_90/sm_100 (CUDA Programming Guide, technical
# specifications per compute capability), so the launch fails on the hardware.  The fix,
# smem_stages_over_limit_fixed.py, keeps three stages (192 KB).
from tvm_tirx.script import tirx as T

STAGES = 4
ROWS = 128
COLS = 128


@T.function
def smem_stages_over_limit(x: T.Tensor((STAGES * ROWS, COLS), T.float32), out: T.Tensor((STAGES * ROWS, COLS), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                tiles = T.alloc_tensor(ty_args=[T.Tensor((STAGES, ROWS, COLS), T.float32, scope="shared")])
                for s in range(STAGES):
                    for c in range(COLS):
                        tiles[s, tx, c] = x[s * ROWS + tx, c]
                T.cuda.cta_sync()
                for s in range(STAGES):
                    for c in range(COLS):
                        out[s * ROWS + tx, c] = tiles[STAGES - 1 - s, tx, c]
