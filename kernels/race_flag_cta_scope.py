# Bug: a release/acquire flag handoff between two CTAs with .cta scope.  CTA 0
# writes a row to global memory and sets a global flag with st.release.cta;
# CTA 1 spins with ld.acquire.cta and reads the row.  A .cta-scoped release or
# acquire only synchronizes with threads of its own CTA: the two sides' scopes
# do not cover each other, so no synchronization edge forms and the row reads
# race with the writes.  The fix, race_flag_cta_scope_fixed.py, uses .gpu on
# both sides.
from tvm_tirx.script import tirx as T


@T.function
def race_flag_cta_scope(x: T.Tensor((32,), T.int32), row: T.Tensor((32,), T.int32), flag: T.Tensor((1,), T.int32),
       out: T.Tensor((32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 32) as tx:
                seen = T.local_scalar(T.int32)
                if bx == 0:
                    row[tx] = x[tx] * 5
                    T.cuda.warp_sync()
                    if tx == 0:
                        T.ptx.st.release.cta.global_.b32(flag.ptr_to([0]), T.int32(1))
                else:
                    seen = 0
                    while seen == 0:
                        T.ptx.ld.acquire.cta.global_.b32(seen, flag.ptr_to([0]))
                    out[tx] = row[31 - tx]
