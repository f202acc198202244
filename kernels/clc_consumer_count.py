# A persistent kernel under a cluster-launch-control tile scheduler (issue 17, item 5): NUM_TILES one-CTA
# clusters are launched, one tile each, and a running CTA takes the tiles of CTAs that have not started with
# clusterlaunchcontrol.try_cancel.  Thread 0 (the producer and scheduler) hands each tile id to thread 32 (the
# consumer) through a one-slot ring (full/empty), then asks for the next tile; thread 32 writes out[tile].
# Seeded bug, COUNTED = 1: the consumer expects NUM_TILES tiles, which is what it gets only while every request
# cancels a pending CTA.  On hardware a request may find none left although CTAs were pending (they launched
# elsewhere meanwhile): the producer exits early and the consumer waits forever for a tile nobody hands out.
# NumSim's default answers cancel while CTAs are pending, so one run is clean; Synccheck runs the kernel once
# per answer sequence and finds the hang.  COUNTED = 0 (the fix): the producer hands out -1 when none remain
# and the consumer stops there.
from tvm_tirx.script import tirx as T

NUM_TILES = 3
COUNTED = 0


@T.function
def clc_consumer_count(out: T.Tensor((NUM_TILES,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", NUM_TILES) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                clc_full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                clc_resp = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint32, scope="shared", align=16)])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                resp = T.local_scalar(T.uint128)
                canceled = T.local_scalar(T.uint32)
                next_cta = T.local_scalar(T.uint32)
                tile = T.local_scalar(T.int32)
                it = T.local_scalar(T.int32)
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(empty.ptr_to([0]), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(clc_full.ptr_to([0]), T.uint32(1))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if tx == 0:
                    tile = bx
                    it = 0
                    while tile >= 0:
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (it + 1) % 2)
                        slot[0] = tile
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                        # the next tile: the response lands with 16 tx bytes on clc_full
                        T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(clc_full.ptr_to([0]), T.uint32(16))
                        T.ptx.clusterlaunchcontrol.try_cancel.async_.shared__cta.mbarrier__complete_tx__bytes.b128(clc_resp.ptr_to([0]), clc_full.ptr_to([0]))
                        T.cuda.mbarrier_wait(clc_full.ptr_to([0]), it % 2)
                        T.ptx.ld.shared.b128(resp, T.cuda.cvta_generic_to_shared(clc_resp.ptr_to([0])))
                        T.ptx.clusterlaunchcontrol.query_cancel.is_canceled.pred.b128(canceled, resp)
                        next_cta = T.uint32(0xFFFFFFFF)
                        T.ptx.clusterlaunchcontrol.query_cancel.get_first_ctaid__x.b32.b128(next_cta, resp, pred=canceled != T.uint32(0))
                        # the next request's asynchronous write of the response comes after this read
                        T.ptx.fence.proxy.async_.shared__cta()
                        if next_cta == T.uint32(0xFFFFFFFF):
                            tile = -1
                        else:
                            tile = T.Cast("int32", next_cta)
                        it = it + 1
                    if COUNTED == 0:
                        # none remain: tell the consumer
                        T.cuda.mbarrier_wait(empty.ptr_to([0]), (it + 1) % 2)
                        slot[0] = -1
                        T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                elif tx == 32:
                    if COUNTED == 1:
                        for i in range(NUM_TILES):
                            T.cuda.mbarrier_wait(full.ptr_to([0]), i % 2)
                            tile = slot[0]
                            out[tile] = tile * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
                    else:
                        it = 0
                        tile = 0
                        while tile >= 0:
                            T.cuda.mbarrier_wait(full.ptr_to([0]), it % 2)
                            tile = slot[0]
                            if tile >= 0:
                                out[tile] = tile * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([0]))
                            it = it + 1
