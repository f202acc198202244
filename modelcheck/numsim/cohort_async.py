"""Asynchronous copies in a CTA cohort (numsim.cohort): Ampere `cp.async` with its per-thread groups.

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
operation; tests compare them by first appearance within a CTA).
"""
from __future__ import annotations

from typing import Any

from .cohort_rows import _Split

# per-CTA operations run once per CTA row (`CohortWarp.each_row`): issue and commit
ASYNC_PER_ROW = frozenset({"cp.async", "cp.async.commit_group"})
# waits run for every row at once (`CohortWarp.each_row_blocking`): block only if every row's warp would
ASYNC_WAITS = frozenset({"cp.async.wait_group", "cp.async.wait_all"})


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
    if tag == "retire":
        op = rec[1]
        op.eng = eng
        eng.retire(op)
        return True
    return False
