"""Which accesses conflict: the candidate pairs of a trace, chunk by chunk, vectorized.

Whether two accesses *conflict* (same bytes, at least one write) does not depend on
happens-before, only on the trace.  So this pass finds every pair Racecheck must judge
before any clock is consulted: every access against the last write before it (same
granule), and every read against the next write after it.  A read that is ordered
before the next write is ordered before every later write through that write (or that
write races and is reported), so these pairs suffice — the classic last-write/
reads-since-last-write shadow, unrolled over a chunk of records at once.

Pairs whose two accesses belong to one actor (the same lane, or the same async operation)
are left out: Racecheck orders them by program order whatever the clocks say, so judging
them could only say "ordered", and dropping them changes no race, witness, byte hull or
count.  (Pruning further, e.g. a read whose own actor reads again before the next write,
would be sound for the verdict but not for the findings: the dropped pair may be the only
one of its site pair, or the first witness, and it moves byte hulls and counts.)

Entries are (record, lane, granule) triples.  Granules are cut per page of an allocation
(`granules.Pages`): no access covers part of a granule, so judging granules is as exact as
judging bytes; when a later chunk brings a finer access, the carried entries of the pages it
cuts are split (until then every access covered whole coarse granules, so the fine granules'
histories are the same).  Pair counts are kept in bytes for that reason; the allocation's
granule (`gran`: the GCD of every access size and offset to it) is what a race's count is in.
Lanes of one record never pair with each other.

Streaming (`Shadow.advance`): only the entries a later access can still pair with are
carried to the next chunk — per granule, its last write and the entries after it (all of
them while it has no write) — so memory follows the live accesses, not the trace.  A
chunk's entries merge with the carried ones of the granules it touches, in the order the
whole-trace computation would give them (carried first: they are older).  Carried entries are
held per allocation and name their record by its number over the run, so a chunk costs the
entries of the allocations it touches: the others are neither copied nor renumbered (a run
that walks a large buffer once carries one entry per granule it wrote, for good).
"""
from __future__ import annotations

import numpy as np

from .granules import Pages

GID_SHIFT = 40                  # granule id = allocation key << GID_SHIFT | first byte
_BYTE_MASK = (1 << GID_SHIFT) - 1


def stable_order(keys: np.ndarray, bound: int) -> np.ndarray:
    """argsort(keys, kind="stable") for keys in [0, bound), in linear time where the bound allows: numpy sorts
    16-bit keys by radix, so wider keys are split by their high part (a few stable partitions) and each part
    sorted by its low 16 bits.  Only keys past 2**20 fall back to the O(n log n) merge sort."""
    if bound <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if bound > 1 << 20:
        return np.argsort(keys, kind="stable")
    high = (keys >> 16).astype(np.uint8)
    low = keys.astype(np.uint16)            # wraps: the low 16 bits
    parts = []
    for h in range(((bound - 1) >> 16) + 1):
        part = np.flatnonzero(high == h)
        parts.append(part[np.argsort(low[part], kind="stable")])
    return np.concatenate(parts)




def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs of the given lengths laid end to end: (run of each position, position within its run)."""
    total = int(counts.sum())
    run = np.repeat(np.arange(counts.size), counts)
    first = np.cumsum(counts) - counts
    return run, np.arange(total, dtype=np.int64) - first[run]


def _interleave(old: np.ndarray, new: np.ndarray, at: np.ndarray) -> np.ndarray:
    """`old` with `new`'s items placed at positions `at` of the result (the rest, in order, `old`'s)."""
    if not at.size or at[0] >= old.size:              # (all after: a run walking a buffer upwards)
        return np.concatenate([old, new])
    out = np.empty(old.size + new.size, dtype=np.result_type(old, new))
    mine = np.zeros(out.size, dtype=np.bool_)
    mine[at] = True
    out[at] = new
    out[~mine] = old
    return out


def _union(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The union of two ascending arrays of unique values (np.union1d without a sort of both)."""
    if not old.size:
        return new
    pos = np.searchsorted(old, new)
    fresh = (pos >= old.size) | (old[np.minimum(pos, old.size - 1)] != new)
    new, pos = new[fresh], pos[fresh]
    return _interleave(old, new, pos + np.arange(new.size)) if new.size else old


