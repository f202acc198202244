"""The warp side of CTA cohorts (numsim.cohort): a cohort warp (warp j of k CTAs as 32k-lane vectors), its
registers, and the 32-lane views of its rows through which per-CTA operations run -- the warp collectives, every
shared-memory access (each row reaches its own CTA's shared memory), setmaxnreg, and the CTA barriers (every row
arrives at its own CTA's barrier; the cohort warp blocks when every row's warp would, else the cohort splits).
"""
from __future__ import annotations

import numpy as np

from . import values as V
from .runtime import Poll, Wait, Warp


class _Split(Exception):
    """The cohort reached something it cannot run for all its CTAs at once: roll back, run them per CTA."""


def _row(v, lo: int, n: int):
    """Row `lo // 32`'s part of a cohort value (uniform values are every row's)."""
    if type(v) is np.ndarray and v.ndim and v.shape[0] == n:
        return v[lo:lo + 32]
    return v


class _RowEnv:
    """A cohort warp's variables as one row sees them (read-only: ops do not bind variables)."""

    __slots__ = ("env", "lo", "n")

    def __init__(self, env, lo, n):
        self.env, self.lo, self.n = env, lo, n

    def __getitem__(self, s):
        return _row(self.env[s], self.lo, self.n)

    def __setitem__(self, s, v):
        raise _Split("an op binding a variable")


