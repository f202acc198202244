"""The Racecheck pass: judge a trace's conflicting pairs by happens-before knowledge.

Three steps.  `pairs` finds, vectorized, every conflicting candidate pair (DESIGN §7's
shadow of last writes and reads since, unrolled over the trace).  Then one pass in
execution order moves knowledge at sync events (DESIGN §6): mbarrier arrive ->
generation -> wait (per lane; relaxed waits take only async completions), named-barrier
contributions -> resumers, warp syncs over their member lanes, fence.sc pairs whose
order the run forces (`common.fence_sc`), release stores/atomics -> acquire loads reading from them with covering scopes,
fence.proxy.async (bridges per domain), async operations forked at issue and known
after their completion is observed (a bulk store's source reads already at
wait_group.read), tcgen05 operations by their own ordering (`tcgen`); at each access that closes pairs it gathers what
the accessing actor knows of each earlier access.  Last, `judge` decides every pair at
once, and the unordered ones are classified in DESIGN §7's order.
"""
from __future__ import annotations

import numpy as np

from ..common import fence_sc
from ..common.ordering import ACQUIRING_ORDERS, GROUP_FAMILY, RELEASING_ORDERS, strength
from .clocks import WarpState
from .pairs import expand, pair, stable_order
from .tcgen import CODE as _TC_CODE
from .tcgen import DEALLOC_ACTOR, TcgenOrder, with_deallocs

_DOMAIN = {"shared": "shared", "global": "global"}
_FENCE_DOMAINS = {"all": ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
                  "shared": ("shared",), "global": ("global",)}
_PROXY_DOMAIN = {"shared": "shared::cta", "global": "global", "tmem": "other"}
_BULK_KINDS = ("bulk", "tma", "cp.async.bulk")
_S2G = ("bulk.s2g", "tma.s2g")
_LANES = np.arange(32)
# what knowing an async column means: a bulk store's source reads are done (wait_group.read), or the whole
# operation is (its accesses are stamped DONE, except a bulk store's source reads, stamped READ_DONE)
READ_DONE, DONE = 1, 2
HINT_SC = ("a fence.sc after the first access and one before the second synchronize only in the order the run "
           "forces (PTX ISA 8.9.3: the Fence-SC order is determined at runtime), and nothing observed here forces the "
           "writer's first: publish through a flag (fence; st.relaxed flag | ld.relaxed flag until set; fence)")
_HINT_A2G = ("an async-proxy read completed, but its completion bridges no proxy: execute "
             "fence.proxy.async.shared::cta after observing it and before the generic write")


class Race:
    """The unordered pairs between one earlier and one later access record: byte hull and witness lanes."""

    __slots__ = ("prior", "current", "prior_lane", "current_lane", "lo", "hi", "count", "prior_kind",
                 "current_kind", "how")

    def __init__(self, prior, current, prior_lane, current_lane, lo, hi, count, prior_kind, current_kind):
        self.prior, self.current = prior, current
        self.prior_lane, self.current_lane = prior_lane, current_lane
        self.lo, self.hi, self.count = lo, hi, count
        self.prior_kind, self.current_kind = prior_kind, current_kind


