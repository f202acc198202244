"""The CTA pair of `cta_group::2` (PTX ISA 9.7.16: the CTAs of a cluster whose %cluster_ctarank differ in bit 0;
the even one is the pair's first): the pair-collective TMEM lifecycle.

`tcgen05.alloc|dealloc|relinquish_alloc_permit.cta_group::2` are executed by one warp of each CTA of the pair: a
rendezvous.  The first warp to arrive blocks until its peer executes the same op (a peer that never does leaves it
blocked: a `deadlock` naming the op); the second performs it for both: the same columns in both CTAs' TMEM (first
fit over both), both released, or both permits relinquished.  Column counts must agree
(`tcgen_cta_pair_misuse`).  Each warp then writes its own CTA's address slot and raises its own sync event, so the
events and access records belong to the CTA that owns them.  The rendezvous orders nothing between the two CTAs
(model choice: the cited sources state no memory ordering for it), so a handoff still needs a barrier.
"""
from __future__ import annotations

from ..errors import EngineError
from ..memory import GLOBAL_BASE
from ..runtime import Wait
from ..tmem import TmemError, next_alloc_id, tmem_of


class PairOp:
    """One pair-collective operation in flight: what each CTA of the pair brought, and the outcome."""

    __slots__ = ("what", "args", "result", "version")

    def __init__(self, what: str):
        self.what = what
        self.args: dict[int, tuple] = {}
        self.result = None
        self.version = 0


def pair_error(message: str, span, **details) -> EngineError:
    return EngineError("tcgen_cta_pair_misuse", message, span, **details)


def pair_peer(w, what: str, span):
    """The runtime of the other CTA of `w`'s pair; a cluster without pairs is `tcgen_cta_pair_misuse`."""
    rt = w.rt
    if rt.cluster_size < 2 or rt.cluster_size % 2:
        raise pair_error(f"{what} needs a CTA pair, but the launch's clusters have {rt.cluster_size} CTA(s); "
                         f"launch clusters of an even number of CTAs", span, cluster_size=rt.cluster_size)
    return rt.peer(rt.cluster_rank ^ 1)


def check_even(w, what: str, span) -> None:
    """cta_group::2 MMAs are issued by the pair's even CTA (%cluster_ctarank bit 0 = 0)."""
    pair_peer(w, what, span)
    if w.rt.cluster_rank & 1:
        raise pair_error(f"{what} is issued by CTA rank {w.rt.cluster_rank}, the odd CTA of its pair; a cta_group::2 "
                         f"MMA is issued by the even CTA (rank {w.rt.cluster_rank - 1}) for both", span,
                         rank=w.rt.cluster_rank)


def _rendezvous(w, what: str, args: tuple, span, site):
    """Generator: wait for the peer warp's matching op; returns (entry, this CTA is the one that performs it)."""
    peer = pair_peer(w, what, span)
    rt = w.rt
    counts = w.eng.__dict__.setdefault("pair_counts", {})
    n = counts.get((rt.index, what), 0)
    counts[(rt.index, what)] = n + 1
    ops = w.eng.__dict__.setdefault("pair_ops", {})
    key = (rt.cluster_id, rt.cluster_rank >> 1, what, n)
    entry = ops.get(key)
    if entry is None:
        entry = ops[key] = PairOp(what)
    entry.args[rt.cluster_rank] = args
    if len(entry.args) == 1:
        while entry.result is None:
            yield Wait(entry, lambda: entry.result is not None,
                       lambda: f"await {what} of the peer CTA (rank {peer.cluster_rank}) of its pair", site)
        del ops[key]
        return entry, False
    return entry, True


def alloc2(w, dst: int, ncols: int, span, site, what="tcgen05.alloc.cta_group::2"):
    """Generator: the paired allocation; returns (column, this CTA's allocation)."""
    if dst >= GLOBAL_BASE or w.rt.shared.find(dst, 4) is None:
        raise EngineError("oob", f"{what} destination {dst:#x} is not a 4-byte location in shared memory", span,
                          address=dst)
    entry, performs = yield from _rendezvous(w, what, (ncols,), span, site)
    peer = pair_peer(w, what, span)
    if performs:
        theirs = entry.args[peer.cluster_rank][0]
        if theirs != ncols:
            raise pair_error(f"{what}: CTA rank {w.rt.cluster_rank} allocates {ncols} columns but its peer (rank "
                             f"{peer.cluster_rank}) {theirs}; both CTAs of the pair allocate the same columns",
                             span, ncols=[ncols, theirs])
        mine, other = tmem_of(w.rt), tmem_of(peer)
        try:
            mine.check_request(ncols)
            other.check_request(ncols)
        except TmemError as err:
            raise EngineError(err.kind, err.message, span, **err.details) from None
        while True:
            col = _common_fit(mine, other, ncols)
            if col is not None:
                break
            yield Wait(mine, lambda: _common_fit(mine, other, ncols) is not None,
                       lambda: f"await {what} of {ncols} columns free in both CTAs ({mine.describe()})", site,
                       objs=(mine, other))
        eng = w.eng
        entry.result = {rt.cluster_rank: tm.allocate(col, ncols, next_alloc_id(eng), w.gid, site)
                        for rt, tm in ((w.rt, mine), (peer, other))}
        eng.touch(entry)
        eng.touch(mine)
        eng.touch(other)
    return entry.result[w.rt.cluster_rank]


def _common_fit(a, b, ncols: int):
    col = a.first_fit(ncols)
    if col is not None and col == b.first_fit(ncols):
        return col
    # the first column free in both: try every granule (32 columns)
    for c in range(0, 512 - ncols + 1, 32):
        if a.fits(c, ncols) and b.fits(c, ncols):
            return c
    return None


def dealloc2(w, taddr: int, ncols: int, span, site, what="tcgen05.dealloc.cta_group::2"):
    """Generator: the paired deallocation; returns this CTA's released allocation."""
    entry, performs = yield from _rendezvous(w, what, (taddr, ncols), span, site)
    peer = pair_peer(w, what, span)
    if performs:
        if entry.args[peer.cluster_rank] != (taddr, ncols):
            t2, n2 = entry.args[peer.cluster_rank]
            raise pair_error(f"{what}: CTA rank {w.rt.cluster_rank} frees {ncols} columns at {taddr:#x} but its peer "
                             f"(rank {peer.cluster_rank}) {n2} at {t2:#x}; both CTAs free the pair's allocation",
                             span, ncols=[ncols, n2])
        out = {}
        for rt in (w.rt, peer):
            try:
                out[rt.cluster_rank] = tmem_of(rt).release(taddr, ncols)
            except TmemError as err:
                raise EngineError(err.kind, err.message, span, **err.details) from None
            w.eng.touch(tmem_of(rt))
        entry.result = out
        w.eng.touch(entry)
    return entry.result[w.rt.cluster_rank]


def relinquish2(w, span, site, what="tcgen05.relinquish_alloc_permit.cta_group::2"):
    """Generator: both CTAs of the pair give up their allocation permit."""
    entry, performs = yield from _rendezvous(w, what, (), span, site)
    if performs:
        peer = pair_peer(w, what, span)
        tmem_of(w.rt).relinquished = True
        tmem_of(peer).relinquished = True
        entry.result = True
        w.eng.touch(entry)


__all__ = ["alloc2", "check_even", "dealloc2", "pair_peer", "relinquish2"]
