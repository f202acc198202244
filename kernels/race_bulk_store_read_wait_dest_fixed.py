# The fixed twin of race_bulk_store_read_wait_dest.py: thread 0 waits for the bulk store to
# complete (cp.async.bulk.wait_group 0: its writes to `out` are done and visible to the
# waiting thread) before the CTA barrier, so every thread's read of `out` follows them.
from tvm_tirx.script import tirx as T

TILE = 128
NBYTES = TILE * 4


@T.function
def race_bulk_store_read_wait_dest_fixed(x: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32),
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
                    T.ptx.cp.async_.bulk.wait_group(0)
                T.cuda.cta_sync()
                back[tx] = out[tx]
