# The fixed twin of race_bulk_store_source_reuse.py: before rewriting the
# staging tile, thread 0 waits until the previous bulk store has finished
# reading it (cp.async.bulk.wait_group.read 0) and a CTA barrier passes that on
# to every writer; each writer then fences (fence.proxy.async.shared::cta: the
# store's reads were async-proxy accesses, and the wait bridges only a copy's
# destination bytes) before its generic write.
from tvm_tirx.script import tirx as T

TILE = 128
HALVES = 2
NBYTES = TILE * 4


@T.function
def race_bulk_store_source_reuse_fixed(x: T.Tensor((HALVES * TILE,), T.float32), out: T.Tensor((HALVES * TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                stage = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                for h in range(HALVES):
                    if h > 0:
                        # the previous store must be done reading stage before it is rewritten
                        if tx == 0:
                            T.ptx.cp.async_.bulk.wait_group.read(0)
                        T.cuda.cta_sync()
                        # the store's reads were async-proxy accesses: bridge them to these generic writes
                        T.ptx.fence.proxy.async_.shared__cta()
                    stage[tx] = x[h * TILE + tx] * T.float32(2.0)
                    T.ptx.fence.proxy.async_.shared__cta()
                    T.cuda.cta_sync()
                    if tx == 0:
                        T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([h * TILE]), stage.ptr_to([0]), T.uint32(NBYTES))
                        T.ptx.cp.async_.bulk.commit_group()
                if tx == 0:
                    T.ptx.cp.async_.bulk.wait_group(0)
