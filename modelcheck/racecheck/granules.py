"""Granules per page: how finely the shadow (`pairs.Shadow`) must cut each stretch of an allocation.

The shadow judges granules, not bytes, and that is exact as long as no access covers part of a
granule.  One granule for a whole allocation (the GCD of every access to it) lets one small access
anywhere decide the cut everywhere: a GEMM's few 4-byte reads of shared memory cut its 16 KB TMA
boxes and 32-byte MMA operand rows into 4-byte granules, and 4-byte scale-factor columns cut the
768-byte accumulator rows of TMEM the same way, so a box becomes thousands of entries and pairs.

So each allocation is cut in pages of `PAGE` bytes, and each page has its own granule: the largest
power of two dividing the page and every access boundary (start or end) that falls inside the page.
An access covers whole granules of every page it spans (its inner pages entirely, its first and last
from and to boundaries the granule divides), so judging these granules is as exact as judging bytes;
granules only shrink, and when one does the shadow splits its carried entries of that page
(`Shadow._split_pages`), whose histories the finer granules share.  Entries and pairs then follow
the accesses' own shapes where they are alike, however fine the allocation's finest access.

Assumes: offsets and sizes are non-negative byte counts.  Guarantees: `shift` of a page never grows.
"""
from __future__ import annotations

import numpy as np

PAGE_SHIFT = 8                  # 256-byte pages: a TMEM lane's 64 columns, a quarter of a 1024-byte swizzle atom


class Pages:
    """Per allocation key, the log2 granule of each page seen (`flat[base[key] + page]`, `PAGE_SHIFT` for a page no
    boundary has cut yet).  Keys hold a stretch of `flat` that grows by doubling (a grown key's old stretch is
    left behind)."""

    def __init__(self, page_shift: int | None = None):
        page_shift = PAGE_SHIFT if page_shift is None else page_shift
        self.shift = page_shift
        self.base = np.zeros(0, dtype=np.int64)     # key -> first of its pages in `flat`
        self.cap = np.zeros(0, dtype=np.int64)      # key -> pages it holds
        self.flat = np.zeros(0, dtype=np.int8)
        # trailing zero bits of a byte offset within a page (a page start: the page's own shift)
        low = np.arange(1 << page_shift, dtype=np.int64)
        ctz = np.full(low.size, page_shift, dtype=np.int8)
        ctz[1:] = (np.frexp((low[1:] & -low[1:]).astype(np.float64))[1] - 1).astype(np.int8)
        self._ctz = ctz

    def grow(self, nkeys: int) -> None:
        if self.base.size < nkeys:
            extra = nkeys - self.base.size
            self.base = np.concatenate([self.base, np.zeros(extra, dtype=np.int64)])
            self.cap = np.concatenate([self.cap, np.zeros(extra, dtype=np.int64)])

    def index(self, key: np.ndarray, byte: np.ndarray) -> np.ndarray:
        """Positions in `flat` of the pages holding these bytes (held already: `cover`)."""
        return self.base[key] + (byte >> self.shift)

    def lookup(self, key: np.ndarray, byte: np.ndarray) -> np.ndarray:
        """log2 of the granule at each byte (int64)."""
        return self.flat[self.index(key, byte)].astype(np.int64)

    def cover(self, key: np.ndarray, last: np.ndarray) -> None:
        """Make every key hold its pages up to the one of byte `last` (new pages uncut)."""
        if not key.size:
            return
        page = last >> self.shift
        over = page >= self.cap[key]
        if not over.any():
            return
        need = np.zeros(self.cap.size, dtype=np.int64)
        np.maximum.at(need, key[over], page[over] + 1)
        grown = np.flatnonzero(need > self.cap)
        parts, at = [self.flat], self.flat.size
        for k in grown.tolist():
            cap, base = int(self.cap[k]), int(self.base[k])
            seg = np.full(max(int(need[k]), 2 * cap), self.shift, dtype=np.int8)
            seg[:cap] = self.flat[base:base + cap]
            parts.append(seg)
            self.base[k], self.cap[k] = at, seg.size
            at += seg.size
        self.flat = np.concatenate(parts)

    def refine(self, key: np.ndarray, off: np.ndarray, size: np.ndarray) -> dict:
        """Cut the pages these accesses' boundaries fall in (accesses of no bytes have none).  Returns, per key
        whose granules shrank, a copy of its pages as they were (what its carried entries are cut by)."""
        some = size > 0
        if not some.all():
            key, off, size = key[some], off[some], size[some]
        if not key.size:
            return {}
        end = off + size
        self.cover(key, end - 1)
        mask = (1 << self.shift) - 1
        # a start cuts its page at its trailing zeros; an end inside a page (not at its edge) cuts that page
        at = np.concatenate([self.index(key, off), self.index(key, end - 1)])
        cut = np.concatenate([self._ctz[off & mask], self._ctz[end & mask]])
        finer = cut < self.flat[at]
        if not finer.any():
            return {}
        at, cut = at[finer], cut[finer]
        keys = np.concatenate([key, key])[finer]
        old = {k: self.flat[self.base[k]:self.base[k] + self.cap[k]].copy() for k in np.unique(keys).tolist()}
        np.minimum.at(self.flat, at, cut)
        return old
