"""CTA cohorts: the same warp of k CTAs run as one (issues 14, 19).  Off by default (`Engine(cohorts=k)`).

Design
------
Why.  NumSim runs every warp of every CTA one at a time in Python; a production grid (4096 CTAs x 4 warps)
spends its whole budget in per-warp interpreter overhead, with no hot spot left (briefs: corpus-time).  A
cohort executes warp j of k CTAs as ONE "cohort warp" whose lane vectors have 32k elements (row r = CTA r of
the cohort, lanes 32r..32r+31), so each compiled closure runs once for k CTAs and numpy does the rest.

Values.  A value is uniform (a scalar: the same in every lane of every CTA of the cohort) or a 32k vector.
`blockIdx` is a per-lane vector (each row its CTA's index); `threadIdx`, the lane id and `warp_base` are the
per-CTA ones tiled k times.  Everything the compiled closures compute lane-wise (compile_expr) is then the
per-CTA computation row by row.  A branch whose condition differs across rows runs both sides under lane
masks, exactly as intra-warp divergence does; a row left with no active lane in a region is a CTA that does
not execute it (its events are dropped when they are split per CTA, below).

Exactness by construction: run, check, commit -- or roll back and run per CTA.
- What a cohort may execute is decided statically (`eligible`): SIMT arithmetic, element loads/stores of
  global buffers, let/if/for/assert/break/continue/return.  Anything else -- shared memory, local buffers,
  op calls (shuffles, votes, bar.sync, mbarriers, TMA, tcgen05, ptx.*), while loops, clusters, cluster
  launch control, forced schedules, uninitialized global allocations -- runs the launch per CTA, as today.
- A kernel in that subset never blocks or polls, so the per-CTA engine runs it CTA after CTA, each warp to
  completion in program order (runtime.Scheduler: every warp's first step runs it to its end; residency
  waves launch the next CTA before any later warp is stepped).  Cohorts of consecutive CTAs run in the same
  order: cohort after cohort, in a cohort warp 0 then warp 1 ...  The only order that changes is between
  two CTAs of one cohort (lock-step instead of one after the other).  That is invisible unless two CTAs of
  the cohort touch the same global byte and one of them writes it: `_Footprint` records every global access
  to a buffer the kernel writes and checks exactly that after the cohort ran.
- Every store through a global view is undo-logged (`_LoggedView`) while a cohort runs.  A footprint
  conflict, an engine error (the per-CTA run must report the CTA and lane it reports), an uninitialized read
  note, or any operation reaching beyond the subset (`_Split`) rolls the cohort's stores back and runs its
  CTAs with the per-CTA engine, which then reports what it always did.  A budget (ResourceLimit) ends the
  run as incomplete, as it would per CTA (the events of the unfinished cohort are not delivered).
- Observers see exactly the per-CTA events: access records are buffered per (CTA, warp) while the cohort
  runs, split by row (offsets, lanes; a row with no active lane gives none), and delivered on commit CTA by
  CTA, warp by warp, through the engine's own `access` -- the same records, in the same order, with the same
  sequence numbers as the per-CTA engine.  Two representation details differ: an offset uniform in the
  per-CTA run may arrive as a 32-lane vector of equal values, and a full row's lane mask arrives as None
  (as a full warp's does) -- both mean the same accesses to every consumer (tests normalize them).

Happens-before, not interleaving (checked for the subset, and what the extension must keep): Synccheck's
phase A checks each barrier's protocol in run order, but barriers are per CTA (named barriers,
mbarriers in shared memory), so only each CTA's own order matters; its causality clocks and the explorer's
fixed per-warp programs are built per warp.  Racecheck keeps a shadow per granule and orders pairs by vector
clocks; two accesses of different CTAs are ordered only through sync (none in the subset), so only
conflicting cross-CTA pairs could notice a different interleaving, and the footprint check rolls those back.

Extending (not done here): bar.sync/named barriers per row (a cohort warp arrives for every row; a row
that would not arrive -- its lanes elsewhere -- splits the cohort), shuffles/votes per 32-lane group
(ops/warp.py indexes with V.LANES), local buffers ((elements, 32k) matrices in ops/access.py `_matrix`),
shared memory as a (k, pool) array with per-row allocation objects, and the ptx.* arithmetic that
assumes 32-lane vectors (`V.as_vec`).  Blocking ops need the cohort scheduler to reproduce each CTA's own
warp interleaving; splitting a blocked cohort mid-run needs the warp's generator state copied, which Python
generators cannot do -- hence the roll-back-and-rerun design, which is exact but pays the cohort's work
twice on a split.  Residency: in the subset waves change nothing observable (no shared memory, no sync);
with shared memory a cohort must take k resident slots of its wave.
"""
from __future__ import annotations

import numpy as np

import ir

from . import values as V
from .errors import ResourceLimit
from .runtime import DONE, Scheduler, Warp

