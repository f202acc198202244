"""The global bytes each CTA row of a cohort touched, in buffers the kernel writes (numsim.cohort): two rows
touching one byte, one of them writing, cannot commit -- their lock-step order is not the per-CTA one.

One part per access of the whole cohort warp (the rows of its active lanes and their byte offsets, vectors)
rather than one per row: a cohort access is one numpy call here, not k.
"""
from __future__ import annotations

import numpy as np


_BIG = np.iinfo(np.int64).max


class Footprint:
    """alloc id -> [(row per offset, offsets, size, is_write)] (int64 vectors of one length), and per allocation
    each row's span of touched and of written bytes (kept as accesses come: the cheap test of `conflict`)."""

    def __init__(self, k: int):
        self.k = k
        self.parts: dict[int, list] = {}
        self.spans: dict[int, np.ndarray] = {}     # alloc id -> (4, k): lo, hi, written lo, written hi

    def add(self, alloc, row: int, offsets, size: int, write: bool) -> None:
        """One row's access (a row view's, or an async operation's)."""
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        if not offs.size:
            return
        sp = self._spans(alloc)
        lo, hi = int(offs.min()), int(offs.max()) + size - 1
        for a, b in ((0, 1), (2, 3)) if write else ((0, 1),):
            sp[a, row] = min(sp[a, row], lo)
            sp[b, row] = max(sp[b, row], hi)
        self.parts[alloc.id].append((np.full(offs.size, row, np.int64), offs, size, write))

    def add_lanes(self, alloc, lane_rows: np.ndarray, mask, offsets, size: int, write: bool) -> None:
        """A whole cohort warp's access: lane i of the 32k belongs to row lane_rows[i]; `mask` its active lanes
        (None: all); `offsets` per lane or uniform (each active row then touches the same bytes)."""
        offs = offsets.astype(np.int64, copy=False) if type(offsets) is np.ndarray and offsets.ndim else \
            np.full(lane_rows.size, int(offsets), np.int64)
        sp = self._spans(alloc)
        if mask is None:
            lo, hi = offs.reshape(-1, 32).min(axis=1), offs.reshape(-1, 32).max(axis=1) + (size - 1)
            rows = lane_rows
        else:
            m = mask.reshape(-1, 32)
            lo = np.where(m, offs.reshape(-1, 32), _BIG).min(axis=1)
            hi = np.where(m, offs.reshape(-1, 32), -1).max(axis=1)
            hi = np.where(hi >= 0, hi + (size - 1), -1)
            offs, rows = offs[mask], lane_rows[mask]
        for a, b in ((0, 1), (2, 3)) if write else ((0, 1),):
            np.minimum(sp[a], lo, out=sp[a])
            np.maximum(sp[b], hi, out=sp[b])
        self.parts[alloc.id].append((rows, offs, size, write))

    def _spans(self, alloc) -> np.ndarray:
        sp = self.spans.get(alloc.id)
        if sp is None:
            sp = self.spans[alloc.id] = np.array([[_BIG], [-1], [_BIG], [-1]], np.int64).repeat(self.k, axis=1)
            self.parts[alloc.id] = []
        return sp

    def conflict(self) -> bool:
        """Does some byte have accesses of two rows, one of them a write?"""
        for aid, parts in self.parts.items():
            if not _spans_meet(self.spans[aid]):
                continue        # no row writes inside the span of bytes another row touches: no byte is shared
            rows = np.concatenate([_bytes(p[0], p[2], True) for p in parts])
            offs = np.concatenate([_bytes(p[1], p[2], False) for p in parts])
            writes = np.concatenate([np.full(p[1].size * p[2], p[3]) for p in parts])
            order = np.lexsort((rows, offs))
            offs, rows, writes = offs[order], rows[order], writes[order]
            starts = np.flatnonzero(np.r_[True, offs[1:] != offs[:-1]])
            lo = np.minimum.reduceat(rows, starts)
            hi = np.maximum.reduceat(rows, starts)
            wr = np.logical_or.reduceat(writes, starts)
            if np.any((lo != hi) & wr):
                return True
        return False


def _bytes(v: np.ndarray, size: int, rows: bool) -> np.ndarray:
    """Per-access values -> per byte: a row repeated `size` times, an offset widened to its `size` bytes."""
    if size == 1:
        return v
    if rows:
        return np.repeat(v, size)
    return (v[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)


def _spans_meet(sp: np.ndarray) -> bool:
    """Does some row's span of written bytes overlap another row's span of touched bytes (a necessary condition
    for a conflict: rows usually touch disjoint ranges)?"""
    w = np.flatnonzero(sp[3] >= 0)
    t = np.flatnonzero(sp[1] >= 0)
    if not w.size or t.size < 2:
        return False
    meet = (sp[2][w, None] <= sp[1][None, t]) & (sp[0][None, t] <= sp[3][w, None]) & (w[:, None] != t[None, :])
    return bool(meet.any())
