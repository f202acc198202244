"""Judging one chunk's candidate pairs: ordered or a race, and the race classified
(docs/semantics.md#happens-before).

All pairs of a chunk at once: ordered by knowledge (bridged where proxies differ: a bulk
copy's completion bridges only its own destination), by tcgen05 ordering, or both accesses
morally strong (pairs of one actor, ordered by program order, were never made).  The
unordered pairs give one `Race` per (earlier record, later record): byte hull, byte count,
and the first pair as the witness, classified in the order of
docs/semantics.md#happens-before from that pair.  A race
keeps what reporting needs (both records, their async operations), since the analysis
forgets records and operations as the run goes on; the fence.sc hint, which asks about
fences after the race, is settled when the run ends (`Race.settle`).
"""
from __future__ import annotations

import numpy as np

from ..numsim.columns import KINDS
from ..numsim.trace import AccessRecord
from .async_ops import READ_DONE

_PROXY_DOMAIN = {"shared": "shared::cta", "global": "global", "tmem": "other"}
_S2G = ("bulk.s2g", "tma.s2g")
HINT_SC = ("a fence.sc after the first access and one before the second synchronize only in the order the run "
           "forces (PTX ISA 8.9.3: the Fence-SC order is determined at runtime), and nothing observed here forces the "
           "writer's first: publish through a flag (fence; st.relaxed flag | ld.relaxed flag until set; fence)")
_HINT_A2G = ("an async-proxy read completed, but its completion bridges no proxy: execute "
             "fence.proxy.async.shared::cta after observing it and before the generic write")


class Race:
    """The unordered pairs between one earlier and one later access record: byte hull and witness lanes.
    `prior`/`current` number the records over the run (synthetic ones included); `count` is the pairs of granules
    (set by `settle`, from `nbytes` and the allocation's final granule)."""

    __slots__ = ("prior", "current", "prior_lane", "current_lane", "lo", "hi", "count", "nbytes", "key",
                 "prior_kind", "current_kind", "how", "prior_rec", "current_rec", "prior_info", "current_info",
                 "sc_probe")

    # the slots `judge` sets after construction, for type checkers (annotations alone create no class attributes)
    key: int
    how: tuple
    prior_rec: AccessRecord
    current_rec: AccessRecord
    prior_info: dict
    current_info: dict

    def __init__(self, prior, current, prior_lane, current_lane, lo, hi, nbytes, prior_kind, current_kind):
        self.prior, self.current = prior, current
        self.prior_lane, self.current_lane = prior_lane, current_lane
        self.lo, self.hi, self.nbytes, self.count = lo, hi, nbytes, None
        self.prior_kind, self.current_kind = prior_kind, current_kind
        self.sc_probe = None

    def settle(self, granule: int, sc_fences: dict) -> None:
        """At the end of the run: the granule count, and the fence.sc hint (it looks at every fence of the run)."""
        self.count = self.nbytes // granule
        if self.sc_probe is not None:
            (pw, pl, ps), (cw, cl, cs) = self.sc_probe
            before, after = sc_fences.get((pw, pl), ()), sc_fences.get((cw, cl), ())
            if any(s > ps for s in before) and any(s < cs for s in after):
                self.how = self.how[:4] + (HINT_SC,)
            self.sc_probe = None


def judge(an, c) -> list:
    """The races among chunk context `c`'s pairs (see `analysis.Analysis._process` for its fields)."""
    P, U, flow = c.pairs, c.units, an.flow
    if not P.prior.size:
        return []
    pr, cr = P.prior, P.current
    # what knowing the earlier access takes, per record first (records are far fewer than pairs)
    stamp = np.where(U.actor >= 0, U.stamp, U.epoch_at).astype(np.int32)[pr]     # (epochs, like `known`)
    known = c.known
    if c.cross_any.any():
        known = np.where(c.need_bridged, np.minimum(known, c.known_bridged), known)
    # the remaining rules only ever add order: apply them to the pairs knowledge leaves unordered
    bad = np.flatnonzero(known < stamp)
    if not bad.size:
        return []
    bp, bc, bknown = pr[bad], cr[bad], known[bad]
    cross = c.cross[bad]
    ordered = np.zeros(bad.size, dtype=np.bool_)
    if flow.tc is not None:
        tc_ordered = flow.tc.ordered(U.tc[bp], U.tc[bc], U.actor[bp], U.actor[bc], bknown, flow.issuer_ids)
        ordered |= tc_ordered
    ps, cs = U.strength[bp], U.strength[bc]
    need = np.where(U.cta[bp] == U.cta[bc], 1, 3)
    ordered |= (ps >= need) & (cs >= need) & ~cross
    bad = bad[~ordered]
    if not bad.size:
        return []
    # one race per (prior record, current record): byte hull, bytes, and the first pair as the witness
    gp, gc = U.index[pr[bad]], U.index[cr[bad]]
    order = np.lexsort((gc, gp))
    bad, gp, gc = bad[order], gp[order], gc[order]
    firsts = np.flatnonzero(np.r_[True, (gp[1:] != gp[:-1]) | (gc[1:] != gc[:-1])])
    lo_byte, gsize = P.lo(bad), P.gsize(bad)
    los = np.minimum.reduceat(lo_byte, firsts)
    his = np.maximum.reduceat(lo_byte + gsize, firsts)
    nbytes = np.add.reduceat(gsize, firsts)
    # per race, its scalars in one conversion each; records, async infos and tcgen05 hints are shared by many races
    # (a record races with many others), so each is made once per chunk
    qs = bad[firsts]
    ps, ks = pr[qs], cr[qs]
    rows = zip(qs.tolist(), ps.tolist(), ks.tolist(), U.index[ps].tolist(), U.index[ks].tolist(),
               P.prior_lane(qs).tolist(), P.cur_lane[qs].tolist(), los.tolist(), his.tolist(), nbytes.tolist(),
               U.write[ps].tolist(), U.kind[ks].tolist(), U.key[ks].tolist())
    records: dict = {}
    infos: dict = {}
    hints: dict = {}
    out = []
    for q, p, k, gi, gk, plane, clane, lo, hi, nb, pwrite, ckind, key in rows:
        prior = records.get(p)
        if prior is None:
            prior = records[p] = U.record(p, an.allocs)
        cur = records.get(k)
        if cur is None:
            cur = records[k] = U.record(k, an.allocs)
        race = Race(gi, gk, plane, clane, lo, hi, nb, "write" if pwrite else "read", KINDS[ckind])
        race.key = key
        race.prior_rec, race.current_rec = prior, cur
        race.prior_info = _info(flow, infos, prior.actor)
        race.current_info = _info(flow, infos, cur.actor)
        race.how = _classify(an, c, race, q, p, k, hints)
        out.append(race)
    return out


