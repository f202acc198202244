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

Whole cohort warps.  The common forms skip the rows' views (`cp_async`, `wait_group` below; the mbarrier arrive
and polls in numsim.cohort_mbarrier): the operands are evaluated once over the cohort, and only each row's
operations, group bookkeeping and events are per row, as the per-row run makes them.  Each lane's cp.async stays
its own operation (the checkers order each thread's copies by its own groups: common/async_effects, hb/graph,
racecheck/flow fork an operation from its one issuing lane).

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
from .runtime import Wait

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


# each lane's one-hot lane mask (an async access names its operation's lane; read-only: shared by the records)
_ONE_LANE = np.eye(32, dtype=np.bool_)
_ONE_LANE.setflags(write=False)


class _Issuer:
    """What `AsyncOp` reads of the warp issuing it: a row's CTA warp, at the cohort warp's iteration."""

    __slots__ = ("gid", "cta", "iters", "eng")

    def __init__(self, base, iters, eng):
        self.gid, self.cta, self.iters, self.eng = base.gid, base.cta, iters, eng


def _lane_vector(value, n: int) -> np.ndarray:
    return value.astype(np.int64) if type(value) is np.ndarray else np.full(n, int(value), np.int64)


def cp_async(dst_fn, src_fn, cp_size_fn, src_size_fn, site: int, async_op, groups_of):
    """`run.cohort` of Ampere cp.async (ops/async_copy._cp_async): the whole cohort warp's copies at once -- True
    if it ran them, False (nothing done) for the per-row path.

    Each lane is still its own operation, issued in lane order per row with the per-CTA issue event, group entry
    and operation id order; what is batched is the work around them: the operands are evaluated once, the
    addresses checked per row (not per lane), and a row's copies complete in ONE queued completion that moves
    every lane's bytes at once and then records, lane by lane, what the per-lane completions do (the read, the
    write, the retirement, the group's change).  Exact because the per-lane completions of one instruction are
    queued back to back and delivered in one batch between rounds (runtime.Scheduler), where no warp runs.  The
    path applies when every active lane copies the same size with no zero fill, a row's destinations are disjoint
    and in one shared allocation of its CTA and the sources in one global allocation; else per row (the per-CTA
    closure reports what is wrong)."""

    def whole(w) -> bool:
        eng = w.eng
        notes = eng.uninit_notes
        n = w.FULL.size
        dst_a, src_a, cp_a = dst_fn(w), src_fn(w), cp_size_fn(w)
        src_sz = src_size_fn(w) if src_size_fn is not None else None
        size = _common(cp_a, w)
        keep = size if src_sz is None else _common(src_sz, w)
        plan = None
        if size in (4, 8, 16) and keep is not None and keep >= size:
            plan = _cp_plan(w, _lane_vector(dst_a, n), _lane_vector(src_a, n), size)
        if plan is None:
            if eng.uninit_notes != notes:
                raise _Split("a cp.async operand read an unwritten register")    # noted once, per row
            return False
        s_alloc, rows = plan
        w.effects += 1
        iters = tuple(w.iters)
        real = s_alloc.real
        footprint = real.id in eng.written
        real_eng = eng.real
        for r, m, lanes, d_alloc, d_offs, s_offs in rows:
            base = w.rows[r]
            groups = groups_of(base, "cp.async")
            issuer = _Issuer(base, iters, eng)
            ops = []
            rec = eng.records[r]
            uncommitted = groups.uncommitted
            first = real_eng.async_id + 1           # ids in lane order, as `new_op` draws them lane by lane
            real_eng.async_id += len(lanes)
            eng.stats["async_ops"] += len(lanes)
            for i, lane in enumerate(lanes):
                op = async_op(first + i, "cp.async", issuer, lane, site)
                uncommitted[lane].append(op)
                rec.append(("sync", w.index, iters, m, site, "async.issue",
                            {"details": {"op": op.id, "kind": "cp.async", "lane": lane}}))
                ops.append(op)
            eng.enqueue(_cp_complete(eng, r, ops, lanes, s_alloc, real, s_offs, d_alloc, d_offs, size, groups,
                                     footprint))
        return True
    return whole


def _common(value, w):
    """The operand's value if it is the same on every active lane of the cohort warp, else None."""
    if type(value) is not np.ndarray:
        return int(value)
    vals = value if w.mask is None else value[w.mask]
    if not vals.size or not (vals == vals[0]).all():
        return None
    return int(vals[0])


