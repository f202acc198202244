# Bug: generic reads of a slot, then a bulk load overwrites it, with no proxy
# fence (write-after-read across proxies; the MegaMoE defect).  Warp 0 loads one
# tile per round into `buf` with cp.async.bulk (complete_tx on `full`); warp 1
# waits `full`, reads the tile with ordinary loads and releases the slot on
# `empty`.  The producer waits `empty` before the next copy, so the reads
# happen before that copy's issue — but the copy writes through the async proxy,
# and the mbarrier handoff orders generic accesses only: without
# fence.proxy.async the next tile may land under the reader's loads.  The fix,
# race_bulk_reload_no_fence_fixed.py, fences the reads in the consumer before it
# releases the slot.
from tvm_tirx.script import tirx as T

ROUNDS = 3
TILE = 32
NBYTES = TILE * 4


@T.function
def race_bulk_reload_no_fence(src: T.Tensor((ROUNDS * TILE,), T.float32), out: T.Tensor((ROUNDS * TILE,), T.float32)):
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
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
