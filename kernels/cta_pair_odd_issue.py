# BUG: the odd CTA of the pair (%cluster_ctarank 1) issues the cta_group::2 MMA; the even CTA issues for both
# (fixed twin: cta_pair_odd_issue_fixed.py).
from tvm_tirx.script import tirx as T

ISSUER = 1
IDESC = 16 + 128 + 1024 + (32 // 8) * 131072 + (256 // 16) * 16777216


@T.function
def cta_pair_odd_issue(out: T.Tensor((2, 128), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("clusterCtaIdx.x", 2) as cx:
                with T.launch_thread("threadIdx.x", 128) as tx:
                    a_s = T.alloc_tensor(ty_args=[T.Tensor((128, 64), T.bfloat16, scope="shared", align=1024)])
                    b_s = T.alloc_tensor(ty_args=[T.Tensor((16, 64), T.bfloat16, scope="shared", align=1024)])
                    done = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    tmem_slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint32, scope="shared")])
                    acc = T.alloc_tensor(ty_args=[T.Tensor((1,), T.float32, scope="local")])
                    for i in range(64):
                        a_s[tx, i] = T.bfloat16(1)
                    if tx < 16:
                        for i in range(64):
                            b_s[tx, i] = T.bfloat16(1)
                    T.ptx.fence.proxy.async_.shared__cta()
                    if tx == 0:
                        T.ptx.mbarrier.init.shared.b64(done.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    if tx < 32:
                        T.ptx.tcgen05.alloc.cta_group__2.sync.aligned.shared__cta.b32(tmem_slot.ptr_to([0]), T.uint32(32))
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cluster_sync()
                    T.ptx.tcgen05.fence__after_thread_sync()
                    taddr: T.let[T.uint32] = tmem_slot[0]
                    if cx == ISSUER and tx == 0:
                        a_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(a_s.ptr_to([0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46)
                        b_desc: T.let[T.uint64] = (T.Cast("uint64", T.cuda.cvta_generic_to_shared(b_s.ptr_to([0, 0]))) & T.uint64(0x3FFFF)) >> T.uint64(4) | T.uint64(8) << T.uint64(16) | T.uint64(64) << T.uint64(32) | T.uint64(1) << T.uint64(46)
                        T.ptx.tcgen05.mma.cta_group__2.kind__f16(taddr, a_desc, b_desc, T.uint32(IDESC), 0)
                        T.ptx.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64(done.ptr_to([0]), T.uint16(3))
                    T.cuda.mbarrier_wait(done.ptr_to([0]), 0)
                    T.ptx.tcgen05.fence__after_thread_sync()
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](acc[0], taddr + T.Cast("uint32", tx // 32 * 32 * 65536))
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    out[bx, tx] = acc[0]
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cluster_sync()
                    T.ptx.tcgen05.fence__after_thread_sync()
                    if tx < 32:
                        T.ptx.tcgen05.dealloc.cta_group__2.sync.aligned.b32(taddr, T.uint32(32))