COHORT_OPS = frozenset({"element load global", "element store global"})
_STMTS = (ir.Evaluate, ir.Store, ir.Let, ir.For, ir.If, ir.Assert, ir.Break, ir.Continue, ir.Return)


class _Split(Exception):
    """The cohort reached something it cannot run for all its CTAs at once: roll back, run them per CTA."""


def eligible(func: ir.PrimFunc, program, cluster: tuple, gated: bool, clc: bool) -> str | None:
    """None if the launch may run in cohorts, else why not (for the stats)."""
    if gated:
        return "a forced schedule"
    if clc or cluster != (1, 1, 1):
        return "clusters"
    if program.layout.total:
        return "shared memory"
    other = sorted({s.op for s in program.sites} - COHORT_OPS)
    if other:
        return f"operation {other[0]}"
    for node in ir.walk(func.body):
        if isinstance(node, ir.Stmt) and not isinstance(node, _STMTS):
            return f"statement {type(node).__name__}"
        if isinstance(node, (ir.OpCall, ir.Address, ir.Unsupported)):
            return f"expression {type(node).__name__}"
    if any(i.space != "global" for i in program.buffers.values()):
        return "local or pointer buffers"
    return None


class _LoggedView(np.ndarray):
    """A global buffer view that remembers what each store overwrote (the cohort's undo log).  Reads give
    plain arrays: the closures test `type(x) is np.ndarray`."""

    log: list

    def __setitem__(self, key, value):
        if type(key) is np.ndarray:
            key = key.copy()
        plain = self.view(np.ndarray)
        self.log.append((plain, key, np.array(plain[key], copy=True)))
        plain[key] = value

    def __getitem__(self, key):
        return self.view(np.ndarray)[key]

    def take(self, *args, **kwargs):
        return self.view(np.ndarray).take(*args, **kwargs)


