# The fixed twin of race_flag_relaxed_store.py: lane 0 sets the flag with
# st.release.cta after the warp_sync, so warp 1's ld.acquire.cta that reads it
# acquires the whole row.
from tvm_tirx.script import tirx as T


@T.function
def race_flag_relaxed_store_fixed(x: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                flag = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                row = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
                seen = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    flag[0] = 0
                T.cuda.cta_sync()
                if warp == 0:
                    row[lane] = x[lane] * 5
                    T.cuda.warp_sync()
                    if lane == 0:
                        T.ptx.st.release.cta.shared.b32(flag.ptr_to([0]), T.int32(1))
                else:
                    seen = 0
                    while seen == 0:
                        T.ptx.ld.acquire.cta.shared.b32(seen, flag.ptr_to([0]))
                    out[lane] = row[31 - lane]
