# Bug: a bulk store's source buffer is reused before the store has read it.
# The CTA writes the output in two halves through one shared staging tile: each
# half is written to `stage`, fenced for the async proxy, and thread 0 stores it
# with cp.async.bulk (shared::cta -> global, bulk group) and commits.  The next
# half then overwrites `stage` at once — but the previous store is still
# reading it asynchronously until cp.async.bulk.wait_group.read retires its
# group, so the first half of `out` can receive second-half values.  The fix,
# race_bulk_store_source_reuse_fixed.py, has thread 0 wait for the reads to
# drain (wait_group.read 0) and a CTA barrier publish that before the rewrite.
from tvm_tirx.script import tirx as T

TILE = 128
HALVES = 2
NBYTES = TILE * 4


@T.function
def race_bulk_store_source_reuse(x: T.Tensor((HALVES * TILE,), T.float32), out: T.Tensor((HALVES * TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                stage = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared", align=128)])
                for h in range(HALVES):
                    stage[tx] = x[h * TILE + tx] * T.float32(2.0)
                    T.ptx.fence.proxy.async_.shared__cta()
                    T.cuda.cta_sync()
                    if tx == 0:
                        T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](out.ptr_to([h * TILE]), stage.ptr_to([0]), T.uint32(NBYTES))
                        T.ptx.cp.async_.bulk.commit_group()
                if tx == 0:
                    T.ptx.cp.async_.bulk.wait_group(0)
