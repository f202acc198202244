"""The Racecheck pass: judge a run's conflicting pairs by happens-before knowledge, as the run goes.

`Analysis` is a NumSim observer that takes access records as columns (`numsim.columns`): a
chunk at a time, with the sync events delivered since the previous one, it

1. finds the chunk's candidate pairs against the shadow carried from earlier chunks
   (`pairs.Shadow`: last write / reads since, per granule, vectorized);
2. applies the events in seq order (`flow.Flow`: docs/semantics.md#happens-before), and at each access that moves
   knowledge (a strong read or write, a fence.sc participant) stops to handle it;
   every other access of a warp only needs what its warp knew then, which cannot change
   before the warp's next event, so they are handled in one vectorized step per warp at
   that event (stamp and gather together);
3. gathers what each async access knows (its operation's fork, fixed at issue);
4. judges all the chunk's pairs at once (`judge`), keeping the races;
5. forgets what no later access can pair with: records off the shadow, async operations
   NumSim retired with none of their accesses left, barrier generations no event can name
   (memory follows the accesses in flight, not the trace).
`finish()` handles the last events and settles the races (counts, fence.sc hints).

`replay.Pass` runs the same analysis over a recorded trace (tests and benchmarks).
"""
from __future__ import annotations

import time
from bisect import bisect_left
from typing import Any

import numpy as np

from ..common.gcpause import paused_gc
from ..numsim.columns import ORDERS
from ..numsim.errors import ResourceLimit
from ..numsim.trace import Observer
from ..numsim.trace import ClusterLayout
from .domains import layout_for
from .flow import INERT, REGISTERED, CrossedDomains, Flow
from .gather import Deferred, foreign_cols, gather_now, maybe_unordered_async, unknown_pairs
from .judge import judge
from .pairs import Shadow, _segments, stable_order
from .tcgen import dealloc_record
from .units import DOMAIN_NAMES, Allocs, Units, from_chunk
from .unwritten import UnwrittenReads

_INF = float("inf")
_RELEASE = ("release", "acq_rel")
_VIA_FENCE = ("relaxed", "volatile")


class _Chunk:
    """What the analysis knows while it handles one chunk."""

    __slots__ = ("units", "pairs", "nlive", "strong", "pcol", "known", "known_bridged", "known_issuer", "cross",
                 "cross_any", "async_prior_any", "tc_prior_any", "prior_tc", "prior_bits", "cur_bits", "need_bridged",
                 "wu", "wcur", "xdom", "deferred")

    units: Units
    pairs: Any              # pairs.Pairs of this chunk
    nlive: int
    strong: np.ndarray
    pcol: np.ndarray
    known: np.ndarray
    known_bridged: np.ndarray
    known_issuer: np.ndarray
    cross: np.ndarray       # per pair: the two accesses are of different proxies
    prior_bits: np.ndarray  # per pair, of the earlier access: 1 async proxy, 2 async op, 4 tcgen05, 8 bulk write
    cur_bits: np.ndarray    # per pair, of the later access: 1 async proxy, bits 1-2 its proxy domain (units.DOMAIN_*)
    need_bridged: np.ndarray  # per pair: judged on bridged knowledge (`known_bridged` is gathered only there)
    cross_any: np.ndarray
    async_prior_any: np.ndarray
    tc_prior_any: np.ndarray
    prior_tc: np.ndarray
    wu: dict
    wcur: dict
    xdom: np.ndarray | None   # pairs whose accesses are in different clock domains (split clocks only)
    deferred: Deferred        # plain accesses' gathers, done together once the chunk's events are applied


class _EmptyChunk:
    n = 0
    seq = cta = warp = site = alloc = kind = proxy = order = scope = actor = size = offset0 = lane = offset = \
        np.zeros(0, dtype=np.int64)
    all_lanes = scalar = np.zeros(0, dtype=np.bool_)
    lane_start = np.zeros(1, dtype=np.int64)
    iters: list = []
    allocs: list = []
    retired: tuple = ()


