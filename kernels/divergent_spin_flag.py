# One warp, two independently scheduled halves: lanes 0-15 spin on a shared flag that
# lane 16, on the other side of the same divergent branch, sets with st.release after
# writing the row the spinning lanes then read (ld.acquire pairs with it).  Before Volta
# this hangs (the spinning side never yields to the other); with independent thread
# scheduling (sm_70+) the setting side runs and the spin ends.
from tvm_tirx.script import tirx as T


@T.function
def divergent_spin_flag(x: T.Tensor((16,), T.int32), out: T.Tensor((16,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                flag = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                row = T.alloc_tensor(ty_args=[T.Tensor((16,), T.int32, scope="shared")])
                seen = T.local_scalar(T.int32)
                lane: T.let[T.int32] = tx % 32
                if lane == 0:
                    flag[0] = 0
                T.cuda.cta_sync()
                if lane < 16:
                    seen = 0
                    while seen == 0:
                        T.ptx.ld.acquire.cta.shared.b32(seen, flag.ptr_to([0]))
                    out[lane] = row[15 - lane]
                elif lane == 16:
                    for i in range(16):
                        row[i] = x[i] * 7
                    T.ptx.st.release.cta.shared.b32(flag.ptr_to([0]), T.int32(1))