def _cp_plan(w, dst: np.ndarray, src: np.ndarray, size: int):
    """(the source allocation, [(row, its mask, its active lanes, its destination allocation, destination and
    source offsets per lane)]) if the whole-cohort cp.async applies, else None."""
    act = w.FULL if w.mask is None else w.mask
    if ((dst[act] % size) != 0).any() or ((src[act] % size) != 0).any():
        return None
    lo, hi = int(src[act].min()), int(src[act].max()) + size
    s_alloc = w.eng.globals.find(lo, hi - lo)
    if s_alloc is None:
        return None
    rows = []
    for r, m in enumerate(w.row_masks()):
        if m is False:
            continue
        lanes = np.arange(32) if m is None else np.flatnonzero(m)
        d = dst[32 * r + lanes]
        order = np.sort(d)
        if order.size > 1 and (np.diff(order) < size).any():
            return None         # lanes' destinations overlap: per lane, in lane order
        dlo = int(order[0])
        d_alloc = w.rows[r].rt.shared.find(dlo, int(order[-1]) + size - dlo)
        if d_alloc is None:
            return None
        rows.append((r, m, lanes.tolist(), d_alloc, d - d_alloc.base, src[32 * r + lanes] - s_alloc.base))
    return s_alloc, rows


def _cp_complete(eng, r: int, ops: list, lanes: list, s_alloc, real, s_offs, d_alloc, d_offs, size: int, groups,
                 footprint: bool):
    """One row's cp.async completions (ops/async_copy `_copy` + `group_done` per lane, in lane order)."""

    def complete():
        span = np.arange(size, dtype=np.int64)
        d_alloc.data[(d_offs[:, None] + span).ravel()] = s_alloc.data.view(np.ndarray)[(s_offs[:, None] + span).ravel()]
        d_alloc.mark_written(d_offs, size)
        rec = eng.records[r]
        d_real = getattr(d_alloc, "real", d_alloc)
        for op, lane, s_off, d_off in zip(ops, lanes, s_offs.tolist(), d_offs.tolist()):
            one = _ONE_LANE[lane]
            rec.append(("async", op.cta, op.warp, op.site, op.iters, one, real, s_off, size, "read", "generic",
                        "weak", "cta", op.id))
            rec.append(("async", op.cta, op.warp, op.site, op.iters, one, d_real, d_off, size, "write", "generic",
                        "weak", "cta", op.id))
            op._done = True         # `op.done = True`: its retirement (`AsyncRows.retire`), in the same place
            rec.append(("retire", op))
        groups.version += len(ops)  # one change per lane (only inequality is read: `runtime.Wait`)
        eng.touch(groups)
        if footprint:
            eng.footprint.add(real, r, s_offs, size, False)
    return complete


def wait_group(n_fn, family: str, wait_all: bool, read: bool, name: str, site: int, groups_of):
    """`run.cohort` of cp.async.wait_group / wait_all and cp.async.bulk.wait_group (ops/async_copy._wait_group):
    a generator function of the cohort warp and the per-CTA closure `fn` (run per row, `each_row_blocking`, where
    this path does not apply).  It is that per-row run without the rows' views: every row must wait here, and
    every row's warp must pass, or block, alike (else split); the events are each row's."""

    def whole(w, fn):
        eng = w.eng
        notes = eng.uninit_notes
        masks = w.row_masks()
        if any(m is False for m in masks):
            raise _Split("a CTA of the cohort does not reach a barrier with this warp (its lanes are elsewhere)")
        n = _common(n_fn(w), w)
        if n is None:
            if eng.uninit_notes != notes:
                raise _Split("a wait_group count read an unwritten register")
            return (yield from w.each_row_blocking(fn))
        rows = []
        for r, m in enumerate(masks):
            groups = groups_of(w.rows[r], family)
            lanes = list(range(32)) if m is None else np.flatnonzero(m).tolist()
            if wait_all:
                for lane in lanes:
                    groups.commit(lane)
            rows.append((groups, lanes))

        def ready_row(groups, lanes) -> bool:
            return all(groups.settled(lane, n) for lane in lanes)

        def ready() -> bool:
            return _agree([ready_row(g, lanes) for g, lanes in rows])
        blocked = False
        while not ready():
            blocked = True
            eng.stats["blocks"] += len(rows) - 1      # each CTA's warp blocks (the scheduler counts one)
            yield Wait(rows[0][0], ready, f"await {name} {n} ({family} groups still pending)", site,
                       [g for g, _ in rows])
        w.effects += 1
        iters = tuple(w.iters)
        for r, m in enumerate(masks):
            eng.records[r].append(("sync", w.index, iters, m, site, f"{family}.wait_group",
                                   {"count": n, "details": {"read": read, "blocked": blocked}}))
        return None
    return whole


def _agree(flags: list) -> bool:
    """Every row's warp ready (True) or none (False); some but not all: the CTAs' steps part ways."""
    if all(flags):
        return True
    if any(flags):
        raise _Split("the CTAs of the cohort leave a barrier at different steps")
    return False
