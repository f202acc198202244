# The fixed twin of collective_in_while.py, the uniform mode of the reference
# tool's native_collective_in_while: the loop condition reads the warp total,
# which the butterfly reduction leaves in every lane, so all 32 lanes enter and
# leave the loop together and every shuffle runs with the full warp.
from tvm_tirx.script import tirx as T

LIMIT = 100


@T.function
def collective_in_while_fixed(x: T.Tensor((64,), T.int32), out: T.Tensor((64,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                total = T.local_scalar(T.int32)
                s = T.local_scalar(T.int32)
                total = 0
                while total < LIMIT:
                    s = x[tx] % 4 + 1
                    for k in T.unroll(5):
                        s = s + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), s, 1 << k, 32)
                    total = total + s
                out[tx] = total
