# The fixed twin of race_flag_cta_scope.py: st.release.gpu and ld.acquire.gpu
# cover both CTAs, so CTA 1's acquire load that reads the flag acquires CTA 0's
# row writes.
from tvm_tirx.script import tirx as T


@T.function
def race_flag_cta_scope_fixed(x: T.Tensor((32,), T.int32), row: T.Tensor((32,), T.int32), flag: T.Tensor((1,), T.int32),
       out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                seen = T.local_scalar(T.int32)
                if bx == 0:
                    row[tx] = x[tx] * 5
                    T.cuda.warp_sync()
                    if tx == 0:
                        T.ptx.st.release.gpu.global_.b32(flag.ptr_to([0]), T.int32(1))
                else:
                    seen = 0
                    while seen == 0:
                        T.ptx.ld.acquire.gpu.global_.b32(seen, flag.ptr_to([0]))
                    out[tx] = row[31 - tx]