class _RowRegs:
    """One local buffer (registers) as one row sees it; a write lands in the row's lanes of a vector the
    running op owns (copied once per op from the cohort's value: values are never changed in place)."""

    __slots__ = ("regs", "lo", "n", "owned", "dtype")

    def __init__(self, regs, lo, n, owned, dtype):
        self.regs, self.lo, self.n, self.owned, self.dtype = regs, lo, n, owned, dtype

    def __len__(self):
        return len(self.regs)

    def __getitem__(self, i):
        return _row(self.regs[i], self.lo, self.n)

    def __iter__(self):
        return (self[i] for i in range(len(self.regs)))

    def __setitem__(self, i, v):
        key = (id(self.regs), i)
        entry = self.owned.get(key)
        if entry is None:
            old = list.__getitem__(self.regs, i)
            cur = V.as_vec(0 if old is None else old, self.dtype, self.n).copy()
            entry = self.owned[key] = [cur, np.zeros(self.n // 32, np.bool_), self.regs, i, old is None]
            list.__setitem__(self.regs, i, cur)     # (which rows wrote it: `CohortWarp.each_row`)
        entry[0][self.lo:self.lo + 32] = v
        entry[1][self.lo // 32] = True


class _RowLocal:
    __slots__ = ("local", "lo", "n", "owned", "dtypes")

    def __init__(self, local, lo, n, owned, dtypes):
        self.local, self.lo, self.n, self.owned, self.dtypes = local, lo, n, owned, dtypes

    def __getitem__(self, slot):
        return _RowRegs(self.local[slot], self.lo, self.n, self.owned, self.dtypes[slot])

    def __setitem__(self, slot, v):
        raise _Split("an op declaring registers")


class _CohortRegs(list):
    """A cohort warp's local buffer.  A register never written is None (a read is noted as uninitialized).
    Written under a mask that leaves some CTA rows without an active lane, it is a vector for every row but
    unwritten for those (`holes`: register -> bool per row); a read by such a row is what the per-CTA run
    notes, so that cohort runs per CTA instead."""

    __slots__ = ("w", "holes")
    w: Warp
    holes: dict | None

    def _rows(self):
        """The rows with an active lane (None: every row); the last mask's answer is kept (masks are never changed
        in place, and a loop writes many fresh registers under one mask)."""
        m = self.w.mask
        if m is None:
            return None
        if m is _LAST_ROWS[0]:
            return _LAST_ROWS[1]
        rows = m.reshape(-1, 32).any(axis=1)
        rows = None if rows.all() else rows     # every row: as a full mask (no row left unwritten)
        _LAST_ROWS[0], _LAST_ROWS[1] = m, rows
        return rows

    def note_write(self, i: int, rows, old_none: bool) -> None:
        """Register i was written by the rows in `rows` (None: all); it was None before if `old_none`."""
        h = self.holes.get(i) if self.holes else None
        if h is None and not old_none:
            return
        if rows is None:
            if h is not None and self.holes:
                del self.holes[i]
            return
        h = (np.ones(rows.size, np.bool_) if h is None else h) & ~rows
        if h.any():
            if self.holes is None:
                self.holes = {}
            self.holes[i] = h
        elif self.holes:
            self.holes.pop(i, None)

    def __setitem__(self, i, v):
        if self.holes or list.__getitem__(self, i) is None:
            self.note_write(i, self._rows(), list.__getitem__(self, i) is None)
        list.__setitem__(self, i, v)

    def _check(self, h) -> None:
        rows = self._rows()
        if (h if rows is None else h & rows).any():
            raise _Split("a read of a register some CTAs never wrote")

    def __getitem__(self, i):
        if self.holes:
            h = self.holes.get(i)
            if h is not None:
                self._check(h)
        return list.__getitem__(self, i)

    def __iter__(self):
        for h in (self.holes or {}).values():
            self._check(h)
        return list.__iter__(self)


_LAST_ROWS: list = [None, None]     # `_CohortRegs._rows`: the last lane mask and its rows


class _CohortLocal(dict):
    """slot -> `_CohortRegs` (a declaration assigns a fresh list of None)."""

    def __init__(self, w):
        super().__init__()
        self.w = w

    def __setitem__(self, slot, vals):
        regs = _CohortRegs(vals)
        regs.w, regs.holes = self.w, None
        super().__setitem__(slot, regs)


class _RowView(Warp):
    """Row r of a cohort warp as a 32-lane warp of its CTA (for the warp collectives: `PER_ROW`)."""

    __slots__ = ("row",)
    row: int


class _CohortRT:
    """A cohort warp's `rt`: no single CTA's.  Per-CTA state (shared memory, barriers) is reached through a row
    view, whose `rt` is its own CTA's; reaching it from the whole cohort (a generic address into shared memory,
    say) is outside the cohort's subset."""

    cluster_barrier = None        # what the scheduler reads of a finished warp's CTA (runtime._note_exit)
    cluster_size = 1

    def __getattr__(self, name):
        raise _Split(f"CTA state {name!r} reached by the whole cohort")


class CohortWarp(Warp):
    """Warp `index` of k CTAs at once: lane vectors of 32k elements, row r = CTA r."""

    __slots__ = ("FULL", "row_full", "rows", "dtypes", "views", "pools", "lane_base", "lane_row", "_rm", "_eff",
                 "row_effects", "_poll_effects")
    COHORT = True
    _eff: int

    def __init__(self, rows: list, index: int, cohort_eng, nslots: int, dtypes: dict):
        first = rows[0]
        super().__init__(first.gid, first.rt, index, first.nthreads, (1, 1, 1), cohort_eng, nslots)
        k = len(rows)
        self.rt = _CohortRT()
        self.rows = rows                               # the per-CTA warps, by row
        self.dtypes = dtypes                           # local slot -> dtype name
        self.FULL = np.ones(32 * k, dtype=np.bool_)
        self.FULL.setflags(write=False)
        self.tid = np.tile(first.tid, k)
        self.tid_yz = (np.tile(first.tid_yz[0], k), np.tile(first.tid_yz[1], k))
        self.lane = np.tile(V.LANES, k)
        self.lane_base = np.repeat(np.arange(0, 32 * k, 32), 32)     # each lane's row's first lane
        self.lane_row = np.repeat(np.arange(k, dtype=np.int64), 32)     # each lane's row
        self._rm: tuple = (False, [], None)                            # (mask, its row_masks(), rows active)
        self.row_effects = np.zeros(k, np.int64)       # each row's warp's side effects (`effects`)
        self._poll_effects = self.row_effects
        self.warp_base = first.warp_base
        self.full_mask = None if first.full_mask is None else np.tile(first.full_mask, k)
        self.mask = self.full_mask
        self.row_full = [first.full_mask is None] * k
        self.block_idx = tuple(np.repeat(np.array([w.block_idx[d] for w in rows], dtype=np.int32), 32)
                               for d in range(3))
        self.gid = first.gid
        self.cta = first.cta
        self.local = _CohortLocal(self)
        self.views: list = [None] * k                  # row -> its cached view (non-blocking ops)
        self.pools = None                              # the rows' shared memory as one array (numsim.cohort_shared)

    def row_mask(self, r: int):
        """Row r's lane mask: None (every lane of its warp), False (no active lane), or the 32 lanes."""
        if self.mask is None:
            return None
        m = self.mask[32 * r:32 * r + 32]
        if not m.any():
            return False
        return None if self.row_full[r] and m.all() else m

    @property
    def effects(self) -> int:
        return self._eff

    @effects.setter
    def effects(self, value: int) -> None:
        """A whole-cohort op's side effect is every row's with an active lane (a CTA whose lanes are elsewhere
        does not execute it); the scheduler reads the total, polls compare per row (`each_row_blocking`)."""
        try:
            d = value - self._eff
        except AttributeError:          # Warp.__init__
            self._eff = value
            return
        self._eff = value
        if d:
            self.row_masks()
            act = self._rm[2]
            if act is None:
                self.row_effects += d
            else:
                self.row_effects[act] += d

    def row_masks(self) -> list:
        """`row_mask(r)` of every row, computed at once (masks are never changed in place: kept per mask)."""
        mask = self.mask
        if mask is self._rm[0]:
            return self._rm[1]
        if mask is None:
            self._rm = (None, [None] * len(self.rows), None)
            return self._rm[1]
        m = mask.reshape(-1, 32)
        full = self.row_full
        act = m.any(axis=1)
        out = [False if not a else (None if al and full[r] else m[r])
               for r, (a, al) in enumerate(zip(act.tolist(), m.all(axis=1).tolist()))]
        self._rm = (mask, out, act)
        return out

    def _view(self, r: int, m, owned: dict, fresh: bool):
        """Row r as a 32-lane warp of its CTA (cached unless `fresh`: a blocking op keeps its own views)."""
        lo, n = 32 * r, self.FULL.size
        v = None if fresh else self.views[r]
        if v is None:
            base = self.rows[r]
            v = Warp.__new__(_RowView)
            v.row, v.gid, v.cta, v.index, v.nthreads = r, base.gid, base.cta, base.index, base.nthreads
            v.full_mask = base.full_mask
            v.env = _RowEnv(self.env, lo, n)
            v.local = _RowLocal(self.local, lo, n, owned, self.dtypes)  # type: ignore[assignment]
            v.tid, v.tid_yz, v.lane, v.warp_base = base.tid, base.tid_yz, base.lane, base.warp_base
            v.block_idx, v.rt, v.eng = base.block_idx, base.rt, self.eng
            v.loops, v.instr, v.instr_seen = [], 0, 0
            if base.groups is None:
                base.groups = {}            # the row's async groups (cohort_async): its CTA's warp's, kept
            v.groups = base.groups
            v.async_regs, v.async_state, v.last_poll, v.waiting, v.gen = None, None, None, None, None
            if not fresh:
                self.views[r] = v
        v.mask = m
        v.exited = None if self.exited is None else self.exited[lo:lo + 32]
        v.env.env = self.env
        v.local.owned = owned  # type: ignore[union-attr]
        v.iters = self.iters
        v.effects = 0
        return v

    def each_row(self, fn):
        """`fn` (a non-blocking op closure) once per CTA row that has active lanes; the rows' results as one
        cohort value (uniform when every row gave the same uniform value)."""
        owned: dict = {}
        results = []
        for r, m in enumerate(self.row_masks()):
            if m is False:
                results.append(None)
                continue
            v = self._view(r, m, owned, False)
            results.append(fn(v))
            if v.effects:
                self._eff += v.effects
                self.row_effects[r] += v.effects
        for _, rows, regs, i, old_none in owned.values():
            regs.note_write(i, rows, old_none)
        return _assemble(results, self.FULL.size)

    def each_row_blocking(self, fn):
        """`fn` (a blocking op's generator function: a CTA barrier) for every row at once.  Every row must run
        it (a row whose lanes are elsewhere would not arrive here: split) and block or go on as the others do,
        so the cohort warp's steps are each row's warp's steps under the per-CTA scheduler."""
        owned: dict = {}
        views = []
        for r, m in enumerate(self.row_masks()):
            if m is False:
                raise _Split("a CTA of the cohort does not reach a barrier with this warp (its lanes are elsewhere)")
            views.append(self._view(r, m, owned, True))
        gens = [fn(v) for v in views]
        while True:
            ys = []
            for g in gens:
                try:
                    ys.append(next(g))
                except StopIteration:
                    ys.append(None)
            for r, v in enumerate(views):
                if v.effects:
                    self._eff += v.effects
                    self.row_effects[r] += v.effects
                    v.effects = 0
            done = sum(y is None for y in ys)
            if done == len(ys):
                break
            if done:
                raise _Split("the CTAs of the cohort leave a barrier at different steps")
            if all(type(y) is Poll for y in ys):
                yield self._poll(ys)
                continue
            if any(type(y) is not Wait for y in ys):
                raise _Split("the CTAs of the cohort leave a barrier at different steps")
            if not _agree([y.check() for y in ys]):
                self.eng.stats["blocks"] += len(ys) - 1     # each CTA's warp blocks (the scheduler counts one)
            # watched: every row's objects -- a change to one row's wakes the cohort warp, and the check splits
            # unless every row's warp would go on (rows whose arrivals differ may see them change apart)
            yield Wait(ys[0].obj, lambda ys=ys: _agree([y.check() for y in ys]), ys[0].what, ys[0].site,
                       [o for y in ys for o in y.watched()])
        for _, rows, regs, i, old_none in owned.values():
            regs.note_write(i, rows, old_none)


    def _poll(self, ys: list) -> Poll:
        """Every row polled and found nothing (an mbarrier try_wait).  The scheduler turns a warp's poll into a
        wait when it made no side effect since its last poll at the same site (runtime.Scheduler._step): per row
        here, so every row must decide alike -- all unchanged (the cohort's total too) or all changed."""
        site = ys[0].site
        last = self.last_poll
        if last is not None and last[0] == site:
            changed = self.row_effects != self._poll_effects
            if changed.any() and not changed.all():
                raise _Split("some CTAs of the cohort made side effects since their last poll and others did not")
        self._poll_effects = self.row_effects.copy()
        objs = [y.obj for y in ys]
        if any(o is None for o in objs):
            if not all(o is None for o in objs):
                raise _Split("the CTAs of the cohort poll different objects")
            return Poll(None, site, ys[0].what)
        return Poll(self.eng.rows_obj(objs), site, ys[0].what)


def _agree(flags: list) -> bool:
    """Every row's warp ready (True) or none (False); some but not all: the CTAs' steps part ways."""
    if all(flags):
        return True
    if any(flags):
        raise _Split("some CTAs of the cohort pass a barrier that others still wait at")
    return False


def _assemble(results: list, n: int):
    """Per-row results -> one cohort value (None rows: no active lane, their lanes are never read)."""
    got = [x for x in results if x is not None]
    if not got:
        return None
    if all(type(x) is not np.ndarray or not x.ndim for x in got):
        first = got[0]
        if all(type(x) is type(first) and x == first for x in got):
            return first
    dtype = next((x.dtype for x in got if type(x) is np.ndarray), np.asarray(got[0]).dtype)
    out = np.zeros(n, dtype=dtype)
    for r, x in enumerate(results):
        if x is not None:
            out[32 * r:32 * r + 32] = x
    return out

