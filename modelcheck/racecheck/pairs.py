"""Which accesses conflict: the candidate pairs of a trace, computed once, vectorized.

Whether two accesses *conflict* (same bytes, at least one write) does not depend on
happens-before, only on the trace.  So this pass finds every pair Racecheck must judge
before any clock is consulted: every access against the last write before it (same
granule), and every read against the next write after it.  A read that is ordered
before the next write is ordered before every later write through that write (or that
write races and is reported), so these pairs suffice — the classic last-write/
reads-since-last-write shadow, unrolled over the whole trace at once.

Pairs whose two accesses belong to one actor (the same lane, or the same async operation)
are left out: Racecheck orders them by program order whatever the clocks say, so judging
them could only say "ordered", and dropping them changes no race, witness, byte hull or
count.  (Pruning further, e.g. a read whose own actor reads again before the next write,
would be sound for the verdict but not for the findings: the dropped pair may be the only
one of its site pair, or the first witness, and it moves byte hulls and counts.)

Entries are (record, lane, granule) triples over bytes some instruction writes (reads
of never-written bytes cannot conflict).  A granule is the GCD of every access size and
offset to its allocation, so no access covers part of a granule and judging granules is
as exact as judging bytes.  Lanes of one record never pair with each other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_LANES = np.arange(32)
_WRITES = ("write", "rmw")


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


@dataclass
class Entries:
    """One row per (record, lane, granule) on a written granule, sorted by (granule, record)."""

    rec: np.ndarray        # record index
    lane: np.ndarray       # lane of the record (0 for an async actor's whole-op access)
    byte: np.ndarray       # first byte of the granule, within the allocation
    unit: np.ndarray       # granule size in bytes
    gid: np.ndarray        # granule id, unique across allocations
    actor: np.ndarray      # who accessed: warp * 32 + lane, or -1 - op for an async operation
    lane_accesses: int     # lane accesses in the trace (including untracked ones)
    writes: np.ndarray     # per record: writes (write or rmw)


@dataclass
class Pairs:
    """Conflicting candidate pairs (prior entry, current entry), grouped by the current record."""

    prior: np.ndarray      # entry index of the earlier access
    current: np.ndarray    # entry index of the later access
    start: np.ndarray      # pairs of record r are [start[r], start[r + 1])
    prior_write: np.ndarray   # per entry: entry index of the last write before it, -1 if none


def expand(records) -> Entries:
    """Every lane's access as entries over written granules."""
    n = len(records)
    keys: dict[tuple, int] = {}
    # plain lists in the loop (numpy item assignment costs more than the append), arrays after it
    count_l, size_l, key_l, write_l, who_l = [], [], [], [], []
    lane_parts, off_parts = [], []
    ndarray, full, flatnonzero, i64 = np.ndarray, np.full, np.flatnonzero, np.int64
    for rec in records:
        lanes = rec.lanes
        offs = rec.offsets
        if lanes is None:
            lane_parts.append(_LANES)
            off_parts.append(offs if type(offs) is ndarray else full(32, offs, dtype=i64))
            count_l.append(32)
        else:
            idx = flatnonzero(lanes)
            lane_parts.append(idx)
            off_parts.append(offs[idx] if type(offs) is ndarray else full(idx.size, offs, dtype=i64))
            count_l.append(idx.size)
        size_l.append(rec.size)
        k = (rec.space, rec.alloc)
        key = keys.get(k)
        if key is None:
            key = keys[k] = len(keys)
        key_l.append(key)
        write_l.append(rec.kind in _WRITES)
        who_l.append(-1 - rec.actor if rec.actor >= 0 else rec.warp * 32)
    counts = np.array(count_l, dtype=np.int64)
    sizes = np.array(size_l, dtype=np.int64)
    key_of = np.array(key_l, dtype=np.int64)
    writes = np.array(write_l, dtype=np.bool_)
    total = int(counts.sum())
    if not total:
        z = np.zeros(0, dtype=np.int64)
        return Entries(z, z, z, z, z, z, 0, writes)
    lane = np.concatenate(lane_parts).astype(np.int64)
    off = np.concatenate(off_parts).astype(np.int64)
    rec = np.repeat(np.arange(n, dtype=np.int64), counts)
    who = np.array(who_l, dtype=np.int64)
    key = key_of[rec]
    size = sizes[rec]
    # the granule of each allocation: gcd of all offsets and sizes touching it; its granules: up to the last end
    unit_of_key = np.ones(len(keys), dtype=np.int64)
    span = np.zeros(len(keys), dtype=np.int64)
    order = stable_order(key, len(keys))
    bounds = np.searchsorted(key[order], np.arange(len(keys) + 1))
    for k in range(len(keys)):
        sel = order[bounds[k]:bounds[k + 1]]
        if sel.size:
            u = unit_of_key[k] = max(int(np.gcd(np.gcd.reduce(off[sel]), np.gcd.reduce(size[sel]))), 1)
            span[k] = int((off[sel] + size[sel]).max()) // u
    unit = unit_of_key[key]
    per = size // unit
    first = off // unit
    if (per != 1).any():
        rep = per
        starts = np.cumsum(rep) - rep
        within = np.arange(int(rep.sum()), dtype=np.int64) - np.repeat(starts, rep)
        rec, lane, key, unit = (np.repeat(a, rep) for a in (rec, lane, key, unit))
        first = np.repeat(first, rep) + within
    # granule ids, disjoint across allocations
    base = np.concatenate([[0], np.cumsum(span)[:-1]])
    gid = base[key] + first
    written = np.zeros(int(span.sum()), dtype=np.bool_)
    is_write = writes[rec]
    written[gid[is_write]] = True
    keep = np.flatnonzero(written[gid])
    # entries were in record order: stable keeps it per granule.  Merge sort, not stable_order: one record's
    # lanes cover runs of consecutive granules, and on such keys it measured faster than the radix passes
    order = keep[np.argsort(gid[keep], kind="stable")]
    rec, lane, unit, gid = rec[order].astype(np.int32), lane[order].astype(np.int32), unit[order], gid[order]
    actor = np.where(who[rec] < 0, who[rec], who[rec] + lane)
    return Entries(rec, lane, first[order] * unit, unit, gid, actor, total, writes)


