# Two CTAs of a cluster swap one word each with st.async: thread 0 of each CTA announces the 4 bytes it will
# receive on its own `recv` barrier (arrive.expect_tx), writes a note into the peer's `note` with a plain remote
# store, then stores its word into the peer's `inbox` with st.async, whose bytes complete on the peer's `recv`.
# Every thread waits on `recv` before reading: the complete-tx is a release at cluster scope, so the wait
# orders both the asynchronous store and the note written before it.
#
# Seeded bugs (manifest entries of the same names):
#   READ_EARLY = 1 (st_async_read_before_wait): thread 0 reads `inbox` before waiting on `recv`, so the read races
#     with the peer's st.async into it (the store lands asynchronously, ordered only by the complete-tx on `recv`).
#   TX_BYTES = 8 (st_async_tx_mismatch): `recv` is told to expect 8 bytes but the peer's st.async stores one 4-byte
#     word, so the phase never completes and every thread hangs in the wait.
#   NOTE_LATE = 1 (st_async_note_after_store): the note is written after the st.async; the complete-tx releases only
#     what the thread did before the store, so the peer's read of `note` after its wait races with the late write.
from tvm_tirx.script import tirx as T

READ_EARLY = 0
TX_BYTES = 4
NOTE_LATE = 0


@T.function
def st_async_exchange(out: T.Tensor((2, 2), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("clusterCtaIdx.x", 2) as cx:
                with T.launch_thread("threadIdx.x", 32) as tx:
                    recv = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                    inbox = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                    note = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                    peer = T.alloc_tensor(ty_args=[T.Tensor((3,), T.uint32, scope="local")])
                    if tx == 0:
                        T.ptx.mbarrier.init.shared.b64(recv.ptr_to([0]), T.uint32(1))
                        T.ptx.fence.mbarrier_init.release.cluster()
                    T.ptx.barrier.cluster.arrive.relaxed.aligned()
                    T.ptx.barrier.cluster.wait.aligned()
                    if tx == 0:
                        T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(recv.ptr_to([0]), T.uint32(TX_BYTES))
                        T.ptx.mapa.shared__cluster.u32(peer[0], T.Cast("uint32", T.cuda.cvta_generic_to_shared(inbox.ptr_to([0]))), T.uint32(1 - cx))
                        T.ptx.mapa.shared__cluster.u32(peer[1], T.Cast("uint32", T.cuda.cvta_generic_to_shared(recv.ptr_to([0]))), T.uint32(1 - cx))
                        T.ptx.mapa.shared__cluster.u32(peer[2], T.Cast("uint32", T.cuda.cvta_generic_to_shared(note.ptr_to([0]))), T.uint32(1 - cx))
                        if NOTE_LATE == 0:
                            T.ptx.st.shared__cluster.s32(peer[2], cx + 100)
                        T.ptx.st_async.shared__cluster.mbarrier__complete_tx__bytes.s32(peer[0], (cx + 1) * 10, peer[1])
                        if NOTE_LATE == 1:
                            T.ptx.st.shared__cluster.s32(peer[2], cx + 100)
                    if READ_EARLY == 1:
                        if tx == 0:
                            out[bx, 0] = inbox[0]
                    T.cuda.mbarrier_wait(recv.ptr_to([0]), 0)
                    if tx == 0:
                        if READ_EARLY == 0:
                            out[bx, 0] = inbox[0]
                        out[bx, 1] = note[0]
                    T.cuda.cluster_sync()
