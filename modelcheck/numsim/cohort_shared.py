"""Shared memory of a CTA cohort as one array (numsim.cohort): row r of a (k, stride) byte array is CTA r's pool
(its `SharedMemory` views that row), so a shared access of the cohort warp is one gather or scatter over all rows.

Each fast path below does what the per-CTA closure does, row by row: the same bytes read or written, the same
bytes marked written, an uninitialized-read note for each row that reads a never-written byte, and one access
record per row with active lanes, naming that row's own allocation (`_CohortEng.access_rows`).  A case it does not
cover -- an index out of bounds, a misaligned address, lanes in different allocations, a shared::cluster window
-- returns False before touching anything, and the cohort runs the op's per-CTA closure row by row instead (which
raises the per-CTA run's error, naming the CTA's lane).  A uniform offset arrives as a vector of equal values
(the cohort's rows read different bytes at it); both mean the same access to every consumer.
"""
from __future__ import annotations

import numpy as np

from .memory import CLUSTER_WINDOW, SHARED_BASE


class Pools:
    """The shared memory of a cohort's CTAs: one zeroed (k, stride) array of bytes and one of written flags."""

    def __init__(self, group: list, layout, make_shared):
        k, total = len(group), max(layout.total, 1)
        self.stride = (total + 15) // 16 * 16            # a row starts 16-aligned: every typed view has whole rows
        self.data = np.zeros((k, self.stride), dtype=np.uint8)
        self.written = np.zeros((k, self.stride), dtype=np.bool_)
        for r, rt in enumerate(group):
            make_shared(rt, self.data[r, :total], self.written[r, :total])
        self.flat = self.data.reshape(-1)
        self.wflat = self.written.reshape(-1)
        self.group = group
        self.offsets = layout.offsets                    # allocation name -> offset in the pool
        self.first = group[0].shared                     # decodes addresses (the layout is every row's)
        self.row_byte = np.repeat(np.arange(k, dtype=np.int64) * self.stride, 32)
        self._typed: dict = {}
        self._allocs: dict = {}
        # the written flags as words of 2/4/8 bytes (a row's stride is 16-aligned): one gather tests, one scatter
        # marks, an aligned access's bytes (a word of 0x01 bytes is all written)
        self._wwords = {size: self.wflat.view(t) for size, (t, _) in _WORDS.items()}

    def view(self, np_t) -> np.ndarray:
        v = self._typed.get(np_t)
        if v is None:
            v = self._typed[np_t] = self.flat.view(np_t)
        return v

    def allocs(self, name: str) -> list:
        got = self._allocs.get(name)
        if got is None:
            got = self._allocs[name] = [rt.shared.allocs[name] for rt in self.group]
        return got

    def _words(self, byte0: np.ndarray, size: int):
        """(word view, word size, word index of each lane's first byte) covering [byte0, byte0 + size) with
        whole words, or None when the bytes are not so aligned (lanes without a byte of their own included)."""
        word = 8 if size % 8 == 0 else size if size in _WORDS else 0
        if not word or (byte0 % word).any():
            return None
        return self._wwords[word], word, byte0 // word

    def unwritten_rows(self, byte0: np.ndarray, size: int, act) -> np.ndarray | None:
        """Rows whose active lanes read a byte of [byte0, byte0 + size) never written (None: none)."""
        got = self._words(byte0, size)
        if got is not None:
            view, word, idx = got
            full = _WORDS[word][1]
            ok = view[idx] == full
            for b in range(1, size // word):
                ok &= view[idx + b] == full
        else:
            ok = self.wflat[byte0]
            for b in range(1, size):
                ok = ok & self.wflat[byte0 + b]
        bad = ~ok if act is None else act & ~ok
        if not bad.any():
            return None
        return np.flatnonzero(bad.reshape(-1, 32).any(axis=1))

    def mark(self, byte0: np.ndarray, size: int) -> None:
        got = self._words(byte0, size)
        if got is not None:
            view, word, idx = got
            for b in range(size // word):
                view[idx + b] = _WORDS[word][1]
            return
        for b in range(size):
            self.wflat[byte0 + b] = True


_WORDS = {2: (np.uint16, 0x0101), 4: (np.uint32, 0x01010101), 8: (np.uint64, 0x0101010101010101)}


def _lanes(v, n: int) -> np.ndarray:
    return v.astype(np.int64) if type(v) is np.ndarray else np.full(n, int(v), dtype=np.int64)


def _note(w, rows, site: int, name: str) -> None:
    if rows is not None:
        for r in rows:
            w.eng.records[int(r)].append(("uninit", w.index, site, name))


def _last_lanes(act: np.ndarray):
    """Per row: whether it has an active lane, and the highest active lane's index in the cohort vector."""
    m = act.reshape(-1, 32)
    return m.any(axis=1), np.arange(m.shape[0]) * 32 + 31 - np.argmax(m[:, ::-1], axis=1)


def element_load(info, idx, site: int):
    """`buf[i]` of a shared buffer for a whole cohort warp (numsim.ops.access.Accessors.memory_load)."""
    itemsize, numel, name, alloc_name = info.itemsize, info.numel, info.name, info.alloc
    np_t = np.bool_ if info.dtype == "bool" else info.np_dtype

    def run(w):
        P = w.pools
        if P is None:
            return None
        base = P.offsets[alloc_name] + info.offset
        if base % itemsize:
            return None
        n = w.FULL.size
        i = _lanes(idx(w), n)
        act = w.mask
        live = i if act is None else i[act]
        if live.size and (live.min() < 0 or live.max() >= numel):
            return None
        safe = i if act is None else np.where(act, i, 0)
        byte0 = P.row_byte + base + safe * itemsize
        _note(w, P.unwritten_rows(byte0, itemsize, act), site, name)
        w.eng.access_rows(w, site, P.allocs(alloc_name), info.offset + safe * itemsize, itemsize, "read")
        return P.view(np_t)[byte0 // itemsize]
    return run


def element_store(info, idx, value, site: int):
    """`buf[i] = v` of a shared buffer for a whole cohort warp (Accessors.memory_store)."""
    itemsize, numel, alloc_name = info.itemsize, info.numel, info.alloc
    np_t = np.bool_ if info.dtype == "bool" else info.np_dtype

    def run(w):
        P = w.pools
        if P is None:
            return False
        base = P.offsets[alloc_name] + info.offset
        if base % itemsize:
            return False
        i, v = idx(w), value(w)
        act = w.active()
        if type(i) is not np.ndarray:
            if not 0 <= i < numel:
                return False
            # one index: in each row the highest active lane's value lands (as per CTA)
            rows, last = _last_lanes(act)
            byte0 = P.row_byte[::32][rows] + base + int(i) * itemsize
            vals = v[last[rows]] if type(v) is np.ndarray else v
            P.view(np_t)[byte0 // itemsize] = vals
            P.mark(byte0, itemsize)
            w.effects += 1
            w.eng.access_rows(w, site, P.allocs(alloc_name), info.offset + int(i) * itemsize, itemsize, "write")
            return True
        lanes = np.flatnonzero(act)
        li = i[lanes]
        if li.size and (li.min() < 0 or li.max() >= numel):
            return False
        byte0 = P.row_byte[lanes] + base + li.astype(np.int64) * itemsize
        P.view(np_t)[byte0 // itemsize] = v[lanes] if type(v) is np.ndarray else v
        P.mark(byte0, itemsize)
        w.effects += 1
        offs = (i if w.mask is None else np.where(w.mask, i, 0)).astype(np.int64) * itemsize
        w.eng.access_rows(w, site, P.allocs(alloc_name), info.offset + offs, itemsize, "write")
        return True
    return run


def _decode(w, P, a, nbytes: int, align: int):
    """(allocation of row 0, pool offsets per lane, offsets in the allocation as per CTA) of shared addresses `a`,
    or None when not one allocation for every active lane, aligned, in the CTA's own window."""
    n = w.FULL.size
    a = _lanes(a, n)
    act = w.mask
    live = a if act is None else a[act]
    if not live.size:
        return None
    lo, hi = int(live.min()), int(live.max())
    if lo < SHARED_BASE or hi >= CLUSTER_WINDOW:
        return None
    alloc = P.first.find(lo, nbytes)
    if alloc is None or not alloc.contains(hi, nbytes) or (live % align).any():
        return None
    pool = a - SHARED_BASE if act is None else np.where(act, a - SHARED_BASE, alloc.base - SHARED_BASE)
    return alloc, pool, (a - alloc.base if act is None else np.where(act, a - alloc.base, 0))


def ld(addr, dsts, size: int, width: int, ptx_type: str, np_t, site: int, order: str, scope: str, to_register):
    """`ld.shared` for a whole cohort warp (numsim.ops.memory._ld)."""
    nbytes = size * width

    def run(w):
        P = w.pools
        if P is None:
            return False
        got = _decode(w, P, addr(w), nbytes, nbytes if width > 1 else size)
        if got is None:
            return False
        alloc, pool, offs = got
        byte0 = P.row_byte + pool
        _note(w, P.unwritten_rows(byte0, nbytes, w.mask), site, alloc.name)
        w.eng.access_rows(w, site, P.allocs(alloc.name), offs, nbytes, "read", order, scope)
        view = P.view(np_t)
        e = byte0 // size
        for k, d in enumerate(dsts):
            d(w, to_register(view[e + k], ptx_type, d.dtype))
        return True
    return run


def st(addr, vals, val_dtypes, size: int, width: int, ptx_type: str, np_t, site: int, order: str, scope: str,
       from_register):
    """`st.shared` for a whole cohort warp (numsim.ops.memory._st)."""
    nbytes = size * width

    def run(w):
        P = w.pools
        if P is None:
            return False
        a = addr(w)
        got = _decode(w, P, a, nbytes, nbytes if width > 1 else size)
        if got is None:
            return False
        alloc, pool, offs = got
        act = w.active()
        if type(a) is np.ndarray:
            lanes = np.flatnonzero(act)
        else:           # one address: in each row the highest active lane's value lands (as per CTA)
            rows, last = _last_lanes(act)
            lanes = last[rows]
        byte0 = P.row_byte[lanes] + pool[lanes]
        view = P.view(np_t)
        for k in range(width):
            v = from_register(vals[k](w), val_dtypes[k], ptx_type)
            view[byte0 // size + k] = v[lanes] if v.ndim else v
        P.mark(byte0, nbytes)
        w.effects += 1
        w.eng.access_rows(w, site, P.allocs(alloc.name), offs, nbytes, "write", order, scope)
        return True
    return run
