# Bug (a) of the KDA case study on the isolated O handoff (kernels/kda_ring_m_o.py): one
# `m_o` barrier for two O accumulators.  The commit of chunk c + 1 is gated only by
# `o_empty[(c + 1) % 2]`, released by the stores of chunk c - 1, so it can complete `m_o`'s
# next generation before every store warp has observed chunk c's: Synccheck reports
# mbarrier_prior_generation_consumption_not_happens_before, and `prove --symbolic NC`
# refutes the protocol at the smallest NC where it happens.  Fix: kernels/kda_ring_m_o.py.
from tvm_tirx.script import tirx as T

NC = 4
STAGES = 2
M_O_STAGES = 1         # BUG: one `m_o` barrier for two O accumulators


@T.function
def kda_ring_m_o_single(out: T.Tensor((NC * 4 * 32,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 160) as tx:
                m_o = T.alloc_tensor(ty_args=[T.Tensor((M_O_STAGES,), T.uint64, scope="shared")])
                o_empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(M_O_STAGES):
                        T.ptx.mbarrier.init.shared.b64(m_o.ptr_to([s]), T.uint32(1))
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(o_empty.ptr_to([s]), T.uint32(4))
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    if T.cuda.elect_sync():
                        for c in range(NC):
                            s: T.let[T.int32] = c % STAGES
                            T.cuda.mbarrier_wait(o_empty.ptr_to([s]), (c // STAGES + 1) % 2)
                            T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64(m_o.ptr_to([c % M_O_STAGES]))
                else:
                    for c in range(NC):
                        s: T.let[T.int32] = c % STAGES
                        T.cuda.mbarrier_wait(m_o.ptr_to([c % M_O_STAGES]), (c // M_O_STAGES) % 2)
                        out[(c * 4 + warp - 1) * 32 + lane] = c
                        T.cuda.warp_sync()
                        if lane == 0:
                            T.ptx.mbarrier.arrive.shared.b64(o_empty.ptr_to([s]))