class Analysis(Observer):
    """Racecheck's analysis of one run, fed as NumSim runs (see the module docstring)."""

    wants_columns = True

    def __init__(self, meter=None, keep_pairs: bool = False, whole_grid: bool = True):
        self.meter = meter
        # clocks per cluster unless something may order warps of different clusters (racecheck.domains)
        self.whole_grid = whole_grid
        self.crossed = False             # knowledge was to cross split clocks' domains: Racecheck runs again, whole
        self.keep_pairs = keep_pairs
        self.flow: Flow | None = None
        self.allocs = Allocs()
        self.shadow = Shadow()
        self.live = Units.empty()          # records carried entries belong to
        self.cold: list = []               # Units of records whose accesses wait in the shadow for a first write
        self.cold_ops: set = set()
        self.events: list = []
        self.next_index = 0
        self.races: list = []
        self.scope_mismatches: list = []
        self.lane_accesses = 0
        self.records = 0
        self.limit: ResourceLimit | None = None
        self.candidates: list = []
        self.peak_live_entries = 0
        self.chunks = 0
        self.wall_time_s = 0.0           # spent in the analysis (it runs inside the NumSim run)
        self.foreign_columns = 0         # split clocks: lanes of one cluster some other cluster's row knows of
        self.peak_clock_rows = 0         # the most warp rows the clocks held at once (clocks.Ledger.peak)
        self.clock_width = 0             # columns of a row at the last chunk
        self.unwritten = UnwrittenReads(frozenset())   # reads of read-only inputs, dropped (set by on_start)
        self.unwritten_lanes = 0         # lane accesses of those reads

    @property
    def fl(self) -> Flow:
        """The flow while the analysis runs (made by `setup`, dropped when the analysis stops)."""
        assert self.flow is not None
        return self.flow

    # ------------------------------------------------------------------ observer
    def on_start(self, run) -> None:
        self.setup(run.warps, run.warps_per_cta, layout_for(run, self.whole_grid))
        self.unwritten = UnwrittenReads(run.unwritten)

    def setup(self, run_warps: int, warps_per_cta: int, layout: ClusterLayout | None = None) -> None:
        layout = layout if layout is not None else ClusterLayout.whole(run_warps)
        # a knowledge row (int32 per lane column of the warp's clock domain, plus async columns) is made only when a
        # warp learns something (clocks.zero_row): the rows follow the warps that have started, charged as they
        # are made (clocks.Ledger), not warps x domain lanes up front
        self.flow = Flow(run_warps, warps_per_cta, layout)
        self.flow.ledger.meter = self.meter
        self.flow.meter = self.meter

    def on_sync(self, ev) -> None:
        if self.limit is None:
            self.events.append(ev)

    def on_access_chunk(self, chunk) -> None:
        self._step(chunk)

    def finish(self) -> None:
        """The events after the last chunk, then the races settled and in record order."""
        self._step(None)
        if self.limit is not None or self.flow is None:
            return
        gran = self.shadow.gran
        for race in self.races:
            race.settle(int(gran[race.key]), self.flow.sc_fences)
        if self.races:
            # (one numpy sort: a run may keep hundreds of thousands of races)
            order = np.lexsort((np.array([r.current for r in self.races], dtype=np.int64),
                                np.array([r.prior for r in self.races], dtype=np.int64)))
            self.races = [self.races[i] for i in order.tolist()]

    def _step(self, chunk) -> None:
        if self.limit is not None or self.flow is None:
            self.events = []
            return
        t0 = time.perf_counter()
        try:
            with paused_gc():
                self._process(chunk if chunk is not None else _EmptyChunk())
        except CrossedDomains:
            # the split clocks' premise failed (see racecheck.domains): stop; Racecheck runs again, whole
            self.crossed = True
            self.events, self.live, self.shadow, self.flow = [], Units.empty(), Shadow(), None
        except ResourceLimit as err:
            # over budget: stop analysing (the checker reports it) and let go of what the analysis holds
            self.limit = err
            self.events, self.live, self.shadow, self.flow = [], Units.empty(), Shadow(), None
        finally:
            self.wall_time_s += time.perf_counter() - t0

    # ------------------------------------------------------------------ one chunk
    def _process(self, chunk) -> None:
        events, self.events = self.events, []
        flow = self.fl
        extra = []
        for ev in events:
            if ev.kind not in REGISTERED:
                continue
            flow.register(ev)
            rec = dealloc_record(ev)
            if rec is not None:
                extra.append(rec)
                flow.column(rec.actor, rec.warp)
                flow.retired.add(rec.actor)
        chunk, dropped, dropped_lanes = self.unwritten.split(chunk)
        self.records += dropped
        self.lane_accesses += dropped_lanes
        self.unwritten_lanes += dropped_lanes
        new = from_chunk(chunk, self.allocs, self.next_index, flow.op_kind, extra)
        assert new.lane is not None and new.lane_start is not None       # a fresh chunk's table has its lanes
        self.next_index += new.n
        # released shared memory: its entries can pair with nothing any more (and would be carried for good)
        if self.shadow.drop(self.allocs.released(chunk.allocs)) and self.cold:
            waiting = self.shadow.cold_records()
            self.cold = [p for p in (part.take(np.flatnonzero(np.isin(part.index, waiting))) for part in self.cold)
                         if p.n]
            self.cold_ops = {a for p in self.cold for a in p.actor[p.actor >= 0].tolist()}
        self.records += new.n
        self.lane_accesses += int(new.lane.size)
        flow.retired.update(chunk.retired)
        acts = np.flatnonzero(new.actor >= 0)
        if acts.size:
            # an async access whose operation was never issued still gets a column (numbered in its warp's domain)
            ops, first = np.unique(new.actor[acts], return_index=True)
            for a, wp in zip(ops.tolist(), new.warp[acts[first]].tolist()):
                if a not in flow.async_col:
                    flow.column(a, wp)
        c = _Chunk()
        live = self.live
        wrote = np.unique(new.key[new.write & (np.diff(new.lane_start) > 0)]).tolist()
        wake = self.shadow.waking(wrote)
        if wake.size:            # a first write to an allocation: its waiting accesses' records join the table
            cold = self.cold[0]
            for part in self.cold[1:]:
                cold = cold.concat(part)
            pos = np.searchsorted(cold.index, wake)
            # woken records are older than some carried ones: they sort in between, and the carried entries
            # must follow their records to the new rows
            live = live.merge(cold.take(pos))
            rest = np.ones(cold.n, dtype=np.bool_)
            rest[pos] = False
            cold = cold.take(np.flatnonzero(rest))
            self.cold = [cold] if cold.n else []
            self.cold_ops = set(cold.actor[cold.actor >= 0].tolist())
        c.nlive = live.n
        c.units = U = live.concat(new)
        # (the table holds the carried records now: the old one goes before the chunk's arrays are made)
        del live
        self.live = Units.empty()
        c.strong = (new.actor < 0) & ((new.strength > 0) | new.acquiring | new.releasing)
        ucol = self._ucol(U)
        uid = None
        if flow.split:
            # columns are per clock domain: the same-actor test needs launch-wide ids (a lane's, or an operation's)
            uid = np.where(U.actor >= 0, -1 - U.actor, np.maximum(U.warp, 0) * 32)
        c.pairs = P = self.shadow.advance(U, c.nlive, len(self.allocs.space), c.strong, ucol, uid)
        self._prepare(c)
        self._events_and_accesses(c, events)
        self._gather_async(c)
        self.races.extend(judge(self, c))
        if self.keep_pairs:
            every = slice(None)
            self.candidates.append(np.stack([U.index[P.prior], P.prior_lane(every), U.index[P.current], P.cur_lane,
                                             P.lo(every), P.gsize(every)], axis=1))
        self._forget(c)
        self.chunks += 1
        if flow.foreign is not None:
            self.foreign_columns = len(flow.foreign)
        self.peak_clock_rows = flow.ledger.peak
        self.clock_width = flow.width
        if self.meter is not None:
            self.meter.check()

    def _ucol(self, U: Units) -> np.ndarray:
        """Each record's actor column: its async operation's, or its warp's lane 0's (plus the lane, per access)."""
        ucol = self.fl.col0[np.maximum(U.warp, 0)]
        asy = np.flatnonzero(U.actor >= 0)
        if asy.size:
            ops, inv = np.unique(U.actor[asy], return_inverse=True)
            col = self.fl.async_col
            ucol[asy] = np.array([col[o] for o in ops.tolist()], dtype=np.int64)[inv]
        return ucol

    def _prepare(self, c: _Chunk) -> None:
        U, P, n = c.units, c.pairs, c.units.n - c.nlive
        pr, cr = P.prior, P.current
        c.pcol = P.pcol
        npairs = pr.size
        c.known = np.zeros(npairs, dtype=np.int32)
        c.known_bridged = np.zeros(npairs, dtype=np.int32)
        c.known_issuer = np.zeros(npairs, dtype=np.int32)
        # the earlier access's proxy, asyncness, tcgen05-ness and bulk-write-ness as bits of one per-record code: one
        # gather per pair; the later access's proxy and proxy domain, repeated over its pairs (they are grouped by
        # it, in order: no gather)
        code = (U.proxy.astype(np.uint8) & 1) | ((U.actor >= 0).astype(np.uint8) << 1) \
            | ((U.tc > 0).astype(np.uint8) << 2) | (U.bulk_write.astype(np.uint8) << 3)
        pf = c.prior_bits = code[pr]
        cur = (U.proxy[c.nlive:].astype(np.uint8) & 1) | (U.domain[c.nlive:].astype(np.uint8) << 1)
        cc = c.cur_bits = np.repeat(cur, np.diff(P.start))
        c.cross = (pf & 1) != (cc & 1)
        # judged on bridged knowledge: different proxies on shared or global bytes, except a bulk copy's own
        # destination read generically (its completion bridges it)
        c.need_bridged = c.cross & ((cc & 6) != 0) & ~(((pf & 8) != 0) & ((cc & 1) == 0))
        c.prior_tc = (pf & 4) != 0
        # per chunk record, the bits some pair it closes has (pairs are grouped by their record: one reduceat)
        bits = (pf & 6) | c.cross
        per = np.zeros(n, dtype=np.uint8)
        some = np.flatnonzero(np.diff(P.start) > 0)
        if some.size:
            per[some] = np.bitwise_or.reduceat(bits, P.start[some])
        c.cross_any = (per & 1) != 0
        c.async_prior_any = (per & 2) != 0
        c.tc_prior_any = (per & 4) != 0
        c.xdom = None
        if self.fl.split and npairs:
            # pairs of different clock domains: nothing orders them (racecheck.domains); their columns alias
            dom = self.fl.domain
            x = dom[np.maximum(U.warp[pr], 0)] != dom[np.maximum(U.warp[cr], 0)]
            c.xdom = x if x.any() else None

    def _events_and_accesses(self, c: _Chunk, events: list) -> None:
        """The chunk's events and its knowledge-moving accesses in seq order; the other accesses of a warp at the
        warp's next event (its knowledge is the same until then)."""
        U, nlive, flow = c.units, c.nlive, self.fl
        seq = U.seq[nlive:]
        strong = c.strong
        batch = np.flatnonzero((U.actor[nlive:] < 0) & ~strong)
        warps = U.warp[nlive:][batch]
        batch = batch[stable_order(warps, max(flow.nw, 1))]
        warps = U.warp[nlive:][batch]
        c.wu, c.wcur = {}, {}
        c.deferred = Deferred()
        if batch.size:
            bounds = np.flatnonzero(np.r_[True, warps[1:] != warps[:-1], True])
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                idx = batch[a:b]
                c.wu[int(warps[a])] = (idx, seq[idx].tolist())
                c.wcur[int(warps[a])] = 0
        strong_idx = np.flatnonzero(strong).tolist()
        strong_seq = seq[strong_idx].tolist()
        meter = self.meter
        i = j = 0
        ne, ns = len(events), len(strong_idx)
        nw = flow.nw
        while i < ne or j < ns:
            if meter is not None and not (i + j) & 4095:
                meter.check()
            if j >= ns or (i < ne and events[i].seq < strong_seq[j]):
                ev = events[i]
                i += 1
                if ev.warp in c.wu and ev.kind not in INERT and 0 <= ev.warp < nw:
                    self._flush_warp(c, ev.warp, ev.seq)
                flow.sync(ev)
            else:
                r = strong_idx[j]
                self._flush_warp(c, int(U.warp[nlive + r]), strong_seq[j])
                j += 1
                self._visit(c, r)
        for w in c.wu:
            self._flush_warp(c, w, _INF)
        c.deferred.gather(c, flow)

    def _flush_warp(self, c: _Chunk, wid: int, seq: float) -> None:
        """Warp `wid`'s plain accesses before `seq`: stamped with its epoch, their pairs gathered from its knowledge."""
        entry = c.wu.get(wid)
        if entry is None:
            return
        idx, seqs = entry
        cur = c.wcur[wid]
        k = bisect_left(seqs, seq, cur)
        if k <= cur:
            return
        sel = idx[cur:k]
        c.wcur[wid] = k
        flow = self.fl
        w = flow.warps[wid]
        c.units.epoch_at[c.nlive + sel] = w.epoch
        if c.xdom is not None:          # (foreign columns: gathered now, as knowledge crosses)
            gather_now(c, self.fl, w, sel)
            return
        if len(c.deferred) and c.deferred.width != flow.width:
            c.deferred.gather(c, flow)      # (rows widened: the kept ones first)
        c.deferred.add(w, sel, int(flow.domain[wid]), flow.width)

    def _visit(self, c: _Chunk, r: int) -> None:
        """A strong access (chunk record `r`): acquire through memory, gather, stamp, publish; fence.sc bookkeeping."""
        U, P, flow = c.units, c.pairs, self.fl
        u = c.nlive + r
        wid = int(U.warp[u])
        w = flow.warps[wid]
        g = int(U.index[u])
        level = int(U.strength[u])
        order = ORDERS[int(U.order[u])]
        es, ee = int(P.ent_start[r]), int(P.ent_start[r + 1])
        ent_lane, pw_unit, pw_lane = P.ent_lane[es:ee].tolist(), P.ent_pw_unit[es:ee].tolist(), \
            P.ent_pw_lane[es:ee].tolist()
        if U.acquiring[u]:
            sources = [(lane, int(U.index[t]), wl, int(U.strength[t]), int(U.cta[t]))
                       for lane, t, wl in zip(ent_lane, pw_unit, pw_lane) if t >= 0]
            for t, wlevel, cross in flow.acquire_from_memory(g, wid, level, order in ("acquire", "acq_rel"), sources):
                t_local = int(np.searchsorted(U.index, t))
                self.scope_mismatches.append((U.record(t_local, self.allocs), U.record(u, self.allocs), wlevel, level,
                                              cross))
        sel = np.array([r], dtype=np.int64)
        gather_now(c, self.fl, w, sel)
        U.epoch_at[u] = w.epoch
        assert U.lane is not None and U.lane_start is not None
        lanes = U.lane[U.lane_start[r]:U.lane_start[r + 1]].tolist()
        if level > 0:
            self._fence_sc_access(c, r, u, g, wid, level, lanes, ent_lane, pw_unit, pw_lane)
        if U.write[u]:
            if order in _RELEASE:
                flow.publish(g, wid, lanes, level, via_fence=False)
            elif order in _VIA_FENCE:
                flow.publish(g, wid, lanes, level, via_fence=True)
            if U.acquiring[u]:   # an RMW: it carries on the release sequences of the writes it read
                flow.relay(g, wid, level, sources)

    def _fence_sc_access(self, c, r, u, g, wid, level, lanes, ent_lane, pw_unit, pw_lane) -> None:
        """A morally strong access, for the fence.sc tracker: per lane the write it read (or overwrote), and for a
        write whether that write happened before it (what a forced fence.sc pair may have to check)."""
        U, flow = c.units, self.fl
        if not flow.sc.fences:
            # no fence.sc yet: a forced pair needs a fence.sc before its earlier access in that access's thread, so
            # neither this access nor a later one pairing with it can make a candidate (common.fence_sc); what is
            # noted for candidates (write threads, write order) is noted again by the later access that needs it
            return
        sources: dict = {}
        for lane, t, wl in zip(ent_lane, pw_unit, pw_lane):
            sources.setdefault(lane, set()).add(None if t < 0 else (int(U.index[t]), wl))
            if t >= 0:
                flow.write_thread[(int(U.index[t]), wl)] = (int(U.warp[t]), int(U.actor[t]))
        kind = ("read", "write", "rmw")[int(U.kind[u])]
        k = int(U.key[u])
        off = U.offset[U.lane_start[r]:U.lane_start[r + 1]].tolist()
        srcs = []
        for lane in lanes:
            seen = sources.get(lane, {None})
            srcs.append(next(iter(seen)) if len(seen) == 1 else "mixed")
        # (a write that read one write, not none, not "mixed"): was that write ordered before it, all lanes at once
        asked = {lane: src for lane, src in zip(lanes, srcs) if isinstance(src, tuple)} if U.write[u] else {}
        ordered = self._ordered_before(c, r, asked) if asked else {}
        seq, cta, size = float(U.seq[u]), int(U.cta[u]), int(U.size[u])
        where = (self.allocs.space[k], self.allocs.id[k])
        for lane, o, src in zip(lanes, off, srcs):
            flow.write_thread[(g, lane)] = (wid, -1)
            flow.sc.access(seq, (g, lane), (wid, lane), cta, level, kind, where + (o, size), src)
            if lane in ordered:
                flow.sc_order[(g, lane)] = {src: ordered[lane]}

    def _ordered_before(self, c: _Chunk, r: int, asked: dict) -> dict:
        """For each lane of `asked` (lane -> write (record, lane)): is that write ordered before chunk record `r`'s
        access by the lane, by the knowledge gathered for their pairs (False if they make no pair)?"""
        U, P = c.units, c.pairs
        lanes = list(asked)
        t = np.searchsorted(U.index, np.array([asked[lane][0] for lane in lanes], dtype=np.int64))
        wl = np.array([asked[lane][1] for lane in lanes], dtype=np.int64)
        seq = float(U.seq[c.nlive + r])
        for x in np.unique(t[(U.actor[t] < 0) & (t >= c.nlive)]).tolist():
            self._flush_warp(c, int(U.warp[x]), seq)          # its stamp
        stamp = np.where(U.actor[t] >= 0, U.stamp[t], U.epoch_at[t])
        s, e = int(P.start[r]), int(P.start[r + 1])
        which = np.full(32, -1, dtype=np.int64)            # lane -> its position in `lanes`
        which[lanes] = np.arange(len(lanes))
        m = which[P.cur_lane[s:e]]
        hit = m >= 0
        mm = np.maximum(m, 0)
        hit &= (P.prior[s:e] == t[mm]) & (P.prior_lane(slice(s, e)) == wl[mm])
        some = np.bincount(m[hit], minlength=len(lanes)) > 0
        late = np.bincount(m[hit & (c.known[s:e] < stamp[mm])], minlength=len(lanes)) > 0
        return dict(zip(lanes, (some & ~late).tolist()))

    def _gather_async(self, c: _Chunk) -> None:
        """What each async access knows of its priors: its operation's fork (tcgen05 knowledge against tcgen05
        priors), as of the access — a fork or an issuer column set by a later event is not known yet."""
        U, P, flow, nlive = c.units, c.pairs, self.fl, c.nlive
        recs = np.flatnonzero((U.actor[nlive:] >= 0) & (np.diff(P.start) > 0))
        if not recs.size:
            return
        actor = U.actor[nlive + recs]
        seq = U.seq[nlive + recs]
        ops, inv = np.unique(actor, return_inverse=True)
        fork_seq = np.array([flow.fork_seq.get(a, _INF) for a in ops.tolist()])[inv]
        ok = fork_seq < seq                        # an operation never forked knows nothing
        recs, actor, seq = recs[ok], actor[ok], seq[ok]
        if not recs.size:
            return
        s, e = P.start[recs], P.start[recs + 1]
        n = e - s
        run, within = _segments(n)
        q = s[run] + within
        ops, inv_rec = np.unique(actor, return_inverse=True)
        inv = inv_rec[run]
        cols = c.pcol[q]
        unknown = None
        if c.xdom is not None:
            cols, unknown = foreign_cols(c, flow, q, cols)
        opl = ops.tolist()

        def take(rows_of, sel):
            """rows_of(op)[cols] for the pairs in `sel`, stacking only the operations they need."""
            present = np.zeros(len(opl), dtype=np.bool_)      # (np.unique would sort the pairs)
            present[inv[sel]] = True
            used = np.flatnonzero(present)
            remap = np.zeros(len(opl), dtype=np.int64)
            remap[used] = np.arange(used.size)
            table = np.stack([rows_of(opl[i]) for i in used.tolist()])
            return table, remap[inv[sel]]

        table = flow.fork_table(opl)
        c.known[q] = flow.fork_known(table, inv, cols)
        if flow.tc is not None:
            forked = np.array([op in flow.tc.fork for op in opl], dtype=np.bool_)[inv_rec]
            tc_op = (U.tc[nlive + recs] != 0) & c.tc_prior_any[recs] & forked
            sel = tc_op[run] & c.prior_tc[q]
            if sel.any():
                # tcgen05 against tcgen05: ordered only by tcgen05 ordering (pipelines, waits, thread fences)
                tc_table, where = take(lambda op: flow.tc.fork[op][0], sel)
                c.known[q[sel]] = tc_table[where, cols[sel]]
        need = c.need_bridged[q]
        if need.any():
            dom = c.cur_bits[q] >> 1
            for d, name in DOMAIN_NAMES.items():
                sel = need & (dom == d)
                if sel.any():
                    b_table, where = take(lambda op, name=name: flow.fork[op][1][name], sel)
                    c.known_bridged[q[sel]] = b_table[where, cols[sel]]
        m = maybe_unordered_async(c, q)
        if m.size:
            issuer, lost = flow.issuer_cols(U.actor[P.prior[q[m]]], cols[m], flow.domain[U.warp[nlive + recs[run[m]]]],
                                            seq[run[m]])
            c.known_issuer[q[m]] = np.where(lost, 0, flow.fork_known(table, inv[m], issuer))
        if unknown is not None:
            unknown_pairs(c, q[unknown])

    def _forget(self, c: _Chunk) -> None:
        """Keep what a later access can still pair with (see the module docstring)."""
        flow, U, shadow = self.fl, c.units, self.shadow
        if shadow.new_cold.size:
            fresh = U.take(np.searchsorted(U.index, shadow.new_cold))
            self.cold.append(fresh)
            self.cold_ops.update(fresh.actor[fresh.actor >= 0].tolist())
        # (carried entries name their records by number: the new table needs no renumbering of them)
        self.live = U.take(shadow.live_units(U.index))
        self.peak_live_entries = max(self.peak_live_entries, len(shadow))
        kept = [self.live.index] + [part.index for part in self.cold]
        flow.keep_records(lambda i: any(k.size and k[min(np.searchsorted(k, i), k.size - 1)] == i for k in kept))
        alive = self.cold_ops | set(np.unique(self.live.actor[self.live.actor >= 0]).tolist())
        flow.forget([op for op in flow.retired if op not in alive])
        flow.settle(flow.retired)       # (the forgotten left it: these are alive as earlier accesses only)
        flow.collect()
        flow.compact()
