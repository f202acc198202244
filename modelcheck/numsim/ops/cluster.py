"""Thread-block clusters: `mapa`, `cvta` to/from shared, and the cluster barrier
(`barrier.cluster.arrive[.release|.relaxed][.aligned]`, `barrier.cluster.wait[.acquire][.aligned]`,
`T.cuda.cluster_sync()` = arrive + wait).

A shared::cluster address names a byte of one CTA of the cluster (`numsim.memory.cluster_address`); a plain
shared::cta address is also the executing CTA's own shared::cluster address.  The cluster barrier is the
cluster's `numsim.sync.ClusterBarrier`: its events name it ("cluster", cluster id, 0), so the checkers give
arrive (release unless `.relaxed`) -> wait (acquire) edges across the CTAs.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import CLUSTER_WINDOW, cluster_address
from ..runtime import Wait
from ..sync import SyncError
from . import require_full_warp


def _mapa(ctx, call, info):
    dst = ctx.lvalue(call.operands[0], "mapa")
    addr, rank = ctx.expr(call.operands[1]), ctx.expr(call.operands[2])
    span = call.span

    def run(w):
        a, r = addr(w), rank(w)
        size = w.rt.cluster_size
        ra = np.asarray(r).astype(np.int64)
        bad = (ra < 0) | (ra >= size)
        if bad.ndim:
            bad = bad & w.active()
        if bad.any():
            lane = int(np.flatnonzero(bad)[0]) if bad.ndim else 0
            value = int(ra[lane]) if ra.ndim else int(ra)
            raise EngineError("invalid_address", f"mapa to CTA rank {value} of a cluster of {size} CTA(s) "
                                                 f"(lane {lane})", span, rank=value, cluster_size=size, lane=lane)
        aa = np.asarray(a).astype(np.int64) % CLUSTER_WINDOW
        out = ((ra + 1) << 24) | aa
        dst(w, out if out.ndim else int(out))
    return run, False


def _cvta(ctx, call, info):
    dst = ctx.lvalue(call.operands[0], "cvta")
    src = ctx.expr(call.operands[1])
    to_cluster = "to" in info.quals and info.quals.get("space") == "shared::cluster"

    def run(w):
        # generic -> shared::cluster of the executing CTA: its own rank's window; otherwise the address is
        # unchanged (NumSim's generic addresses of shared memory are shared::cta addresses)
        a = src(w)
        if to_cluster and w.rt.cluster_size > 1:
            a = np.asarray(a).astype(np.int64)
            own = (a < CLUSTER_WINDOW)
            a = np.where(own, ((w.rt.cluster_rank + 1) << 24) | a, a)
            a = a if a.ndim else int(a)
        dst(w, a)
    return run, False


def _arrive(w, site, span, sem, aligned, what):
    bar = w.rt.cluster_barrier
    if aligned:
        require_full_warp(w, what, span)
    lanes = V.lane_bits(w.mask) & ((1 << w.nthreads) - 1)
    try:
        gen = bar.arrive(w, lanes)
    except SyncError as err:
        raise UnsupportedTIRxError(what, span, err.message + "; re-arrival before the wait is not modeled") \
            from None
    w.eng.touch(bar)
    w.effects += 1
    w.eng.sync(w, "cluster.arrive", site, barrier=("cluster", w.rt.cluster_id, 0), generation=gen,
               completed=bar.gen > gen, details={"order": sem, "aligned": aligned, "lanes": lanes})
    return bar, gen


def _wait(w, site, span, sem, aligned, what):
    bar = w.rt.cluster_barrier
    if aligned:
        require_full_warp(w, what, span)
    gen = bar.arrived_gen.get(w.gid, bar.gen)   # no arrival yet: it awaits the phase its own arrival would join
    blocked = False
    while not bar.passed(gen):
        blocked = True
        yield Wait(bar, lambda b=bar, g=gen: b.passed(g),
                   lambda: f"await barrier.cluster.wait; phase {gen} ({bar.describe()})", site)
    w.eng.sync(w, "cluster.wait", site, barrier=("cluster", w.rt.cluster_id, 0), generation=gen,
               details={"order": sem, "aligned": aligned, "blocked": blocked})


def _cluster_arrive(ctx, call, info):
    sem = info.quals.get("sem", "release")
    aligned = "aligned" in info.quals
    site = ctx.site(call, info.name)
    span = call.span

    def run(w):
        _arrive(w, site, span, sem, aligned, info.name)
    return run, False


def _cluster_wait(ctx, call, info):
    sem = info.quals.get("sem", "acquire")
    aligned = "aligned" in info.quals
    site = ctx.site(call, info.name)
    span = call.span

    def run(w):
        yield from _wait(w, site, span, sem, aligned, info.name)
    return run, True


def _cluster_sync(ctx, call, info):
    """T.cuda.cluster_sync(): barrier.cluster.arrive.aligned then barrier.cluster.wait.aligned (TVM's lowering)."""
    site = ctx.site(call, "cuda.cluster_sync")
    span = call.span

    def run(w):
        _arrive(w, site, span, "release", True, "cluster_sync")
        yield from _wait(w, site, span, "acquire", True, "cluster_sync")
    return run, True


HANDLERS = {
    "mapa": _mapa,
    "cvta.shared": _cvta,
    "barrier.cluster.arrive": _cluster_arrive,
    "barrier.cluster.wait": _cluster_wait,
    "cuda.cluster_sync": _cluster_sync,
}


def cluster_of(w, addr: int, span, what: str):
    """(CTA runtime, shared::cta address) of a shared::cluster address used by warp `w`."""
    if addr < CLUSTER_WINDOW:
        return w.rt, addr
    rank = (addr >> 24) - 1
    if rank >= w.rt.cluster_size:
        raise EngineError("invalid_address", f"{what}: address {addr:#x} names CTA rank {rank} of a cluster of "
                                             f"{w.rt.cluster_size} CTA(s)", span, address=addr, rank=rank)
    return w.rt.peer(rank), addr % CLUSTER_WINDOW


__all__ = ["HANDLERS", "cluster_address", "cluster_of"]