def _info(flow, infos: dict, actor: int) -> dict:
    """The async operation's info (a copy: the flow forgets operations), {} for a lane access; one per chunk."""
    if actor < 0:
        return {}
    info = infos.get(actor)
    if info is None:
        info = infos[actor] = dict(flow.async_info.get(actor, {}))
    return info


def _classify(an, c, race, q: int, p: int, k: int, hints: dict) -> tuple:
    """(ordering domain, ordering failure, text, proxy bridge, hint or None) in the order of
    docs/semantics.md#happens-before."""
    U, flow = c.units, an.flow
    prior, cur = race.prior_rec, race.current_rec
    # a bulk copy's own destination bytes are bridged by its completion: what is missing there is the completion
    own_destination = bool(U.bulk_write[p]) and cur.proxy == "generic"
    if prior.proxy != cur.proxy and not own_destination:
        pd, cd = _PROXY_DOMAIN.get(prior.space, "other"), _PROXY_DOMAIN.get(cur.space, "other")
        bridge = {"prior_proxy": prior.proxy, "current_proxy": cur.proxy, "prior_domain": pd, "current_domain": cd}
        hint = None
        if prior.actor >= 0:
            # async -> generic: was the async access at least observed complete (then only the fence is missing)?
            done = bool(c.known[q] >= U.stamp[p])
            bridge["async_completion_observed"] = done
            hint = _HINT_A2G if done else (
                "the asynchronous access may still be in flight: observe its completion first "
                "(cp.async.bulk.wait_group.read for a bulk store's source, the mbarrier of the "
                "tcgen05.commit for a tcgen05.mma operand), then fence.proxy.async, then the generic access")
        return ("memory", "missing_proxy_bridge",
                f"no {prior.proxy}->{cur.proxy} proxy bridge from {pd} to {cd} orders the accesses", bridge, hint)
    if prior.actor < 0 and cur.actor < 0 and prior.warp == cur.warp:
        return ("execution", "missing_same_warp_lane_order",
                "different lanes in the same warp have no lane-order edge", None, None)
    if U.strength[p] > 0 or U.strength[k] > 0:
        return ("memory", "missing_release_acquire", "no release/acquire edge orders the accesses", None, None)
    if prior.actor >= 0 and prior.actor in flow.fork:
        # the issue is ordered before the current access but the completion is not
        if c.known_issuer[q] >= flow.fork[prior.actor][2][2]:
            hint = _tc_hint(an, c, p, k, hints)
            if prior.kind == "write" and flow.op_kind.get(prior.actor) in _S2G and c.known[q] == READ_DONE:
                hint = ("cp.async.bulk.wait_group.read retires only the store's source reads; wait with "
                        "cp.async.bulk.wait_group (without .read) before accessing its destination")
            return ("completion", "async_lifetime_not_drained",
                    "an asynchronous access is not completed before the conflicting reuse", None, hint)
    hint = _tc_hint(an, c, p, k, hints)
    if hint is None and prior.actor < 0 and cur.actor < 0:
        race.sc_probe = ((prior.warp, race.prior_lane, prior.seq), (cur.warp, race.current_lane, cur.seq))
    return ("execution", "missing_inter_actor_sync", "no synchronization edge orders the actors", None, hint)


def _tc_hint(an, c, p: int, k: int, hints: dict) -> str | None:
    flow, U = an.flow, c.units
    if flow.tc is None:
        return None
    cur = int(U.actor[k])
    dom = flow.op_dom.get(cur, 0)
    args = (int(U.tc[p]), int(U.tc[k]), flow.col_in(int(U.actor[p]), dom), cur)
    if args not in hints:                   # (a function of these alone, asked for many races alike)
        hints[args] = flow.tc.hint(*args)
    return hints[args]
