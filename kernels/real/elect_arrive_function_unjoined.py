# Bug twin of elect_arrive_function.py (reference bug B14): the producer warp's elected
# lane arrives on full right after its own write of the slot, without the warp join.  The
# mbarrier arrival releases only the elected lane's writes; the other 31 lanes' writes of
# the slot are unordered with the consumer's reads of them.
from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def elect_arrive_function_unjoined(x: T.Tensor((ROUNDS, 32), T.float32), out: T.Tensor((ROUNDS, 32), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                slot = T.alloc_shared((32,), T.float32)
                full = T.alloc_shared((1,), T.uint64)
                empty = T.alloc_shared((1,), T.uint64)
                phase = T.local_scalar(T.int32)
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), 1)
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    phase = 1
                    for r in T.serial(ROUNDS, unroll=False):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), phase)
                        slot[lane] = x[r, lane] + T.Cast("float32", r)
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                        phase = phase ^ 1
                else:
                    phase = 0
                    for r in T.serial(ROUNDS, unroll=False):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), phase)
                        out[r, lane] = slot[lane] * T.float32(0.5)
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
                        phase = phase ^ 1
