"""Asynchronous copies and mbarriers in a CTA cohort (numsim.cohort): Ampere `cp.async` with its per-thread groups,
TMA tensor loads and stores (cp.async.bulk.tensor, with complete_tx or bulk groups) and fence.proxy.async, and
each CTA's mbarriers (init, arrive, expect_tx/complete_tx, the waits and polls), per row on the row's CTA's.

Why it is exact.  Each row issues its own copies through the per-CTA closure on its 32-lane view (the row's
warp's groups are the row's CTA's warp's own, `CohortWarp._view`), so its operations, group bookkeeping and
sync events are the per-CTA ones.  A completion is queued on the cohort's engine and delivered by the cohort's
scheduler between rounds, FIFO -- where the per-CTA scheduler delivers it: a round is one step of every warp
runnable at its start, and a CTA's runnable warps do not depend on other CTAs (their waits are on their own
CTA's barriers and groups), so the rows, kept in lock step (`CohortWarp.each_row_blocking`: a wait_group that
passes for one row and blocks another splits), see each completion after the same steps of their own warps
as the CTA does per CTA.  A completion's accesses, sync events and retirement are kept in its CTA's row, in
order, and delivered at commit like the warps' own events.  Operation ids (the accesses' actors) are drawn
from the engine's counter in the cohort's issue order: the same operations, other numbers (ids only name an
operation; tests compare them by first appearance within a CTA).  A TMA's tensor map is the launch's (shared by
the rows), its coordinates each row's own; the cohort's maps point at the undo-logged global memory, so a TMA
store rolls back with the cohort, and its footprint (`access_runs`) joins the rows' global footprint.

mbarriers.  Each row's operations act on its own CTA's barrier objects (`rt.mbarriers`).  A wait or a poll
(try_wait/test_wait) runs for every row at once (`CohortWarp.each_row_blocking`): every row must block, poll or
pass alike.  A poll becomes a wait in the scheduler when the warp made no side effect since its last poll at that
site (runtime.Scheduler._step): the cohort keeps each row's side effects (`CohortWarp.row_effects`) and splits
when rows would decide differently; the cohort's poll names all rows' barriers (`RowsObj`), and a change that
wakes some rows' warps and not others splits too (`_Versions`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cohort_rows import _Split

# per-CTA operations run once per CTA row (`CohortWarp.each_row`): issue and commit
ASYNC_PER_ROW = frozenset({"cp.async", "cp.async.commit_group", "cp.async.bulk.tensor.g2s", "cp.async.bulk.tensor.s2g",
                           "cp.async.bulk.g2s", "cp.async.bulk.s2g", "cp.async.bulk.commit_group",
                           "fence.proxy.async"})
# waits run for every row at once (`CohortWarp.each_row_blocking`): block only if every row's warp would
ASYNC_WAITS = frozenset({"cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.wait_group"})
# each CTA's own mbarriers (a cohort has no clusters): per row, and the waits and polls for every row at once
MBARRIER_PER_ROW = frozenset({"mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.arrive_drop",
                              "mbarrier.arrive.expect_tx", "mbarrier.arrive_drop.expect_tx", "mbarrier.expect_tx",
                              "mbarrier.complete_tx", "fence.mbarrier_init"})
MBARRIER_WAITS = frozenset({"mbarrier.try_wait.parity", "mbarrier.test_wait.parity", "mbarrier.try_wait",
                            "mbarrier.test_wait", "cuda.mbarrier_wait"})


class _Versions(tuple):
    """The rows' barrier versions at a poll: `!=` (the scheduler's wake test) holds when every row's changed,
    not when none did; some but not all is a step no per-CTA order shares."""

    def __ne__(self, other):
        diff = [a != b for a, b in zip(self, other)]
        if all(diff):
            return True
        if any(diff):
            raise _Split("some CTAs of the cohort see their barrier change while others do not")
        return False


class RowsObj:
    """What a cohort warp's poll watches: every row's object (the cohort engine dirties it with any of them)."""

    __slots__ = ("objs",)

    def __init__(self, objs):
        self.objs = objs

    @property
    def version(self) -> _Versions:
        return _Versions(o.version for o in self.objs)


class AsyncRows:
    """What async operations reach of a cohort's engine (`_CohortEng` mixes it in): the completion queue, the
    operation counter, and the rows' async accesses, sync events and retirements."""

    real: Any
    records: list
    row_of: dict
    pending: Any
    written: set
    footprint: Any

    @property
    def async_id(self) -> int:
        return self.real.async_id

    @async_id.setter
    def async_id(self, value: int) -> None:
        self.real.async_id = value

    alias: dict
    composites: dict
    dirty: dict

    def rows_obj(self, objs: list):
        """The one `RowsObj` of these rows' objects (touching any of them dirties it: `touch`)."""
        key = tuple(id(o) for o in objs)
        c = self.composites.get(key)
        if c is None:
            c = self.composites[key] = RowsObj(objs)
            for o in objs:
                self.alias.setdefault(id(o), []).append(c)
        return c

    def touch(self, obj) -> None:
        self.dirty[id(obj)] = None
        for c in self.alias.get(id(obj), ()):
            self.dirty[id(c)] = None

    def enqueue(self, completion) -> None:
        self.pending.append(completion)

    def deliver_pending(self) -> None:
        batch = list(self.pending)
        self.pending.clear()
        for completion in batch:
            completion()

    def _row_of(self, cta: int) -> int:
        row = self.row_of.get(cta)
        if row is None:
            raise _Split("an async operation of a CTA outside the cohort")
        return row

    def async_access(self, site, alloc, offsets, size, kind, proxy, order, scope, lanes, actor, iters, warp,
                     cta) -> None:
        """An async operation's access (no running warp): its CTA's row, named by the operation's warp."""
        r = self._row_of(cta)
        alloc = getattr(alloc, "real", alloc)
        self.records[r].append(("async", cta, warp, site, iters, lanes, alloc, offsets, size, kind, proxy, order,
                                scope, actor))
        if alloc.space == "shared":
            return          # the row's own CTA's bytes (the op resolved them through its CTA)
        if alloc.id not in self.written:
            if kind != "read":
                raise _Split(f"an async store to {alloc.name}, which the compiler did not list as written")
        else:
            self.footprint.add(alloc, r, offsets, size, kind != "read")

    def access_runs(self, op, site: int, alloc, starts, sizes, kind: str, proxy: str = "async") -> None:
        """An async operation's byte runs of `alloc` (a TMA box): its CTA's row; global bytes join the footprint."""
        r = self._row_of(op.cta)
        alloc = getattr(alloc, "real", alloc)
        starts = np.asarray(starts, dtype=np.int64).reshape(-1)
        self.records[r].append(("runs", op, site, alloc, starts, sizes, kind, proxy))
        if alloc.space == "shared" or not starts.size:
            return
        if alloc.id not in self.written:
            if kind != "read":
                raise _Split(f"an async store to {alloc.name}, which the compiler did not list as written")
            return
        lens = np.broadcast_to(np.asarray(sizes, dtype=np.int64), starts.shape)
        offs = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(int(lens.sum()))
        self.footprint.add(alloc, r, offs, 1, kind != "read")

    def async_sync(self, cta: int, warp: int, kind: str, site: int, iters, **fields) -> None:
        self.records[self._row_of(cta)].append(("async_sync", cta, warp, kind, site, iters, fields))

    def retire(self, op) -> None:
        self.records[self._row_of(op.cta)].append(("retire", op))


def deliver(eng, rec) -> bool:
    """Commit one async record of a row to the real engine; False if `rec` is not one."""
    tag = rec[0]
    if tag == "async":
        _, cta, warp, site, iters, lanes, alloc, off, size, kind, proxy, order, scope, actor = rec
        eng.access(None, site, alloc, off, size, kind, proxy, order, scope, lanes=lanes, actor=actor, iters=iters,
                   warp=warp, cta=cta)
        return True
    if tag == "async_sync":
        _, cta, warp, kind, site, iters, fields = rec
        eng.async_sync(cta, warp, kind, site, iters, **fields)
        return True
    if tag == "runs":
        _, op, site, alloc, starts, sizes, kind, proxy = rec
        eng.access_runs(op, site, alloc, starts, sizes, kind, proxy)
        return True
    if tag == "retire":
        op = rec[1]
        op.eng = eng
        eng.retire(op)
        return True
    return False