class ChunkPairs:
    """The candidate pairs closed by one chunk's records, grouped by the later record (`start`): the records
    (`prior`, `current`, local indices), the later access's lane and the earlier one's actor column; the rest for
    the pairs asked about (`prior_lane(q)`, `ccol(q)`, `lo(q)`, `gsize(q)`: most pairs are never asked).  And, for
    the strong records the caller named, their entries grouped by record (`ent_start`) with the last write before
    each (what a strong read reads from)."""

    __slots__ = ("prior", "current", "cur_lane", "pcol", "start", "ent_unit", "ent_lane", "ent_pw_unit",
                 "ent_pw_lane", "ent_start", "_pe", "_ce", "_lane", "_ecol", "_gid", "_pages")

    # the slots' types, for type checkers (annotations alone create no class attributes)
    prior: np.ndarray
    current: np.ndarray
    cur_lane: np.ndarray
    pcol: np.ndarray
    start: np.ndarray
    ent_unit: np.ndarray
    ent_lane: np.ndarray
    ent_pw_unit: np.ndarray
    ent_pw_lane: np.ndarray
    ent_start: np.ndarray
    _pe: np.ndarray
    _ce: np.ndarray
    _lane: np.ndarray
    _ecol: np.ndarray
    _gid: np.ndarray
    _pages: Pages           # the shadow's: valid until its next `advance`

    def prior_lane(self, q) -> np.ndarray:
        return self._lane[self._pe[q]].astype(np.int64)

    def ccol(self, q) -> np.ndarray:
        return self._ecol[self._ce[q]]

    def lo(self, q) -> np.ndarray:
        return self._gid[self._ce[q]] & _BYTE_MASK

    def gsize(self, q) -> np.ndarray:
        gid = self._gid[self._ce[q]]
        return np.left_shift(1, self._pages.lookup(gid >> GID_SHIFT, gid & _BYTE_MASK))


