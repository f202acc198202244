# The `dvec` ring family of kernels/kda_fwd.py, alone: its barrier code verbatim (the prep
# warps 0-1 produce the decay vector of chunk j into slot j % 3 two chunks ahead: a
# prologue for chunks 0 and 1 guarded by `j < NC`, then chunk c + 2 at the top of round c
# guarded by `c + LOOK < NC`, each after the producer-parity wait on `dvec_empty`; the
# state keepers, warps 2-5, wait on `dvec_full[c % 3]` and release the slot, one elected
# lane per warp).  The payload is an int32 tag per channel instead of exp(bL); the
# state keepers copy it to `out`.  For `modelcheck prove --symbolic NC`.
from tvm_tirx.script import tirx as T

NC = 5
DK = 64
DVEC_STAGES = 3
LOOK = 2


@T.function
def kda_ring_dvec(out: T.Tensor((NC * 4 * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 192) as tx:
                dvec = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES, DK), T.int32, scope="shared")])
                dvec_full = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES,), T.uint64, scope="shared")])
                dvec_empty = T.alloc_tensor(ty_args=[T.Tensor((DVEC_STAGES,), T.uint64, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(DVEC_STAGES):
                        T.ptx.mbarrier.init.shared.b64(dvec_full.ptr_to([s]), T.uint32(2))
                        T.ptx.mbarrier.init.shared.b64(dvec_empty.ptr_to([s]), T.uint32(4))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp < 2:
                    d: T.let[T.int32] = tx
                    for j in range(LOOK):
                        if j < NC:
                            T.cuda.mbarrier_wait(dvec_empty.ptr_to([j % DVEC_STAGES]), (j // DVEC_STAGES + 1) % 2)
                            dvec[j % DVEC_STAGES, d] = j * 1000 + d
                            T.cuda.warp_sync()
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared.b64(dvec_full.ptr_to([j % DVEC_STAGES]))
                    for c in range(NC):
                        if c + LOOK < NC:
                            T.cuda.mbarrier_wait(dvec_empty.ptr_to([(c + LOOK) % DVEC_STAGES]), ((c + LOOK) // DVEC_STAGES + 1) % 2)
                            dvec[(c + LOOK) % DVEC_STAGES, d] = (c + LOOK) * 1000 + d
                            T.cuda.warp_sync()
                            if lane == 0:
                                T.ptx.mbarrier.arrive.shared.b64(dvec_full.ptr_to([(c + LOOK) % DVEC_STAGES]))
                else:
                    for c in range(NC):
                        T.cuda.mbarrier_wait(dvec_full.ptr_to([c % DVEC_STAGES]), (c // DVEC_STAGES) % 2)
                        out[(c * 4 + warp - 2) * 32 + lane] = dvec[c % DVEC_STAGES, (warp % 2) * 32 + lane]
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(dvec_empty.ptr_to([c % DVEC_STAGES]))
