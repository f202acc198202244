# Twin of unreached_grid_sync.py with only the single-CTA path: every operation it has is
# modeled, so the one-CTA verdict covers the whole kernel.
from tvm_tirx.script import tirx as T

CTAS = 1


@T.function
def unreached_grid_sync_fixed(x: T.Tensor((CTAS * 32,), T.int32), out: T.Tensor((1,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CTAS) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                part = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                part[tx] = x[bx * 32 + tx]
                T.cuda.cta_sync()
                if tx == 0 and bx == 0:
                    acc = T.local_scalar(T.int32)
                    acc = 0
                    for i in range(32):
                        acc = acc + part[i]
                    out[0] = acc
