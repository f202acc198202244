"""The Racecheck pass: a trace's sync events and access records, in execution order.

Sync events move knowledge (DESIGN §6): mbarrier arrive -> generation -> wait (per
lane; relaxed waits take only async completions), named-barrier contributions ->
resumers, warp syncs over their member lanes, fence.sc (a total order), release
stores/atomics -> acquire loads reading from them with covering scopes,
fence.proxy.async (bridges per domain), async operations forked at issue and known
after their completion is observed (mbarrier complete_tx, bulk/cp.async group waits).
Access records are checked against the shadow of their allocation; unordered
conflicts are classified in DESIGN §7's order and deduplicated by (site pair,
allocation) with merged byte ranges.
"""
from __future__ import annotations

import numpy as np

from .clocks import WarpState
from .shadow import LANE_BITS, Shadow, strength

_DOMAIN = {"shared": "shared", "global": "global"}
_FENCE_DOMAINS = {"all": ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
                  "shared": ("shared",), "global": ("global",)}
_PROXY_DOMAIN = {"shared": "shared::cta", "global": "global", "tmem": "other"}
_SPACE_LABEL = {"shared": "smem", "global": "gmem", "tmem": "tmem"}


class Race:
    """One unordered conflicting pair (before deduplication)."""

    __slots__ = ("prior", "current", "prior_lane", "current_lane", "byte", "prior_kind", "current_kind", "how", "unit")

    def __init__(self, prior, current, prior_lane, current_lane, byte, prior_kind, current_kind):
        self.prior, self.current = prior, current
        self.prior_lane, self.current_lane = prior_lane, current_lane
        self.byte = byte
        self.prior_kind, self.current_kind = prior_kind, current_kind


