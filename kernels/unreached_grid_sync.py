# Review: unsupported_operation_not_reached.  A reduction kernel has a multi-CTA path
# that meets at a grid-wide sync (T.cuda.grid_sync, outside the modeled set) and a
# single-CTA path with a CTA barrier.  With one CTA (the default) the grid path never
# runs, so the checkers see only the single-CTA path: the verdict covers the paths these
# inputs took, and the report says that an operation it cannot model was not reached.
# The twin, unreached_grid_sync_fixed.py, has only the single-CTA path.
from tvm_tirx.script import tirx as T

CTAS = 1


@T.function
def unreached_grid_sync(x: T.Tensor((CTAS * 32,), T.int32), out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CTAS) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                part = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                part[tx] = x[bx * 32 + tx]
                if CTAS > 1:
                    T.cuda.grid_sync()
                else:
                    T.cuda.cta_sync()
                if tx == 0 and bx == 0:
                    acc = T.local_scalar(T.int32)
                    acc = 0
                    for i in range(32):
                        acc = acc + part[i]
                    out[0] = acc