class Shadow:
    """The carried entries and each allocation's granule (see the module docstring).

    Carried entries are held per allocation key (`ents`: granule ids in granule order, each granule's in trace order;
    record numbers over the run; lanes) with the records they name (`recs`, unique), so a chunk touches only the
    allocations it accesses.
    Allocations nothing has written yet keep their accesses as lane rows (`cold`, records by their number over the
    run), unexpanded: until a write comes they can pair with nothing, and then they join the carried entries, older
    than anything after (the caller puts their records in the table first: `waking`)."""

    def __init__(self):
        self.gran = np.zeros(0, dtype=np.int64)       # allocation key -> its granule: GCD of its accesses (0: not seen)
        self.pages = Pages()                          # the granules entries are cut in, per page
        self.written = np.zeros(0, dtype=np.bool_)    # allocation key -> some write seen
        self.ents: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}   # key -> (gid, record, lane)
        self.recs: dict[int, np.ndarray] = {}        # key -> the records its entries name (or more), ascending
        self._exact: dict[int, int] = {}             # key -> size of its records' list when last made exact
        self.nent = 0
        self.cold: dict[int, list] = {}                # key -> [(record number, lane, offset, size) arrays], in order
        self.cold_rows = 0
        self.new_cold = np.zeros(0, dtype=np.int64)      # records whose accesses the last chunk left waiting

    def __len__(self) -> int:
        return self.nent + self.cold_rows

    @property
    def gid(self) -> np.ndarray:
        """Every carried entry's granule id (diagnostics and tests)."""
        return np.concatenate([e[0] for e in self.ents.values()]) if self.ents else np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------------ granules
    def _grow(self, nkeys: int) -> None:
        if self.gran.size < nkeys:
            extra = nkeys - self.gran.size
            self.gran = np.concatenate([self.gran, np.zeros(extra, dtype=np.int64)])
            self.written = np.concatenate([self.written, np.zeros(extra, dtype=np.bool_)])

    def _granules(self, key: np.ndarray, off: np.ndarray, size: np.ndarray, nkeys: int) -> None:
        """Refine each allocation's granule (what race counts are in) and its pages' (what entries are cut in) by these
        accesses; split carried entries where a page's shrinks."""
        for k, old in self.pages.refine(key, off, size).items():
            self._split_pages(k, old)
        if not key.size:
            return
        cur = self.gran[key]
        safe = np.maximum(cur, 1)
        both = off | size
        # accesses the granule does not divide (it divides gcd(offset, size) iff it divides both); granules are
        # almost always powers of two, where a mask tests that without a division
        if not (self.gran & (self.gran - 1)).any():
            odd = np.flatnonzero((cur == 0) | ((both & (safe - 1)) != 0))
        else:
            odd = np.flatnonzero((cur == 0) | (off % safe != 0) | (size % safe != 0))
        if not odd.size:
            return
        key, size, both = key[odd], size[odd], both[odd]
        if (size > 0).all() and not (size & (size - 1)).any():
            # power-of-two sizes: gcd(offset, size) is the lowest set bit of offset | size, and a gcd of powers
            # of two their minimum: per allocation, the lowest bit present (no gcd, no sort)
            low = np.frexp((both & -both).astype(np.float64))[1] - 1
            present = np.bincount(key * 64 + low, minlength=nkeys * 64).reshape(nkeys, 64) > 0
            keys = np.flatnonzero(present.any(axis=1))
            new = np.left_shift(1, present[keys].argmax(axis=1)).astype(np.int64)
        else:
            g = np.gcd(off[odd], size)
            order = stable_order(key, nkeys)
            ks = key[order]
            bounds = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
            keys = ks[bounds]
            new = np.gcd.reduceat(g[order], bounds)
        self.gran[keys] = np.maximum(np.gcd(self.gran[keys], new), 1)

    def _split_pages(self, key: int, old: np.ndarray) -> None:
        """Carried entries of allocation `key` from the granules of its pages as they were (`old`: log2 per page) to
        the pages' granules now (each granule's pieces in place of it)."""
        if key not in self.ents:
            return
        gid, rec, lane = self.ents[key]
        page = (gid & _BYTE_MASK) >> self.pages.shift
        new = self.pages.lookup(np.full(gid.size, key, dtype=np.int64), gid & _BYTE_MASK)
        rep = np.left_shift(1, old[page].astype(np.int64) - new)
        if (rep == 1).all():
            return
        self.nent += int(rep.sum()) - gid.size
        run, within = _segments(rep)
        gid = gid[run] + (within << new[run])
        order = np.argsort(gid, kind="stable")      # (held in granule order: `advance` looks granules up)
        self.ents[key] = (gid[order], rec[run][order], lane[run][order])

    # ------------------------------------------------------------------ one chunk
    def advance(self, units, nlive: int, nkeys: int, strong: np.ndarray, ucol: np.ndarray,
                uid: np.ndarray | None = None) -> ChunkPairs:
        """Pairs closed by the records units[nlive:] (a table whose first `nlive` rows are the carried records, which
        the carried entries index), and the new carry.  `strong[i]`: chunk record i wants its entries listed;
        `ucol[r]`: record r's actor column (its async operation's, or its warp's first lane's); `uid[r]` the same
        numbering unique over the launch where columns are per clock domain (default: `ucol`)."""
        self._grow(nkeys)
        self.pages.grow(nkeys)
        n = units.n - nlive
        counts = np.diff(units.lane_start)
        row = np.repeat(np.arange(nlive, nlive + n, dtype=np.int32), counts)
        lane, off = units.lane.astype(np.int8), units.offset
        key, size = np.repeat(units.key[nlive:], counts), np.repeat(units.size[nlive:], counts)   # (= [row])
        self._granules(key, off, size, nkeys)
        # allocations nobody has written: their accesses wait, unexpanded, for a first write (per record: a
        # record's lanes share its allocation; records without lanes touch nothing)
        rec_key, some = units.key[nlive:], counts > 0
        written_now = np.zeros(self.gran.size, dtype=np.bool_)
        written_now[rec_key[units.write[nlive:] & some]] = True
        cold_rec = ~(self.written | written_now)[rec_key]
        self.new_cold = np.zeros(0, dtype=np.int64)
        if cold_rec.any():
            cold_row = np.repeat(cold_rec, counts)       # (= cold_rec[row - nlive], without a gather)
            records = units.index[row[cold_row]]
            self.new_cold = units.index[nlive:][cold_rec & some]        # (ascending, as `index` is)
            self._to_cold(records, lane[cold_row], off[cold_row], size[cold_row], key[cold_row])
            hot = ~cold_row
            row, lane, off, size, key = row[hot], lane[hot], off[hot], size[hot], key[hot]
        woken = [k for k in np.flatnonzero(written_now & ~self.written).tolist() if k in self.cold]
        self.written |= written_now
        if woken:
            parts = [p for k in woken for p in self.cold.pop(k)]
            self.cold_rows -= sum(p[0].size for p in parts)
            old = np.searchsorted(units.index[:nlive], np.concatenate([p[0] for p in parts])).astype(np.int32)
            row, lane, off, size = (np.concatenate([a0] + [a]) for a0, a in
                                    zip((old, *(np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))),
                                        (row, lane, off, size)))
            key = units.key[row]
        # entries: one per granule of each lane's access, in record order; an access spanning pages in pieces, one
        # per page (each page has its granule; an empty access covers none)
        end = off + size
        first = off >> self.pages.shift
        npieces = ((end - 1) >> self.pages.shift) - first + 1
        if not (npieces == 1).all():
            run, within = _segments(np.maximum(npieces, 0))
            row, lane, key = row[run], lane[run], key[run]
            page = first[run] + within
            off = np.maximum(off[run], page << self.pages.shift)
            end = np.minimum(end[run], (page + 1) << self.pages.shift)
        shift = self.pages.lookup(key, off)
        per = (end - off) >> shift
        gid = (key << GID_SHIFT) | off                        # each piece's first granule
        if (per != 1).any():
            gran = np.left_shift(1, shift)
            # a lane's granules are gid, gid + gran, ...: a running sum of steps of `gran`, where each lane's first
            # step jumps from the previous lane's last granule to its own first
            starts = np.cumsum(per) - per
            step = np.repeat(gran, per)
            last = gid + (per - 1) * gran
            step[starts[1:]] = gid[1:] - last[:-1]
            if starts.size:
                step[0] = gid[0]
            gid = np.cumsum(step)
            row, lane = np.repeat(row, per), np.repeat(lane, per)
        # with the carried entries of the allocations the chunk touches (older: first), by granule
        touched_key = np.zeros(self.gran.size, dtype=np.bool_)
        touched_key[rec_key[some]] = True
        carried = [k for k in np.flatnonzero(touched_key).tolist() if k in self.ents]
        parts = self._take(carried, gid) if carried else []
        if parts:
            # carried records are rows of the table's first `nlive` (ascending by number, as `index` is)
            crec = np.concatenate([p[1] for p in parts])
            crow = np.searchsorted(units.index[:nlive], crec).astype(np.int32)
            gid = np.concatenate([p[0] for p in parts] + [gid])
            row = np.concatenate([crow, row])
            lane = np.concatenate([p[2] for p in parts] + [lane])
        order = np.argsort(gid, kind="stable")
        gid, unit, lane = gid[order], row[order], lane[order]
        out, keep = self._pairs(units, gid, unit, lane, nlive, n, strong, ucol, ucol if uid is None else uid)
        self._carry(units, gid[keep], unit[keep], lane[keep])
        return out

    def _take(self, keys: list[int], new_gid: np.ndarray) -> list:
        """The carried entries of the granules `new_gid` touches, in allocations `keys` (taken out of the carry:
        the rest stay, untouched).  A granule's entries pair only within it, so the others need not merge."""
        nkey = None
        parts = []
        for k in keys:
            cg, crec, cl = self.ents[k]
            if cg.size * 4 <= new_gid.size:
                # small next to the chunk: merging all of it costs less than finding the granules touched
                parts.append(self.ents.pop(k))
                del self.recs[k]
                self.nent -= cg.size
                continue
            if nkey is None:
                nkey = new_gid >> GID_SHIFT
            mine = new_gid[nkey == k]          # (unsorted, repeated: each gives its granule's run of entries)
            lo, hi = np.searchsorted(cg, mine, "left"), np.searchsorted(cg, mine, "right")
            has = hi > lo
            if not has.any():
                continue
            # the entries some run covers: +1 where a run starts, -1 where it ends, summed
            edge = np.bincount(lo[has], minlength=cg.size + 1) - np.bincount(hi[has], minlength=cg.size + 1)
            sel = np.cumsum(edge[:cg.size]) > 0
            if sel.all():
                parts.append(self.ents.pop(k))
                del self.recs[k]
                self.nent -= cg.size
                continue
            parts.append((cg[sel], crec[sel], cl[sel]))      # (in granule order)
            rest = ~sel
            # (the records' list stays a superset: `_carry` adds the kept ones' and trims it now and then)
            self.ents[k] = (cg[rest], crec[rest], cl[rest])
            self.nent -= cg.size - int(np.count_nonzero(rest))
        return parts

    def _carry(self, units, gid: np.ndarray, unit: np.ndarray, lane: np.ndarray) -> None:
        """Hold the kept entries (sorted by granule) per allocation, naming their records by number."""
        if not gid.size:
            return
        ks = gid >> GID_SHIFT
        bounds = np.r_[np.flatnonzero(ks[1:] != ks[:-1]) + 1, gid.size]
        rec = units.index[unit]
        if units.index.size and units.index[-1] < 1 << 31:
            rec = rec.astype(np.int32)          # (half the bytes per carried entry)
        single = bounds.size == 1
        a = 0
        for b in bounds.tolist():
            k = int(ks[a])
            u = unit[a:b]
            if (b - a) * 8 < units.n:
                mine = np.unique(u)
            else:                               # (marking is linear: np.unique would sort the entries)
                mark = np.zeros(units.n, dtype=np.bool_)
                mark[u] = True
                mine = np.flatnonzero(mark)
            # (copies unless one allocation takes all: a slice would keep the whole chunk's arrays alive)
            g, r, ln = (gid, rec, lane) if single else (gid[a:b].copy(), rec[a:b].copy(), lane[a:b].copy())
            recs = units.index[mine]
            self.nent += b - a
            if k in self.ents:
                # untouched granules of this allocation stay: merged in granule order (disjoint granules)
                og, orec, ol = self.ents[k]
                at = np.searchsorted(og, g) + np.arange(g.size)
                g, r, ln = (_interleave(o, x, at) for o, x in ((og, g), (orec, r), (ol, ln)))
                recs = _union(self.recs[k], recs)
                if recs.size > 4 * self._exact.get(k, 0) + units.n:
                    recs = np.unique(r)          # (trimmed: records whose entries all went)
                    self._exact[k] = recs.size
            self.ents[k], self.recs[k] = (g, r, ln), recs
            a = b

    def drop(self, keys: list[int]) -> bool:
        """Let go of the entries (carried and waiting) of allocations nothing can access again (released: no
        later access can pair with them).  Whether waiting accesses went."""
        cold = False
        for k in keys:
            if k in self.ents:
                self.nent -= self.ents.pop(k)[0].size
                del self.recs[k]
                self._exact.pop(k, None)
            if k in self.cold:
                self.cold_rows -= sum(p[0].size for p in self.cold.pop(k))
                cold = True
        return cold

    def _to_cold(self, record, lane, off, size, key) -> None:
        order = stable_order(key, self.gran.size)
        ks = key[order]
        bounds = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1], True])
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            sel = order[a:b]
            self.cold.setdefault(int(ks[a]), []).append((record[sel], lane[sel], off[sel], size[sel]))
        self.cold_rows += record.size

    def waking(self, keys_written) -> np.ndarray:
        """The records (numbers) of the waiting accesses a chunk writing allocations `keys_written` brings in."""
        parts = [p[0] for k in keys_written if k in self.cold for p in self.cold[k]]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def cold_records(self) -> np.ndarray:
        """The records (numbers) of every waiting access."""
        parts = [p[0] for parts in self.cold.values() for p in parts]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def _pairs(self, units, gid, unit, lane, nlive: int, n: int, strong, ucol, uid) -> tuple[ChunkPairs, np.ndarray]:
        """Pairs (and the entries to carry) of entries sorted by granule, each granule's in trace order."""
        m = gid.size
        i32 = np.int32 if m < 1 << 30 else np.int64
        idx = np.arange(m, dtype=i32)
        new_seg = np.empty(m, dtype=np.bool_)
        new_grp = np.empty(m, dtype=np.bool_)
        if m:
            new_seg[0] = new_grp[0] = True
            np.not_equal(gid[1:], gid[:-1], out=new_seg[1:])
            np.not_equal(unit[1:], unit[:-1], out=new_grp[1:])
            new_grp |= new_seg
        write = units.write[unit]
        # (each entry's granule's first entry, and its record group's: the starts, repeated over their runs)
        firsts = np.flatnonzero(new_seg).astype(i32)
        seg_first = np.repeat(firsts, np.diff(np.append(firsts, i32(m))))
        gfirsts = np.flatnonzero(new_grp).astype(i32)
        grp_first = np.repeat(gfirsts, np.diff(np.append(gfirsts, i32(m))))
        last_w = np.maximum.accumulate(np.where(write, idx, -1)) if m else idx
        # the last write before each entry's record (group), within its granule (last_w shifted by one: -1 first)
        before = np.empty(m + 1, dtype=last_w.dtype)
        before[0] = -1
        before[1:] = last_w
        pw = before[grp_first]
        pw[pw < seg_first] = -1
        is_new = unit >= nlive
        # (last write, entry) for the chunk's entries
        c1 = np.flatnonzero((pw >= 0) & is_new).astype(i32)
        p1 = pw[c1]
        # (read since the last write, write entry): the window between the last write and this write's group
        wi = np.flatnonzero(write & is_new).astype(i32)
        pwi = pw[wi]
        lo = np.where(pwi >= 0, pwi + 1, seg_first[wi])
        run, within = _segments(np.maximum(grp_first[wi] - lo, 0))
        prior = np.concatenate([p1, (lo[run] + within).astype(i32)])
        current = np.concatenate([c1, wi[run]])
        # the actor column of each entry: one actor's accesses (one lane's, one async operation's) are ordered by
        # program order, so its own pairs are left out
        # (columns fit int32: gathers over every entry and pair move half the bytes of int64)
        own = np.where((units.actor < 0)[unit], lane, 0)
        ecol = ucol.astype(np.int32)[unit] + own
        pc = ecol[prior]
        same = pc == ecol[current]
        if uid is not ucol:
            # columns per clock domain: one actor has one column, so only pairs of equal columns can be one actor's
            # (asked by the launch-wide numbering for those few, not for every entry)
            s = np.flatnonzero(same)
            if s.size:
                a, b = prior[s], current[s]
                same[s] = uid[unit[a]] + own[a] == uid[unit[b]] + own[b]
        # grouped by the later record in one stable sort, one actor's own pairs sent to a last bucket (n) and cut
        # off: no index list of the kept pairs, no gathers through it
        cur = unit[current].astype(np.int32) - nlive
        if same.any():
            cur[same] = n
        counts = np.bincount(cur, minlength=n + 1)
        sel = stable_order(cur, n + 1)[:cur.size - int(counts[n])]
        cp = ChunkPairs()
        cp._pe, cp._ce = pe, ce = prior[sel], current[sel]
        cp._lane, cp._ecol, cp._gid, cp._pages = lane, ecol, gid, self.pages
        cp.prior, cp.current = unit[pe], cur[sel] + nlive
        cp.cur_lane = lane[ce].astype(np.int32)
        cp.pcol = pc[sel]
        cp.start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts[:n], out=cp.start[1:])
        # the strong records' entries, grouped by record (granule order within one)
        mine = np.flatnonzero(is_new & strong[np.maximum(unit - nlive, 0)]) if strong.any() else idx[:0]
        grouped = mine[stable_order(unit[mine] - nlive, n)]
        pwg = pw[grouped]
        cp.ent_unit, cp.ent_lane = unit[grouped], lane[grouped].astype(np.int64)
        cp.ent_pw_unit = np.where(pwg >= 0, unit[pwg], -1)
        cp.ent_pw_lane = np.where(pwg >= 0, lane[pwg].astype(np.int64), -1)
        cp.ent_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(unit[grouped] - nlive, minlength=n), out=cp.ent_start[1:])
        # carry: per granule its last write and what follows (all of it while it has no write)
        if m:
            # each entry against its granule's last write (`last_w` at the granule's last entry, an entry before
            # the granule's first where it has none: all of it is kept), looked up by the granule's first entry
            at_first = np.empty(m, dtype=last_w.dtype)
            at_first[firsts[:-1]] = last_w[firsts[1:] - 1]
            at_first[firsts[-1]] = last_w[-1]
            keep = idx >= at_first[seg_first]
        else:
            keep = new_seg
        return cp, keep

    # ------------------------------------------------------------------ between chunks
    def live_units(self, index: np.ndarray) -> np.ndarray:
        """Which rows of a table whose record numbers are `index` (ascending, holding every carried record) some
        carried entry belongs to, as a mask (a dense selection: a mask takes rows faster than their indices)."""
        mark = np.zeros(index.size, dtype=np.bool_)   # (marking is linear; np.unique would sort)
        if self.recs:
            # (one search for every allocation's list: a run may carry hundreds of allocations)
            mark[np.searchsorted(index, np.concatenate(list(self.recs.values())))] = True
        return mark
