# A one-slot handoff with elected arrivals, in the apache-tvm-tirx 0.1.0a4 authoring form
# (@T.function, T.Tensor parameters, launch_thread regions) with the allocation helpers
# kernels use: T.alloc_shared for the slot and barriers, T.local_scalar for the phase
# cursor, T.serial(n, unroll=False) for the round loop.  Every lane of the producer warp
# writes its element of the slot (x + r), the warp joins (warp_sync) so that all 32 writes
# are ordered before the elected lane's arrival on full (count 1); the consumer warp waits,
# writes out = slot * 0.5, joins and lets one elected lane release the slot on empty.
from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def elect_arrive_function(x: T.Tensor((ROUNDS, 32), T.float32), out: T.Tensor((ROUNDS, 32), T.float32)):
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
                        T.cuda.warp_sync()
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
