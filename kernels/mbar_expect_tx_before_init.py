# Bug: mbarrier_use_before_init (expect_tx).  The producer announces the bytes of
# a bulk copy on `full` (mbarrier.expect_tx), then arrives and issues the copy,
# but the init of `full` was left out: the expect_tx is the first use of a barrier
# that was never initialized.  Mirrors the reference tool's
# native_synccheck_expect_tx_before_init.  The fix is
# mbar_expect_tx_before_init_fixed.py.
from tvm_tirx.script import tirx as T

TILE = 16
NBYTES = TILE * 4


@T.function
def mbar_expect_tx_before_init(src: T.Tensor((TILE,), T.float32), out: T.Tensor((TILE,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((TILE,), T.float32, scope="shared")])
                if tx == 0:
                    T.ptx.mbarrier.expect_tx.shared__cta.b64(full.ptr_to([0]), T.uint32(NBYTES))
                    T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                    T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([0]), src.ptr_to([0]), T.uint32(NBYTES), full.ptr_to([0]))
                T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                if tx < TILE:
                    out[tx] = buf[tx]