class _Footprint:
    """Global bytes each CTA row of the cohort touched, in buffers the kernel writes."""

    def __init__(self):
        self.parts: dict[int, list] = {}     # alloc id -> [(row, byte offsets, is_write)]

    def add(self, alloc, row: int, offsets, size: int, write: bool) -> None:
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        if size > 1:
            offs = (offs[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)
        self.parts.setdefault(alloc.id, []).append((row, offs, write))

    def conflict(self) -> bool:
        """Does some byte have accesses of two rows, one of them a write?"""
        for parts in self.parts.values():
            if len({row for row, _, _ in parts}) < 2 or not any(w for _, _, w in parts):
                continue
            offs = np.concatenate([p[1] for p in parts])
            rows = np.concatenate([np.full(p[1].size, p[0], np.int64) for p in parts])
            writes = np.concatenate([np.full(p[1].size, p[2]) for p in parts])
            order = np.lexsort((rows, offs))
            offs, rows, writes = offs[order], rows[order], writes[order]
            starts = np.flatnonzero(np.r_[True, offs[1:] != offs[:-1]])
            lo = np.minimum.reduceat(rows, starts)
            hi = np.maximum.reduceat(rows, starts)
            wr = np.logical_or.reduceat(writes, starts)
            if np.any((lo != hi) & wr):
                return True
        return False


class _CohortEng:
    """What a cohort warp reaches through `w.eng`: the real state's counters and budgets, logged global views,
    and per-row buffers of the access records.  Anything else is outside the subset: `_Split`."""

    def __init__(self, eng, k: int, written: set):
        self.real = eng
        self.k = k
        self.stats = eng.stats
        self.loop_budget = eng.loop_budget
        self.globals = eng.globals
        self.tracing = eng.tracing
        self.written = written                   # alloc ids the kernel may store to
        self.log: list = []
        self.global_views = {}
        for slot, view in eng.global_views.items():
            lv = view.view(_LoggedView)
            lv.log = self.log
            self.global_views[slot] = lv
        self.records: list[list] = []            # per row: (warp index, access arguments)
        self.footprint = _Footprint()

    def __getattr__(self, name):
        raise _Split(f"engine state {name!r}")

    def checkpoint(self, w) -> None:
        self.real.meter.charge((w.instr - w.instr_seen) * self.k)
        w.instr_seen = w.instr

    def note_uninitialized(self, site, w, name) -> None:
        raise _Split("an uninitialized read (its note names the CTA's warp)")

    def access(self, w, site, alloc, offsets, size, kind, proxy="generic", order="weak", scope="cta", lanes=None,
               actor=-1, iters=None, warp=None, cta=None) -> None:
        if w is None or lanes is not None or actor != -1:
            raise _Split("an async access")
        mask = w.mask
        iters = tuple(w.iters)
        vec = type(offsets) is np.ndarray
        track = alloc.id in self.written
        for r in range(self.k):
            lo = 32 * r
            m = None if mask is None else mask[lo:lo + 32]
            if m is not None:
                if not m.any():
                    continue            # this CTA does not execute the access
                if w.row_full[r] and m.all():
                    m = None
            off = offsets[lo:lo + 32] if vec else offsets
            self.records[r].append((w.index, site, iters, m, alloc, off, size, kind, proxy, order, scope))
            if track:
                self.footprint.add(alloc, r, off if m is None or not vec else off[m], size, kind != "read")

    def rollback(self) -> None:
        for plain, key, old in reversed(self.log):
            plain[key] = old
        self.log.clear()


class _Row:
    """The per-CTA warp a buffered record is delivered for (what `EngineState.access` reads of a warp)."""

    __slots__ = ("cta", "gid", "iters", "mask")

    def __init__(self, w: Warp, iters, mask):
        self.cta, self.gid, self.iters = w.cta, w.gid, iters
        self.mask = w.mask if mask is None else mask


class CohortWarp(Warp):
    """Warp `index` of k CTAs at once: lane vectors of 32k elements, row r = CTA r."""

    __slots__ = ("FULL", "row_full", "rows")

    def __init__(self, rows: list, index: int, cohort_eng: _CohortEng, nslots: int):
        first = rows[0]
        super().__init__(first.gid, first.rt, index, first.nthreads, (1, 1, 1), cohort_eng, nslots)
        k = len(rows)
        self.rows = rows                               # the per-CTA warps, by row
        self.FULL = np.ones(32 * k, dtype=np.bool_)
        self.FULL.setflags(write=False)
        self.tid = np.tile(first.tid, k)
        self.tid_yz = (np.tile(first.tid_yz[0], k), np.tile(first.tid_yz[1], k))
        self.lane = np.tile(V.LANES, k)
        self.warp_base = first.warp_base
        self.full_mask = None if first.full_mask is None else np.tile(first.full_mask, k)
        self.mask = self.full_mask
        self.row_full = [first.full_mask is None] * k
        self.block_idx = tuple(np.repeat(np.array([w.block_idx[d] for w in rows], dtype=np.int32), 32)
                               for d in range(3))
        self.gid = first.gid
        self.cta = first.cta


def run_cohorts(eng, ctas: list, body, size: int, max_polls: int, nslots: int, written: set) -> dict:
    """Run the launch's CTAs in cohorts of up to `size` (consecutive CTAs); a cohort that cannot commit runs
    per CTA.  Returns counts for the stats."""
    stats: dict = {"cohort_size": size, "cohorts": 0, "ctas_in_cohorts": 0, "split": 0}
    reasons: dict[str, int] = {}
    stats["split_reasons"] = reasons
    if not all(a.all_written for a in eng.globals.allocs.values()):
        size = 1          # uninitialized global memory: its read notes name warps (see `_CohortEng`)
    for start in range(0, len(ctas), size):
        group = ctas[start:start + size]
        why = _try_cohort(eng, group, body, nslots, written) if len(group) > 1 else "a single CTA"
        if why is None:
            stats["cohorts"] += 1
            stats["ctas_in_cohorts"] += len(group)
            continue
        stats["split"] += 1
        reasons[why] = reasons.get(why, 0) + 1
        Scheduler(eng, [w for rt in group for w in rt.warps], max_polls).run(body)
    return stats


def _try_cohort(eng, group: list, body, nslots: int, written: set) -> str | None:
    """Run `group` as one cohort and commit it; None if it committed, else why not (nothing committed)."""
    k = len(group)
    ceng = _CohortEng(eng, k, written)
    ceng.records = [[] for _ in range(k)]
    nwarps = len(group[0].warps)
    cws = []
    try:
        for j in range(nwarps):
            cw = CohortWarp([rt.warps[j] for rt in group], j, ceng, nslots)
            cws.append(cw)
            for _ in body(cw):
                raise _Split("a blocking operation")
            ceng.checkpoint(cw)
        if ceng.footprint.conflict():
            raise _Split("two CTAs of the cohort touch the same global bytes, one writing")
    except ResourceLimit:
        ceng.rollback()
        raise
    except _Split as why:
        ceng.rollback()
        return str(why)
    except Exception as err:          # an engine error (or a defect): the per-CTA run reports it as it would
        ceng.rollback()
        return f"{type(err).__name__} in the cohort"
    # commit: the records CTA by CTA, warp by warp, as the per-CTA engine delivers them
    for r, rt in enumerate(group):
        by_warp: list[list] = [[] for _ in range(nwarps)]
        for rec in ceng.records[r]:
            by_warp[rec[0]].append(rec)
        for j, w in enumerate(rt.warps):
            for _, site, iters, m, alloc, off, size, kind, proxy, order, scope in by_warp[j]:
                eng.access(_Row(w, iters, m), site, alloc, off, size, kind, proxy, order, scope)
            w.instr = w.instr_seen = cws[j].instr
            w.status = DONE
            eng.stats["warps_finished"] += 1
    return None
