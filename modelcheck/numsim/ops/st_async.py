"""`st.async.weak.shared::cluster.mbarrier::complete_tx::bytes{.v2|.v4}.type [addr], value(s), [mbar]`
(PTX ISA 9.7.9.12): a non-blocking store of registers into a CTA's shared memory in the cluster (usually a
peer's) that, once the data has landed, performs complete-tx on the mbarrier `mbar` of the same CTA with the
number of bytes stored.  The store is a weak generic-proxy write; the complete-tx has release semantics at
cluster scope, so a thread that waits on that barrier phase sees the data without a proxy fence.

Each executing lane issues its own store: the values are read from the registers at issue, the write and the
complete-tx happen when the scheduler delivers the completion (between rounds, like a TMA load), so a
consumer can observe the data only through the barrier.  The write is recorded against the destination
CTA's allocation with the operation as actor (generic proxy), and the events have the same shape as a TMA
load's: `async.issue` naming the barrier and its tx bytes, then an async `mbarrier.complete_tx`.
"""
from __future__ import annotations

import numpy as np

from ..errors import EngineError
from ..sync import SyncError
from .async_copy import _at, _lanes, _one_lane, issue_on_barrier
from .cluster import cluster_of
from .memory import PTX_NP, _from_register


def _st_async(ctx, call, info):
    width = {"v2": 2, "v4": 4}.get(info.quals.get("vec", ""), 1)
    addr_fn = ctx.expr(call.operands[0])
    val_fns = [ctx.expr(call.operands[1 + k]) for k in range(width)]
    val_dtypes = [call.operands[1 + k].dtype for k in range(width)]
    bar_fn = ctx.expr(call.operands[1 + width])
    ptx_type = info.quals["type"]
    np_t = PTX_NP[ptx_type]
    esz = np.dtype(np_t).itemsize
    size = esz * width
    site = ctx.site(call, "st.async")
    span = call.span
    what = "st.async"

    def run(w):
        a_all, b_all = addr_fn(w), bar_fn(w)
        values = [_from_register(f(w), dt, ptx_type) for f, dt in zip(val_fns, val_dtypes)]
        eng = w.eng
        w.effects += 1
        if w.rt.cluster_size < 2:
            # PTX ISA 9.7.9.12 requires %cluster_nctarank > 1; otherwise the behavior is undefined
            raise EngineError("invalid_address", f"{what} in a cluster of one CTA (PTX requires more than one)", span,
                              cluster_size=w.rt.cluster_size)
        for lane in _lanes(w):
            dst, baddr = _at(a_all, lane), _at(b_all, lane)
            rt, local = cluster_of(w, dst, span, what)
            brt, blocal = cluster_of(w, baddr, span, what)
            if brt is not rt:
                raise EngineError("invalid_address", f"{what}: the destination is in CTA rank {rt.cluster_rank} but "
                                                     f"its mbarrier is in CTA rank {brt.cluster_rank}; they must be "
                                                     f"in one CTA", span, address=dst, mbarrier=baddr, lane=lane)
            if local % size:
                raise EngineError("misaligned_address", f"{what}: address {local:#x} is not aligned to its "
                                                        f"{size}-byte store (lane {lane})", span, address=local,
                                  size=size, lane=lane)
            d_alloc = rt.shared.find(local, size)
            if d_alloc is None:
                raise EngineError("oob", f"{what}: [{local:#x}, +{size}) of CTA rank {rt.cluster_rank} is outside "
                                         f"every shared allocation (lane {lane})", span, address=local, lane=lane,
                                  size=size)
            op, bar, gen = issue_on_barrier(w, "st.async", lane, site, span, what, rt, brt, blocal, size)
            data = np.array([v[lane] if v.ndim else v for v in values], dtype=np_t).view(np.uint8)
            eng.enqueue(_complete(w, op, rt, d_alloc, local - d_alloc.base, data, bar, blocal, span, gen))
    return run, False


def _complete(w, op, rt, d_alloc, off, data, bar, baddr, span, bound_gen):
    eng, warp, cta = w.eng, w.gid, rt.index
    size = data.size

    def complete():
        if rt.exited:
            raise EngineError("cluster_exit_while_peer_access",
                              f"st.async into CTA {rt.index}'s shared memory (issued by warp {warp} of CTA {w.cta}) "
                              f"completes after CTA {rt.index} exited", span, peer_cta=rt.index, warp=warp)
        d_alloc.data[off:off + size] = data
        d_alloc.mark_written(off, size)
        eng.access(None, op.site, d_alloc, off, size, "write", proxy="generic", lanes=_one_lane(op.lane),
                   actor=op.id, iters=op.iters, warp=op.warp, cta=op.cta)
        op.done = True
        gen = bar.local_gen
        try:
            completed = bar.complete_tx(size)
        except SyncError as err:
            raise EngineError(err.kind, err.message, span, warp=warp, cta=w.cta, iters=list(op.iters),
                              **err.details) from None
        eng.touch(bar)
        eng.async_sync(w.cta, warp, "mbarrier.complete_tx", op.site, op.iters, barrier=("mbarrier", cta, baddr),
                       tx=size, generation=gen, completed=completed,
                       details={"op": op.id, "async": True, "kind": op.kind, "bound_generation": bound_gen})
    return complete


HANDLERS = {"st.async": _st_async}