def pair(ent: Entries, nrecords: int) -> Pairs:
    """The candidate pairs: each entry against the last earlier write, each read against the next write."""
    m = ent.rec.size
    # 32-bit entry indices where they fit: the pair arrays are the pass's largest, and memory-bound
    itype = np.int32 if m < 1 << 31 else np.int64
    idx = np.arange(m, dtype=itype)
    if not m:
        z = np.zeros(0, dtype=np.int64)
        return Pairs(z, z, np.zeros(nrecords + 1, dtype=np.int64), z)
    gid, rec = ent.gid, ent.rec
    new_seg = np.ones(m, dtype=np.bool_)
    new_seg[1:] = gid[1:] != gid[:-1]
    new_grp = new_seg.copy()
    new_grp[1:] |= rec[1:] != rec[:-1]
    seg_first = np.maximum.accumulate(np.where(new_seg, idx, 0))
    grp_first = np.maximum.accumulate(np.where(new_grp, idx, 0))
    w = ent.writes[rec]
    last_w = np.maximum.accumulate(np.where(w, idx, -1))
    before = grp_first - 1
    prior_write = np.where(before >= seg_first, last_w[np.maximum(before, 0)], -1)
    prior_write = np.where(prior_write >= seg_first, prior_write, -1)
    # (last write, entry)
    has = prior_write >= 0
    p1, c1 = prior_write[has], idx[has]
    # (read since the last write, write entry): the window between the last write and this write's group
    wi = idx[w]
    lo = np.where(prior_write[wi] >= 0, prior_write[wi] + 1, seg_first[wi])
    n = grp_first[wi] - lo
    n = np.maximum(n, 0)
    tot = int(n.sum())
    if tot:
        starts = np.cumsum(n) - n
        p2 = np.repeat(lo, n) + (np.arange(tot, dtype=itype) - np.repeat(starts, n)).astype(itype)
        c2 = np.repeat(wi, n)
    else:
        p2 = c2 = np.zeros(0, dtype=itype)
    prior = np.concatenate([p1, p2])
    current = np.concatenate([c1, c2])
    other = ent.actor[prior] != ent.actor[current]      # one actor's accesses are ordered by program order
    prior, current = prior[other], current[other]
    cur_rec = rec[current]
    order = stable_order(cur_rec, nrecords)
    prior, current = prior[order], current[order]
    start = np.zeros(nrecords + 1, dtype=np.int64)
    np.cumsum(np.bincount(cur_rec, minlength=nrecords), out=start[1:])
    return Pairs(prior, current, start, prior_write)
