# The fixed twin of bulk_store_exit_unwaited.py: the storing thread waits until the bulk
# store has read its source (cp.async.bulk.wait_group.read 0) before it exits, as
# CUTLASS's tma_store_wait<0>() does; the global writes land before the grid completes.
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def bulk_store_exit_unwaited_fixed(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                tile = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                tile[tx] = x[tx] + T.float32(3.0)
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([0]), tile.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx["cp.async.bulk.wait_group.read"](0)
