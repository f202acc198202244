# Fixed twin of smem_stages_over_limit.py: three stages of 64 KB (192 KB of shared
# memory per block) fit the 227 KB limit of sm_90/sm_100.
from tvm_tirx.script import tirx as T

STAGES = 3
ROWS = 128
COLS = 128


@T.function
def smem_stages_over_limit_fixed(x: T.Tensor((STAGES * ROWS, COLS), T.float32), out: T.Tensor((STAGES * ROWS, COLS), T.float32)):
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
