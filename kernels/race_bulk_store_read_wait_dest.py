# A bulk store's destination read back too early: thread 0 stores a tile to global memory
# with cp.async.bulk, then waits with cp.async.bulk.wait_group.read 0, which only says the
# store has finished reading its shared-memory source, not that its writes to `out` have
# landed.  A CTA barrier passes that on and every thread reads `out` back: the reads race
# with the store's writes.  The fixed twin waits with the full wait_group 0.
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def race_bulk_store_read_wait_dest(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32),
                                   back: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                stage = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                stage[tx] = x[tx] * T.float32(2.0)
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([0]), stage.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.cp.async_.bulk.commit_group()
                    T.ptx.cp.async_.bulk.wait_group.read(0)
                T.cuda.cta_sync()
                back[tx] = out[tx]
                if tx == 0:
                    T.ptx.cp.async_.bulk.wait_group(0)