class Pass:
    def __init__(self, run_warps: int, warps_per_cta: int, events, records):
        self.nw = run_warps
        self.wpc = warps_per_cta
        self.events = events
        self.records: list = []                  # access records by index (the shadow's rec numbers)
        self.async_col: dict[int, int] = {}
        self.async_info: dict[int, dict] = {}
        for ev in events:
            if ev.kind == "async.issue" and ev.details.get("op") is not None:
                self.async_col.setdefault(ev.details["op"], run_warps * 32 + len(self.async_col))
        for rec in records:
            if rec.actor >= 0 and rec.actor not in self.async_col:
                self.async_col[rec.actor] = run_warps * 32 + len(self.async_col)
        self.width = run_warps * 32 + len(self.async_col)
        self.warps = [WarpState(w, w // max(warps_per_cta, 1), self.width) for w in range(run_warps)]
        self.fork: dict[int, tuple] = {}          # async op -> (ordinary row, {domain: bridged row}, (warp, lane, epoch))
        self.mb: dict[tuple, dict] = {}           # (cta, addr, gen) -> {"release": row, "bridged": {d: row}, "cols": set}
        self.named: dict[tuple, dict] = {}
        self.sc_row = np.zeros(self.width, dtype=np.int32)
        zero = np.zeros(self.width, dtype=np.int32)
        self._zero_bridged = {"shared": zero, "global": zero}
        self.release_rows: dict[tuple, tuple] = {}   # (record index, lane) -> (row, scope level, cta)
        self.shadows: dict[tuple, Shadow] = {}
        self.races: list[Race] = []
        self.scope_mismatches: list = []
        self.lane_accesses = 0
        self._prepare_shadows(records)
        self._records = records

    # ------------------------------------------------------------------ setup
    def _prepare_shadows(self, records) -> None:
        sizes: dict[tuple, int] = {}
        units: dict[tuple, int] = {}
        written: dict[tuple, list] = {}
        for rec in records:
            key = (rec.space, rec.alloc)
            offs = rec.offsets
            lanes = _LANES if rec.lanes is None else np.flatnonzero(rec.lanes)
            if isinstance(offs, np.ndarray):
                offs = offs[lanes]
                hi, g = int(offs.max()) + rec.size, int(np.gcd.reduce(offs.astype(np.int64)))
            else:
                hi, g = int(offs) + rec.size, int(offs)
            if hi > sizes.get(key, 0):
                sizes[key] = hi
            units[key] = int(np.gcd(units.get(key, 0), np.gcd(g, rec.size)))
            if rec.kind in ("write", "rmw"):
                written.setdefault(key, []).append(rec)
        for key, recs in written.items():
            unit = max(units.get(key, 1), 1)
            mask = np.zeros((sizes[key] + unit - 1) // unit, dtype=np.bool_)
            for rec in recs:
                lanes = _LANES if rec.lanes is None else np.flatnonzero(rec.lanes)
                offs = rec.offsets[lanes] if isinstance(rec.offsets, np.ndarray) else np.full(lanes.size, rec.offsets)
                idx = ((offs // unit)[:, None] + np.arange(rec.size // unit)[None, :]).ravel()
                mask[idx] = True
            self.shadows[key] = Shadow(sizes[key], mask, unit)
        # expand every record to its tracked shadow units once, here, instead of per access in the pass
        self.expanded = []
        for rec in records:
            sh = self.shadows.get((rec.space, rec.alloc))
            lanes = _LANES if rec.lanes is None else np.flatnonzero(rec.lanes)
            if sh is None:
                self.expanded.append((lanes.size, None))
                continue
            unit = sh.unit
            per = rec.size // unit
            first = rec.offsets[lanes] // unit if isinstance(rec.offsets, np.ndarray) \
                else np.full(lanes.size, rec.offsets // unit)
            if per == 1:
                byte, lane_of = first, lanes
            else:
                byte = (first[:, None] + _ARANGE[:per][None, :]).ravel()
                lane_of = np.repeat(lanes, per)
            tb = sh.tracked[byte]
            keep = tb >= 0
            nkeep = int(np.count_nonzero(keep))
            if not nkeep:
                self.expanded.append((lanes.size, None))
            elif nkeep != keep.size:
                self.expanded.append((lanes.size, (sh, byte[keep], lane_of[keep], tb[keep])))
            else:
                self.expanded.append((lanes.size, (sh, byte, lane_of, tb)))

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        events, records = self.events, self._records
        i = j = 0
        while i < len(events) or j < len(records):
            if j >= len(records) or (i < len(events) and events[i].seq < records[j].seq):
                self.sync(events[i])
                i += 1
            else:
                self.access(records[j])
                j += 1

    # ------------------------------------------------------------------ sync events
    def _payload(self, table, key):
        p = table.get(key)
        if p is None:
            p = table[key] = {"release": None, "bridged": {}, "cols": set()}
        return p

    def _release_into(self, p, w: WarpState, mask) -> None:
        row = w.release(mask)
        p["release"] = row if p["release"] is None else np.maximum(p["release"], row)
        if w.has_bridged:
            for d in ("shared", "global"):
                b = w.release_bridged(mask, d)
                p["bridged"][d] = b if d not in p["bridged"] else np.maximum(p["bridged"][d], b)

    def _acquire(self, p, w: WarpState, mask, ordinary: bool = True) -> None:
        if ordinary and p["release"] is not None:
            w.acquire(mask, p["release"], p["bridged"])
        for col in p["cols"]:
            w.k.learn_column(mask, col)

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
                self._acquire(p, w, None)
        elif kind == "warp_sync":
            mm = d.get("membermask", 0xFFFFFFFF)
            members = ((mm >> np.arange(32)) & 1).astype(np.bool_)
            m = members if mask is None else (members & mask)
            row = w.release(m)
            w.k.set_all(m, row)
            if w.has_bridged:
                for dom in ("shared", "global"):
                    w.bridged[dom].set_all(m, w.release_bridged(m, dom))
        elif kind == "fence.proxy.async":
            w.fence_proxy(mask, _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global")))
        elif kind == "fence.sc":
            w.acquire(mask, self.sc_row)
            self.sc_row = np.maximum(self.sc_row, w.release(mask))
            self._fence_acq_rel(w, mask)
        elif kind == "fence.acq_rel":
            self._fence_acq_rel(w, mask)
        elif kind == "async.issue":
            op = d.get("op")
            if op is not None:
                lane = int(d.get("lane", 0))
                bridged = {dom: w.bridged_snapshot(lane, dom) for dom in ("shared", "global")} if w.has_bridged \
                    else self._zero_bridged
                self.fork[op] = (w.snapshot(lane), bridged, (ev.warp, lane, w.epoch))
                self.async_info[op] = {"kind": d.get("kind", ""), "warp": ev.warp, "lane": lane, "site": ev.site,
                                       "iters": ev.iters}
                w.epoch += 1
                fam = {"bulk.s2g": "bulk", "cp.async": "cp.async"}.get(d.get("kind", ""))
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
                for g in retire:
                    for op in g:
                        w.k.learn_column(one, self.async_col[op])

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
    def access(self, rec) -> None:
        index = len(self.records)
        self.records.append(rec)
        nlanes, expanded = self.expanded[index]
        self.lane_accesses += nlanes
        if expanded is None:
            return
        sh, byte, lane_of, tb = expanded
        is_async = rec.actor >= 0
        domain = _DOMAIN.get(rec.space)
        cur_strength = strength(rec)
        cur_proxy = 1 if rec.proxy == "async" else 0
        if rec.kind in ("read", "rmw") and rec.order in ("acquire", "acq_rel", "relaxed", "volatile") \
                and not is_async:
            self._acquire_from_memory(rec, sh, tb, lane_of)
        # prior write
        pcol = sh.w_col[tb]
        has = pcol >= 0
        if has.any():
            self._check(rec, index, sh, tb[has], byte[has], lane_of[has], pcol[has], sh.w_epoch[tb[has]],
                        sh.w_rec[tb[has]], sh.w_proxy[tb[has]], sh.w_strength[tb[has]], cur_proxy, cur_strength,
                        domain, "write")
        if rec.kind in ("write", "rmw"):
            self._check_readers(rec, index, sh, tb, byte, lane_of, cur_proxy, cur_strength, domain)
            col = self._col(rec, lane_of)
            sh.w_col[tb] = col
            sh.w_epoch[tb] = 1 if is_async else self.warps[rec.warp].epoch
            sh.w_rec[tb] = index
            sh.w_strength[tb] = cur_strength
            sh.w_proxy[tb] = cur_proxy
            sh.w_cta[tb] = rec.cta
            if sh.r_mask.shape[1]:
                sh.r_mask[tb] = 0
            sh.a_col[tb] = -1
            if rec.order in ("release", "acq_rel") and not is_async:
                self._publish(rec, index)
            elif rec.order in ("relaxed", "volatile") and not is_async:
                self._publish(rec, index, via_fence=True)
        else:
            self._record_read(rec, index, sh, tb, lane_of, is_async, cur_strength)

    def _col(self, rec, lane_of):
        if rec.actor >= 0:
            return np.full(lane_of.size, self.async_col[rec.actor], dtype=np.int64)
        return rec.warp * 32 + lane_of

    def _known(self, rec, lane_of, cols, domain: str | None):
        if rec.actor >= 0:
            fork = self.fork.get(rec.actor)
            if fork is None:
                return np.zeros(cols.size, dtype=np.int64)
            row = fork[0] if domain is None else fork[1][domain]
            return row[cols]
        return self.warps[rec.warp].known(lane_of, cols, domain)

    def _check(self, rec, index, sh, tb, byte, lane_of, pcol, pepoch, prec, pproxy, pstrength, cur_proxy,
               cur_strength, domain, prior_kind) -> None:
        known = self._known(rec, lane_of, pcol, None)
        cross = pproxy != cur_proxy
        if cross.any() and domain is not None:
            bridged = self._known(rec, lane_of, pcol, domain)
            # a bulk/TMA copy's completion bridges async->generic for its own destination bytes
            own_dest = np.array([self._implicit_bridge(int(r)) for r in prec[cross]], dtype=np.bool_) \
                if cur_proxy == 0 else np.zeros(int(cross.sum()), dtype=np.bool_)
            k2 = known[cross]
            known = known.copy()
            known[cross] = np.where(own_dest, k2, np.minimum(k2, bridged[cross]))
        ordered = known >= pepoch
        same_col = pcol == self._col(rec, lane_of)
        ordered |= same_col
        exempt = (pstrength > 0) & (cur_strength > 0) & ~cross
        if exempt.any():
            need = np.where(sh.w_cta[tb] == rec.cta, 1, 3)
            exempt &= (pstrength >= need) & (cur_strength >= need)
        bad = ~(ordered | exempt)
        for i in np.flatnonzero(bad)[:512]:
            prior = self.records[int(prec[i])]
            plane = int(pcol[i]) - prior.warp * 32 if prior.actor < 0 else int(_first_lane(prior))
            self._race(int(prec[i]), index, plane, int(lane_of[i]), int(byte[i]), prior_kind, rec.kind)

    def _race(self, prior_index, index, prior_lane, lane, unit_index, prior_kind, cur_kind) -> None:
        rec = self.records[index]
        unit = self.shadows[(rec.space, rec.alloc)].unit
        race = Race(prior_index, index, prior_lane, lane, unit_index * unit, prior_kind, cur_kind)
        race.unit = unit
        race.how = self._classify(self.records[prior_index], self.records[index], lane)
        self.races.append(race)

    def _classify(self, prior, cur, lane) -> tuple:
        """(ordering domain, ordering failure, text, proxy bridge) in DESIGN §7's order."""
        if prior.proxy != cur.proxy:
            pd, cd = _PROXY_DOMAIN.get(prior.space, "other"), _PROXY_DOMAIN.get(cur.space, "other")
            return ("memory", "missing_proxy_bridge",
                    f"no {prior.proxy}->{cur.proxy} proxy bridge from {pd} to {cd} orders the accesses",
                    {"prior_proxy": prior.proxy, "current_proxy": cur.proxy, "prior_domain": pd, "current_domain": cd})
        if prior.actor < 0 and cur.actor < 0 and prior.warp == cur.warp:
            return ("execution", "missing_same_warp_lane_order",
                    "different lanes in the same warp have no lane-order edge", None)
        if strength(prior) > 0 or strength(cur) > 0:
            return ("memory", "missing_release_acquire", "no release/acquire edge orders the accesses", None)
        if prior.actor >= 0 and prior.actor in self.fork:
            iw, il, ie = self.fork[prior.actor][2]
            col = np.array([iw * 32 + il])
            if cur.actor < 0 and self.warps[cur.warp].known(np.array([lane]), col)[0] >= ie:
                return ("completion", "async_lifetime_not_drained",
                        "an asynchronous access is not completed before the conflicting reuse", None)
        return ("execution", "missing_inter_actor_sync", "no synchronization edge orders the actors", None)

    def _implicit_bridge(self, prior_index: int) -> bool:
        prior = self.records[prior_index]
        if prior.actor < 0 or prior.kind != "write":
            return False
        kind = self.async_info.get(prior.actor, {}).get("kind", "")
        return kind.startswith(("bulk", "tma", "cp.async.bulk"))

    def _check_readers(self, rec, index, sh, tb, byte, lane_of, cur_proxy, cur_strength, domain) -> None:
        cols_all = self._col(rec, lane_of)
        if sh.slot_warp:
            live_slots = np.flatnonzero(np.count_nonzero(sh.r_mask[tb], axis=0))
        else:
            live_slots = ()
        for s in live_slots:
            s = int(s)
            rw = sh.slot_warp[s]
            rm = sh.r_mask[tb, s]
            live = rm != 0
            if not live.any():
                continue
            idx = np.flatnonzero(live)
            reader_cols = rw * 32 + np.arange(32)
            # knowledge of the reader warp's 32 lanes for every (byte, writer lane) pair
            if rec.actor >= 0:
                fork = self.fork.get(rec.actor)
                row = fork[0] if fork is not None else np.zeros(self.width, dtype=np.int32)
                kn = np.broadcast_to(row[reader_cols][None, :], (idx.size, 32))
            else:
                kn = self.warps[rec.warp].known_block(lane_of[idx], reader_cols)
                if rw == rec.warp:
                    kn[np.arange(idx.size), lane_of[idx]] = 1 << 30     # a lane is ordered after its own reads
            known_bits = ((kn >= sh.r_epoch[tb[idx], s][:, None]) * LANE_BITS[None, :]).sum(axis=1).astype(np.uint64)
            unordered = rm[idx] & ~known_bits
            strong = (sh.r_strength[tb[idx], s] > 0) & (cur_strength > 0) & (cur_proxy == 0)
            unordered[strong] = 0
            bad = np.flatnonzero(unordered)
            if bad.size:
                first = bad[0]
                lane = int(np.flatnonzero((int(unordered[first]) >> np.arange(32)) & 1)[0])
                prior_index = int(sh.r_rec[tb[idx[first]], s])
                for i in bad[:512]:
                    self._race(prior_index, index, lane, int(lane_of[idx[i]]), int(byte[idx[i]]), "read", rec.kind)
        # async readers
        for slot in range(sh.a_col.shape[1]):
            acol = sh.a_col[tb, slot]
            live = acol >= 0
            if not live.any():
                continue
            idx = np.flatnonzero(live)
            known = self._known(rec, lane_of[idx], acol[idx], None)
            if cur_proxy == 0 and domain is not None:
                known = np.minimum(known, self._known(rec, lane_of[idx], acol[idx], domain))
            bad = idx[(known < 1) & (acol[idx] != cols_all[idx])]
            for i in bad[:512]:
                prior_index = int(sh.a_rec[tb[i], slot])
                self._race(prior_index, index, int(_first_lane(self.records[prior_index])), int(lane_of[i]),
                           int(byte[i]), "read", rec.kind)

    def _record_read(self, rec, index, sh, tb, lane_of, is_async, cur_strength) -> None:
        if is_async:
            col = self.async_col[rec.actor]
            free = sh.a_col[tb, 0] < 0
            slot = np.where(free, 0, 1)
            sh.a_col[tb, slot] = col
            sh.a_rec[tb, slot] = index
            return
        s = sh.slot(rec.warp)
        # the lanes that read, OR-ed into the warp's reader mask at the newest epoch (for lanes re-reading this
        # is exact; for lanes whose older read is folded in it is stricter than needed, never weaker)
        np.bitwise_or.at(sh.r_mask[:, s], tb, LANE_BITS[lane_of])
        sh.r_epoch[tb, s] = self.warps[rec.warp].epoch
        sh.r_rec[tb, s] = index
        sh.r_strength[tb, s] = cur_strength

    # ------------------------------------------------------------------ release/acquire through memory
    def _publish(self, rec, index, via_fence: bool = False) -> None:
        w = self.warps[rec.warp]
        lanes = np.arange(32) if rec.lanes is None else np.flatnonzero(rec.lanes)
        level = strength(rec)
        for lane in lanes:
            lane = int(lane)
            if via_fence:
                row = w.fence_row.get(lane)
                if row is None:
                    continue
            else:
                row = w.snapshot(lane)
            self.release_rows[(index, lane)] = (row, level, w.cta)
        if not via_fence:
            w.epoch += 1

    def _acquire_from_memory(self, rec, sh, tb, lane_of) -> None:
        w = self.warps[rec.warp]
        level = strength(rec)
        acquire = rec.order in ("acquire", "acq_rel")
        seen = set()
        for t, lane in zip(sh.w_rec[tb], lane_of):
            t, lane = int(t), int(lane)
            if t < 0 or (t, lane) in seen:
                continue
            seen.add((t, lane))
            writer = self.records[t]
            wl = int(_first_lane(writer))
            pub = self.release_rows.get((t, wl)) or next((v for (ri, _), v in self.release_rows.items() if ri == t),
                                                          None)
            if pub is None:
                continue
            row, wlevel, wcta = pub
            need = 1 if wcta == w.cta else 3
            if wlevel < need or level < need:
                self.scope_mismatches.append((t, len(self.records) - 1, wlevel, level, wcta != w.cta))
                continue
            one = np.zeros(32, dtype=np.bool_)
            one[lane] = True
            if acquire:
                w.k.merge(one, row)
            else:
                w.pending_acquire.setdefault(lane, []).append(row)


_LANES = np.arange(32)
_ARANGE = np.arange(4096)


def _first_lane(rec) -> int:
    if rec.lanes is None:
        return 0
    nz = np.flatnonzero(rec.lanes)
    return int(nz[0]) if nz.size else 0


