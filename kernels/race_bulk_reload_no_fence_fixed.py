# The fixed twin of race_bulk_reload_no_fence.py: every consumer lane executes
# fence.proxy.async.shared::cta after its read and before the warp_sync and
# arrive that release the slot, so the release carries a generic->async bridge
# to the producer's next bulk copy.
from tvm_tirx.script import tirx as T

ROUNDS = 3
TILE = 32
NBYTES = TILE * 4


@T.function
def race_bulk_reload_no_fence_fixed(src: T.Tensor((ROUNDS * TILE,), T.float32), out: T.Tensor((ROUNDS * TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)
                        if lane == 0:
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([r * TILE]), T.uint32(NBYTES), full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        out[r * TILE + lane] = buf[lane] + T.float32(1.0)
                        # order the generic reads before the next bulk copy (async proxy) into buf
                        T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