class Pass:
    def __init__(self, run_warps: int, warps_per_cta: int, events, records):
        self.nw = run_warps
        self.wpc = warps_per_cta
        self.events = events
        self.records = records = with_deallocs(events, records)
        self.async_col: dict[int, int] = {}
        self.async_info: dict[int, dict] = {}
        self.op_kind: dict[int, str] = {}
        for ev in events:
            if ev.kind == "async.issue" and ev.details.get("op") is not None:
                self.async_col.setdefault(ev.details["op"], run_warps * 32 + len(self.async_col))
                self.op_kind[ev.details["op"]] = ev.details.get("kind", "")
            elif ev.kind == "tcgen05.dealloc":
                self.op_kind[DEALLOC_ACTOR + ev.seq] = "tcgen05.dealloc"
        self.has_tc = any(k.startswith("tcgen05") for k in self.op_kind.values())
        for rec in records:
            if rec.actor >= 0 and rec.actor not in self.async_col:
                self.async_col[rec.actor] = run_warps * 32 + len(self.async_col)
        self.width = run_warps * 32 + len(self.async_col)
        self.warps = [WarpState(w, w // max(warps_per_cta, 1), self.width) for w in range(run_warps)]
        self.tc = TcgenOrder(self.width, self.async_col) if self.has_tc else None
        if self.has_tc:
            for w in self.warps:
                w.tc_start(self.width)
        self.fork: dict[int, tuple] = {}          # async op -> (ordinary row, {domain: bridged row}, (warp, lane, epoch))
        self.fork_seq: dict[int, float] = {}      # async op -> seq of the event that forked it
        # an async column's issuing lane column (a lane's column maps to itself): classifies lifetime races
        self.issuer_col = np.arange(self.width, dtype=np.int64)
        self.issuer_seq = np.full(self.width, np.inf)    # seq of the event that set an async column's issuer
        self.mb: dict[tuple, dict] = {}           # (cta, addr, gen) -> {"release": row, "bridged": {d: row}, "cols": set}
        self.named: dict[tuple, dict] = {}
        # fence.sc: (seq, lane) -> the earlier fence.sc instances it synchronizes with, and the knowledge of those
        self.sc_forced = fence_sc.candidates(events, records)
        self.sc_sources = {c.f1 for cs in self.sc_forced.values() for c in cs}
        self.sc_rows: dict[tuple, np.ndarray] = {}
        self.sc_fences: dict[tuple, list] = {}       # (warp, lane) -> seqs of its fence.sc (for the race hint)
        for ev in events:
            if ev.kind == "fence.sc":
                for lane in ev.lane_list():
                    self.sc_fences.setdefault((ev.warp, lane), []).append(ev.seq)
        zero = np.zeros(self.width, dtype=np.int32)
        self._zero_bridged = {"shared": zero, "global": zero}
        self._members: dict[int, np.ndarray] = {}
        self.release_rows: dict[tuple, tuple] = {}   # (record index, lane) -> (row, scope level, cta)
        self.tc_rows: dict[tuple, np.ndarray] = {}   # (record index, lane) -> fenced tcgen05 knowledge it publishes
        self.races: list[Race] = []
        self.scope_mismatches: list = []
        self._by_rec = None
        self._prepare(records)

    # ------------------------------------------------------------------ setup
    def _prepare(self, records) -> None:
        n = len(records)
        self.ent = ent = expand(records)
        self.pairs = P = pair(ent, n)
        self.lane_accesses = ent.lane_accesses
        self.rec_actor = np.fromiter((r.actor for r in records), dtype=np.int64, count=n)
        self.rec_warp = np.fromiter((r.warp for r in records), dtype=np.int64, count=n)
        self.rec_cta = np.fromiter((r.cta for r in records), dtype=np.int64, count=n)
        self.rec_proxy = np.fromiter((r.proxy == "async" for r in records), dtype=np.int8, count=n)
        self.rec_strength = np.fromiter((strength(r) for r in records), dtype=np.int8, count=n)
        self.rec_domain = np.fromiter((r.space in _DOMAIN for r in records), dtype=np.bool_, count=n)
        self.acquiring = np.fromiter((r.actor < 0 and r.kind in ("read", "rmw")
                                      and r.order in ACQUIRING_ORDERS
                                      for r in records), dtype=np.bool_, count=n)
        kinds = self.op_kind
        self.bulk_write = np.fromiter((r.actor >= 0 and r.kind == "write"
                                       and kinds.get(r.actor, "").startswith(_BULK_KINDS) for r in records),
                                      dtype=np.bool_, count=n)
        acol = np.full(n, -1, dtype=np.int64)
        self.async_stamp = np.full(n, DONE, dtype=np.int64)
        self.rec_tc = np.zeros(n, dtype=np.int64)
        for r, rec in enumerate(records):
            if rec.actor >= 0:
                acol[r] = self.async_col[rec.actor]
                kind = kinds.get(rec.actor, "")
                if rec.kind == "read" and kind in _S2G:
                    self.async_stamp[r] = READ_DONE
                self.rec_tc[r] = _TC_CODE.get(kind, 0)
        er = ent.rec
        self.col = np.where(acol[er] >= 0, acol[er], self.rec_warp[er] * 32 + ent.lane)
        self.prior_col = self.col[P.prior]
        self.cur_lane = ent.lane[P.current]
        npairs = P.prior.size
        # epochs, as in the knowledge rows (int32)
        self.known = np.zeros(npairs, dtype=np.int32)
        self.known_bridged = np.zeros(npairs, dtype=np.int32)
        self.known_issuer = np.zeros(npairs, dtype=np.int32)
        self.prior_rec = prior_rec = er[P.prior]
        self.cur_rec = cur_rec = er[P.current]
        self.prior_tc = self.rec_tc[prior_rec] > 0
        cross = self.rec_proxy[prior_rec] != self.rec_proxy[cur_rec]
        # per current record: does any of its pairs cross proxies / have an async or a tcgen05 prior?
        self.cross_any = np.bincount(cur_rec[cross], minlength=n).astype(np.bool_)
        self.async_prior_any = np.bincount(cur_rec[self.rec_actor[prior_rec] >= 0], minlength=n).astype(np.bool_)
        self.tc_prior_any = np.bincount(cur_rec[self.prior_tc], minlength=n).astype(np.bool_)
        self.epoch_at = np.ones(n, dtype=np.int64)
        # records the knowledge pass must visit: those closing pairs, stamped as priors, or synchronizing
        visit = np.diff(P.start) > 0
        visit[prior_rec] = True
        visit |= self.acquiring
        visit |= np.fromiter((r.actor < 0 and r.order in RELEASING_ORDERS
                              and r.kind in ("write", "rmw") for r in records), dtype=np.bool_, count=n)
        # an async operation's accesses know exactly its fork (fixed at issue): gathered after the pass, at once
        ordinary = self.rec_actor < 0
        self.visit = np.flatnonzero(visit & ordinary)
        self.async_closing = np.flatnonzero(~ordinary & (np.diff(P.start) > 0))

    # ------------------------------------------------------------------ driver
    def run(self, meter=None) -> None:
        """`meter`: the run's budgets (numsim.budget.Meter), whose clock and memory are checked as it goes."""
        events, records = self.events, self.records
        visit = self.visit.tolist()
        i = j = 0
        ne, nv = len(events), len(visit)
        while i < ne or j < nv:
            if meter is not None and not (i + j) & 4095:
                meter.check()
            if j >= nv or (i < ne and events[i].seq < records[visit[j]].seq):
                self.sync(events[i])
                i += 1
            else:
                r = visit[j]
                self.access(r, records[r])
                j += 1
        self._gather_async()
        self.judge()

    # ------------------------------------------------------------------ sync events
    def _payload(self, table, key):
        p = table.get(key)
        if p is None:
            p = table[key] = {"release": None, "bridged": {}, "cols": set(), "tc": None}
        return p

    def _release_into(self, p, w: WarpState, mask) -> None:
        row = w.release(mask)
        p["release"] = row if p["release"] is None else np.maximum(p["release"], row)
        if w.has_bridged:
            for d in ("shared", "global"):
                b = w.release_bridged(mask, d)
                p["bridged"][d] = b if d not in p["bridged"] else np.maximum(p["bridged"][d], b)
        if w.tc is not None:
            self._tc_release_into(p, w.tc_release(mask))

    @staticmethod
    def _tc_release_into(p, row) -> None:
        p["tc"] = row if p["tc"] is None else np.maximum(p["tc"], row)

    def _acquire(self, p, w: WarpState, mask, ordinary: bool = True) -> None:
        if ordinary and p["release"] is not None:
            w.acquire(mask, p["release"], p["bridged"])
        if p["cols"]:
            w.k.learn_columns(mask, np.fromiter(p["cols"], dtype=np.int64, count=len(p["cols"])), DONE)
        if w.tc is not None and p["tc"] is not None:
            # takes effect for tcgen05 operations only at the next fence::after_thread_sync
            w.tc_pending.merge(mask, p["tc"])

    def sync(self, ev) -> None:
        kind, d = ev.kind, ev.details
        if d.get("async"):
            self._completion(ev)
            return
        if ev.warp < 0 or ev.warp >= self.nw:
            return
        w = self.warps[ev.warp]
        mask = ev.lanes
        if kind == "mbarrier.arrive":
            lanes = d.get("lanes")
            if lanes is not None:
                mask = np.zeros(32, dtype=np.bool_)
                mask[lanes] = True
            if d.get("order", "release") != "relaxed":
                self._release_into(self._payload(self.mb, (ev.cta, ev.barrier[2], ev.generation)), w, mask)
            elif w.tc is not None:       # a relaxed arrive still orders fenced tcgen05 work (PTX §9.7.16.6.3)
                self._tc_release_into(self._payload(self.mb, (ev.cta, ev.barrier[2], ev.generation)),
                                      w.tc_release(mask))
        elif kind == "mbarrier.wait":
            if ev.generation is not None:
                p = self.mb.get((ev.cta, ev.barrier[2], ev.generation))
                if p is not None:
                    self._acquire(p, w, mask, ordinary=d.get("order", "acquire") != "relaxed")
        elif kind in ("bar.sync", "bar.arrive", "bar.red"):
            self._release_into(self._payload(self.named, (ev.cta, ev.barrier[2], ev.generation)), w, mask)
        elif kind == "bar.wait":
            p = self.named.get((ev.cta, ev.barrier[2], ev.generation))
            if p is not None:
                self._acquire(p, w, mask)
        elif kind == "warp_sync":
            mm = d.get("membermask", 0xFFFFFFFF)
            if w.tc is not None:
                m = mask if mm == 0xFFFFFFFF else (((mm >> _LANES) & 1).astype(np.bool_) &
                                                   (True if mask is None else mask))
                w.tc_pending.merge(m, w.tc_release(m))
            if mask is None and mm == 0xFFFFFFFF and w.k.rows is None and not w.has_bridged:
                # the common case: a converged warp's lanes learn each other's current epoch
                w.k.row[w.id * 32:w.id * 32 + 32] = w.epoch
                w.epoch += 1
                return
            members = self._members.get(mm)
            if members is None:
                members = self._members[mm] = ((mm >> _LANES) & 1).astype(np.bool_)
            m = members if mask is None else (members & mask)
            row = w.release(m)
            w.k.set_all(m, row)
            if w.has_bridged:
                for dom in ("shared", "global"):
                    w.bridged[dom].set_all(m, w.release_bridged(m, dom))
        elif kind == "fence.proxy.async":
            w.fence_proxy(mask, _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global")))
        elif kind == "fence.sc":
            self._fence_sc(ev, w, mask)
        elif kind == "fence.acq_rel":
            self._fence_acq_rel(w, mask)
        elif kind == "async.issue":
            op = d.get("op")
            if op is not None:
                lane = int(d.get("lane", 0))
                bridged = {dom: w.bridged_snapshot(lane, dom) for dom in ("shared", "global")} if w.has_bridged \
                    else self._zero_bridged
                self.fork[op] = (w.snapshot(lane), bridged, (ev.warp, lane, w.epoch))
                self.fork_seq[op] = ev.seq
                if op in self.async_col:
                    self.issuer_col[self.async_col[op]] = ev.warp * 32 + lane
                    self.issuer_seq[self.async_col[op]] = ev.seq
                self.async_info[op] = {"kind": d.get("kind", ""), "warp": ev.warp, "lane": lane, "site": ev.site,
                                       "iters": ev.iters}
                if "lane" not in d:        # a warp-collective op (tcgen05.ld/st): evidence names the witness lane
                    del self.async_info[op]["lane"]
                if w.tc is not None and d.get("kind", "").startswith("tcgen05"):
                    self.tc.issue(ev, w, op, lane)
                w.epoch += 1
                fam = GROUP_FAMILY.get(d.get("kind", ""))
                if fam:
                    w.async_uncommitted[fam].setdefault(lane, []).append(op)
        elif kind in ("bulk.commit_group", "cp.async.commit_group"):
            fam = kind.split(".commit")[0]
            for lane in (range(32) if mask is None else np.flatnonzero(mask)):
                lane = int(lane)
                w.async_groups[fam].setdefault(lane, []).append(w.async_uncommitted[fam].pop(lane, []))
        elif kind in ("bulk.wait_group", "cp.async.wait_group"):
            fam = kind.split(".wait")[0]
            keep = int(ev.count or 0)
            for lane in (range(32) if mask is None else np.flatnonzero(mask)):
                lane = int(lane)
                groups = w.async_groups[fam].get(lane, [])
                if fam == "cp.async" and keep == 0 and w.async_uncommitted[fam].get(lane):
                    groups = groups + [w.async_uncommitted[fam].pop(lane)]   # wait_all commits first
                retire, rest = (groups[:-keep], groups[-keep:]) if keep else (groups, [])
                w.async_groups[fam][lane] = rest
                one = np.zeros(32, dtype=np.bool_)
                one[lane] = True
                done = READ_DONE if d.get("read") else DONE
                for g in retire:
                    for op in g:
                        w.k.learn_column(one, self.async_col[op], done)
        elif kind == "tcgen05.fence::before_thread_sync":
            if w.tc is not None:
                self.tc.fence_before(ev, w, mask)
        elif kind == "tcgen05.fence::after_thread_sync":
            if w.tc is not None:
                w.tc.absorb(mask, w.tc_pending)
        elif kind in ("tcgen05.wait::ld", "tcgen05.wait::st"):
            cols = np.array([self.async_col[o] for o in d.get("ops", ()) if o in self.async_col], dtype=np.int64)
            w.k.learn_columns(mask, cols, DONE)
            if w.tc is not None:
                w.tc.learn_columns(mask, cols, DONE)
        elif kind == "tcgen05.dealloc":
            actor = DEALLOC_ACTOR + ev.seq
            if actor in self.async_col:
                self.fork[actor] = (w.snapshot(0), self._zero_bridged, (ev.warp, 0, w.epoch))
                self.fork_seq[actor] = ev.seq
                self.issuer_col[self.async_col[actor]] = ev.warp * 32
                self.issuer_seq[self.async_col[actor]] = ev.seq
                self.async_info[actor] = {"kind": "tcgen05.dealloc", "warp": ev.warp, "lane": 0, "site": ev.site,
                                          "iters": ev.iters}
                if w.tc is not None:
                    self.tc.dealloc(actor, w, mask)
                w.epoch += 1

    def _fence_sc(self, ev, w: WarpState, mask) -> None:
        """A fence.sc lane acquires what the earlier fence.sc instances the run forces before it knew at theirs
        (PTX §8.9.4 item 1; never the execution order alone), then acts as fence.acq_rel; its knowledge there is
        what later forced fences acquire."""
        lanes = range(32) if mask is None else np.flatnonzero(mask).tolist()
        for lane in lanes:
            for cand in self.sc_forced.get((ev.seq, lane), ()):
                row = self.sc_rows.get(cand.f1)
                if row is not None and (cand.needs is None or self._write_before(*cand.needs)):
                    one = np.zeros(32, dtype=np.bool_)
                    one[lane] = True
                    w.k.merge(one, row)
        self._fence_acq_rel(w, mask)
        for lane in lanes:
            if (ev.seq, lane) in self.sc_sources:
                self.sc_rows[(ev.seq, lane)] = w.fence_row[lane]

    def _write_before(self, w_id: tuple, b_id: tuple) -> bool:
        """Did write (record, lane) `w_id` happen before write `b_id`, as `b`'s lane knew at `b` (the knowledge
        gathered for their candidate pairs; one lane's accesses are ordered by program order)?"""
        (wr, wl), (br, bl) = w_id, b_id
        wrec, brec = self.records[wr], self.records[br]
        if wrec.actor < 0 and (wrec.warp, wl) == (brec.warp, bl):
            return True
        ent, P = self.ent, self.pairs
        stamp = self.async_stamp[wr] if wrec.actor >= 0 else self.epoch_at[wr]
        found = False
        for q in range(int(P.start[br]), int(P.start[br + 1])):
            if int(ent.lane[P.current[q]]) != bl:
                continue
            p = int(P.prior[q])
            if int(ent.rec[p]) == wr and int(ent.lane[p]) == wl:
                if self.known[q] < stamp:
                    return False
                found = True
        return found

    def _fence_acq_rel(self, w: WarpState, mask) -> None:
        for lane in (range(32) if mask is None else np.flatnonzero(mask)):
            lane = int(lane)
            for row in w.pending_acquire.pop(lane, []):
                one = np.zeros(32, dtype=np.bool_)
                one[lane] = True
                w.k.merge(one, row)
            w.fence_row[lane] = w.snapshot(lane)
        w.epoch += 1

    def _completion(self, ev) -> None:
        """An async completion landed on an mbarrier: its generation now carries the operation."""
        if ev.barrier is None or ev.barrier[0] != "mbarrier":
            return
        op = ev.details.get("op")
        p = self._payload(self.mb, (ev.cta, ev.barrier[2], ev.generation))
        if op is not None and op in self.async_col:
            p["cols"].add(self.async_col[op])
        commit = self.tc.commit_payload(op) if ev.details.get("kind") == "tcgen05.commit" and self.tc else None
        if commit is not None:
            # the waiter learns the commit's tcgen05 operations complete, and the issuer's knowledge at commit;
            # for tcgen05 operations also their causal predecessors (never work the issuer only imported)
            cols, row = commit
            p["cols"].update(cols.tolist())
            fork = self.fork.get(op)
            if fork is not None:
                p["release"] = fork[0] if p["release"] is None else np.maximum(p["release"], fork[0])
            if row is not None:
                self._tc_release_into(p, row)
        if ev.details.get("kind") == "cp.async.mbarrier.arrive":
            # the arrive covers the lane's earlier cp.async operations
            info = self.async_info.get(op, {})
            w = self.warps[info.get("warp", ev.warp)]
            lane = info.get("lane", 0)
            for fam_ops in (w.async_uncommitted["cp.async"].get(lane, []),
                            *w.async_groups["cp.async"].get(lane, [])):
                for o in fam_ops:
                    if self.fork.get(o) and self.fork[o][2][2] <= self.fork[op][2][2]:
                        p["cols"].add(self.async_col[o])

    # ------------------------------------------------------------------ accesses
    def access(self, r: int, rec) -> None:
        """Stamp record `r` and gather, for each pair it closes, what its actor knows of the earlier one."""
        w = self.warps[rec.warp]
        if self.acquiring[r]:
            self._acquire_from_memory(r, rec, w)
        s, e = self.pairs.start[r], self.pairs.start[r + 1]
        if e > s:
            lanes, cols = self.cur_lane[s:e], self.prior_col[s:e]
            self.known[s:e] = w.known(lanes, cols)
            if self.cross_any[r]:
                domain = _DOMAIN.get(rec.space)
                if domain is not None:
                    self.known_bridged[s:e] = w.known(lanes, cols, domain)
            if self.async_prior_any[r]:
                self.known_issuer[s:e] = w.known(lanes, self.issuer_col[cols])
        self.epoch_at[r] = w.epoch
        if self.ent.writes[r]:
            if rec.order in ("release", "acq_rel"):
                self._publish(r, rec)
            elif rec.order in ("relaxed", "volatile"):
                self._publish(r, rec, via_fence=True)

    def _gather_async(self) -> None:
        """What each async access knows of its priors: its operation's fork (tcgen05 knowledge against tcgen05
        priors), as of the access — a fork or an issuer column set by a later event is not known yet."""
        recs = self.async_closing
        if not recs.size:
            return
        records, P = self.records, self.pairs
        ops = list(self.fork)
        row_of = {op: i for i, op in enumerate(ops)}
        op_seq = np.array([self.fork_seq[op] for op in ops] + [np.inf])
        seq = np.fromiter((records[r].seq for r in recs.tolist()), dtype=np.float64, count=recs.size)
        f = np.fromiter((row_of.get(records[r].actor, -1) for r in recs.tolist()), dtype=np.int64, count=recs.size)
        ok = op_seq[f] < seq                       # (-1 reads the inf sentinel: an op never forked)
        recs, f, seq = recs[ok], f[ok], seq[ok]
        if not recs.size:
            return
        s, e = P.start[recs], P.start[recs + 1]
        n = e - s
        q = np.repeat(s, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
        per_pair = lambda v: np.repeat(v, n)      # noqa: E731
        a, cols = per_pair(f), self.prior_col[q]

        def take(rows_of, sel):
            """rows_of(op)[cols] for the pairs in `sel`, stacking only the operations they need."""
            used, inv = np.unique(a[sel], return_inverse=True)
            table = np.stack([rows_of(ops[i]) for i in used.tolist()])
            return table, inv

        table, inv = take(lambda op: self.fork[op][0], slice(None))
        self.known[q] = table[inv, cols]
        if self.tc is not None:
            tc_op = np.fromiter((self.rec_tc[r] != 0 and self.tc_prior_any[r] and records[r].actor in self.tc.fork
                                 for r in recs.tolist()), dtype=np.bool_, count=recs.size)
            sel = per_pair(tc_op) & self.prior_tc[q]
            if sel.any():
                # tcgen05 against tcgen05: ordered only by tcgen05 ordering (pipelines, waits, thread fences)
                tc_table, tc_inv = take(lambda op: self.tc.fork[op][0], sel)
                self.known[q[sel]] = tc_table[tc_inv, cols[sel]]
        space = np.fromiter((_DOMAIN.get(records[r].space, "") for r in recs.tolist()), dtype="<U6",
                            count=recs.size)
        for domain in ("shared", "global"):
            sel = per_pair(self.cross_any[recs] & (space == domain))
            if sel.any():
                b_table, b_inv = take(lambda op: self.fork[op][1][domain], sel)
                self.known_bridged[q[sel]] = b_table[b_inv, cols[sel]]
        sel = per_pair(self.async_prior_any[recs])
        if sel.any():
            c = cols[sel]
            issuer = np.where(self.issuer_seq[c] < per_pair(seq)[sel], self.issuer_col[c], c)
            self.known_issuer[q[sel]] = table[inv[sel], issuer]

    # ------------------------------------------------------------------ judging the pairs
    def judge(self) -> None:
        """All pairs at once: ordered by knowledge (bridged where proxies differ), tcgen05 order, or both strong
        (same-actor pairs, ordered by program order, are never candidates)."""
        P, ent = self.pairs, self.ent
        if not P.prior.size:
            return
        pr, cr = self.prior_rec, self.cur_rec
        stamp = np.where(self.rec_actor >= 0, self.async_stamp, self.epoch_at)[pr]
        known = self.known
        if self.cross_any.any():
            cross = self.rec_proxy[pr] != self.rec_proxy[cr]
            bridged = np.minimum(known, self.known_bridged)
            has_domain = self.rec_domain[cr]
            own_dest = self.bulk_write[pr] & (self.rec_proxy[cr] == 0)
            known = np.where(cross & has_domain & ~own_dest, bridged, known)
        # the remaining rules only ever add order: apply them to the pairs knowledge leaves unordered
        # (pairs of one actor, ordered by program order, were never made: `pairs`)
        bad = np.flatnonzero(known < stamp)
        if not bad.size:
            return
        bp, bc, bknown = pr[bad], cr[bad], known[bad]
        pcol, ccol = self.prior_col[bad], self.col[P.current[bad]]
        cross = self.rec_proxy[bp] != self.rec_proxy[bc]
        ordered = np.zeros(bad.size, dtype=np.bool_)
        if self.has_tc:
            ordered |= self.tc.ordered(self.rec_tc[bp], self.rec_tc[bc], pcol, ccol, bknown, self.issuer_col)
        ps, cs = self.rec_strength[bp], self.rec_strength[bc]
        need = np.where(self.rec_cta[bp] == self.rec_cta[bc], 1, 3)
        ordered |= (ps >= need) & (cs >= need) & ~cross
        bad = bad[~ordered]
        if not bad.size:
            return
        # one race per (prior record, current record): byte hull, count, and the first pair as the witness
        key = pr[bad].astype(np.int64) * len(self.records) + cr[bad]
        order = np.argsort(key, kind="stable")
        bad, key = bad[order], key[order]
        firsts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        lo_byte = ent.byte[P.current[bad]]
        hi_byte = lo_byte + ent.unit[P.current[bad]]
        los = np.minimum.reduceat(lo_byte, firsts)
        his = np.maximum.reduceat(hi_byte, firsts)
        counts = np.diff(np.r_[firsts, bad.size])
        for g, i in enumerate(firsts):
            q = int(bad[i])
            p_rec, c_rec = int(pr[q]), int(cr[q])
            prior, cur = self.records[p_rec], self.records[c_rec]
            race = Race(p_rec, c_rec, int(ent.lane[P.prior[q]]), int(ent.lane[P.current[q]]),
                        int(los[g]), int(his[g]), int(counts[g]),
                        "write" if ent.writes[p_rec] else "read", cur.kind)
            race.how = self._classify(prior, cur, q, p_rec, c_rec)
            self.races.append(race)

    def _classify(self, prior, cur, q: int, p_rec: int, c_rec: int) -> tuple:
        """(ordering domain, ordering failure, text, proxy bridge, hint or None) in DESIGN §7's order."""
        # a bulk copy's own destination bytes are bridged by its completion: what is missing there is the completion
        own_destination = bool(self.bulk_write[p_rec]) and cur.proxy == "generic"
        if prior.proxy != cur.proxy and not own_destination:
            pd, cd = _PROXY_DOMAIN.get(prior.space, "other"), _PROXY_DOMAIN.get(cur.space, "other")
            bridge = {"prior_proxy": prior.proxy, "current_proxy": cur.proxy, "prior_domain": pd, "current_domain": cd}
            hint = None
            if prior.actor >= 0:
                # async -> generic: was the async access at least observed complete (then only the fence is missing)?
                done = bool(self.known[q] >= self.async_stamp[p_rec])
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
        if strength(prior) > 0 or strength(cur) > 0:
            return ("memory", "missing_release_acquire", "no release/acquire edge orders the accesses", None, None)
        if prior.actor >= 0 and prior.actor in self.fork:
            # the issue is ordered before the current access but the completion is not
            if self.known_issuer[q] >= self.fork[prior.actor][2][2]:
                hint = self._tc_hint(p_rec, c_rec, cur)
                if prior.kind == "write" and self.op_kind.get(prior.actor) in _S2G and self.known[q] == READ_DONE:
                    hint = ("cp.async.bulk.wait_group.read retires only the store's source reads; wait with "
                            "cp.async.bulk.wait_group (without .read) before accessing its destination")
                return ("completion", "async_lifetime_not_drained",
                        "an asynchronous access is not completed before the conflicting reuse", None, hint)
        return ("execution", "missing_inter_actor_sync", "no synchronization edge orders the actors", None,
                self._tc_hint(p_rec, c_rec, cur) or self._sc_hint(prior, cur, q))

    def _sc_hint(self, prior, cur, q: int) -> str | None:
        """Two plain accesses with a fence.sc after the first and one before the second, whose order the run does
        not force: say so (a flagless fence.sc handoff is the usual case)."""
        if not self.sc_fences or prior.actor >= 0 or cur.actor >= 0:
            return None
        before = self.sc_fences.get((prior.warp, int(self.ent.lane[self.pairs.prior[q]])), ())
        after = self.sc_fences.get((cur.warp, int(self.ent.lane[self.pairs.current[q]])), ())
        if any(s > prior.seq for s in before) and any(s < cur.seq for s in after):
            return HINT_SC
        return None

    def _tc_hint(self, p_rec: int, c_rec: int, cur) -> str | None:
        if self.tc is None:
            return None
        return self.tc.hint(int(self.rec_tc[p_rec]), int(self.rec_tc[c_rec]),
                            self.async_col.get(self.records[p_rec].actor, -1), cur.actor)

    # ------------------------------------------------------------------ release/acquire through memory
    def _publish(self, r: int, rec, via_fence: bool = False) -> None:
        w = self.warps[rec.warp]
        lanes = _LANES if rec.lanes is None else np.flatnonzero(rec.lanes)
        level = self.rec_strength[r]
        for lane in lanes.tolist():
            if w.tc is not None:
                # any morally strong write is a thread sync for fenced tcgen05 work (a relaxed flag included)
                one = np.zeros(32, dtype=np.bool_)
                one[lane] = True
                self.tc_rows[(r, lane)] = w.tc_release(one)
            if via_fence:
                row = w.fence_row.get(lane)
                if row is None:
                    continue
            else:
                row = w.snapshot(lane)
            self.release_rows[(r, lane)] = (row, level, w.cta)
        if not via_fence:
            w.epoch += 1

    def _acquire_from_memory(self, r: int, rec, w: WarpState) -> None:
        """A strong read takes the release row of the write it reads from (per lane, scopes covering)."""
        level = self.rec_strength[r]
        acquire = rec.order in ("acquire", "acq_rel")
        ent = self.ent
        mine = self._entries_of(r)
        seen = set()
        for e in mine.tolist():
            t_entry = int(self.pairs.prior_write[e])
            if t_entry < 0:
                continue
            t, wl, lane = int(ent.rec[t_entry]), int(ent.lane[t_entry]), int(ent.lane[e])
            if (t, lane) in seen:
                continue
            seen.add((t, lane))
            pub = self.release_rows.get((t, wl))
            tc = self.tc_rows.get((t, wl)) if self.has_tc else None
            if pub is None and tc is None:
                continue
            need = 1 if self.rec_cta[t] == w.cta else 3
            if tc is not None and self.rec_strength[t] >= need and level >= need:
                one = np.zeros(32, dtype=np.bool_)
                one[lane] = True
                w.tc_pending.merge(one, tc)
            if pub is None:
                continue
            row, wlevel, wcta = pub
            if wlevel < need or level < need:
                self.scope_mismatches.append((t, r, wlevel, level, wcta != w.cta))
                continue
            one = np.zeros(32, dtype=np.bool_)
            one[lane] = True
            if acquire:
                w.k.merge(one, row)
            else:
                w.pending_acquire.setdefault(lane, []).append(row)

    def _entries_of(self, r: int) -> np.ndarray:
        if self._by_rec is None:
            self._by_rec = stable_order(self.ent.rec, len(self.records))
            self._by_rec_start = np.searchsorted(self.ent.rec[self._by_rec], np.arange(len(self.records) + 1))
        return self._by_rec[self._by_rec_start[r]:self._by_rec_start[r + 1]]



