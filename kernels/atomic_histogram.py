# Histogram of x into BINS bins, several CTAs.
#
# Each CTA zeroes a shared histogram, then every thread adds its elements with
# shared-memory atomics (atom.shared.add.u32, returning the old count); after a
# CTA barrier, the first BINS threads merge the shared bins into the global
# histogram: even bins with red.global.add.u32, odd bins with T.cuda.atomic_add.
# `total` counts all elements with one T.cuda.atomic_add per thread.
from tvm_tirx.script import tirx as T

BINS = 16
CTAS = 3
THREADS = 64
PER_THREAD = 4
N = CTAS * THREADS * PER_THREAD


@T.function
def atomic_histogram(x: T.Tensor((N,), T.uint32), hist: T.Tensor((BINS,), T.uint32),
                     total: T.Tensor((1,), T.uint32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", CTAS) as bx:
            with T.launch_thread("threadIdx.x", THREADS) as tx:
                sh = T.alloc_tensor(ty_args=[T.Tensor((BINS,), T.uint32, scope="shared")])
                old = T.local_scalar(T.uint32)
                if tx < BINS:
                    sh[tx] = T.uint32(0)
                T.cuda.cta_sync()
                for k in range(PER_THREAD):
                    v: T.let[T.uint32] = x[(bx * PER_THREAD + k) * THREADS + tx]
                    T.ptx.atom.shared.add.u32(old, sh.ptr_to([v % BINS]), T.uint32(1))
                T.cuda.cta_sync()
                if tx < BINS:
                    if tx % 2 == 0:
                        T.ptx.red.global_.add.u32(hist.ptr_to([tx]), sh[tx])
                    else:
                        T.cuda.atomic_add(hist.ptr_to([tx]), sh[tx])
                T.cuda.atomic_add(total.ptr_to([0]), T.uint32(PER_THREAD))
