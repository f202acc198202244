"""CTA cohorts: the same warp of k CTAs run as one (issues 14, 19).  `Engine(cohorts=k)`; off by default in
NumSim's own API, on in the checkers (`CHECK_COHORT`): the run they observe is the per-CTA one either way.

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
  global and local buffers (registers: a register's value is a 32k vector like any other), the PTX register
  arithmetic of ops/ptx_math (`NATIVE`: their closures are lane-wise on vectors of any length), ld/st of
  global memory, and the non-blocking warp collectives (`PER_ROW`: shuffles, votes, activemask, warp_sync,
  elect), which run once per CTA row on a 32-lane view of the cohort warp (`_RowView`: the row's slices
  of the variables and registers, its own CTA's ids, its own events).  Anything else -- shared memory,
  while loops, barriers, mbarriers, TMA, tcgen05, atomics, clusters, cluster launch control, forced
  schedules, uninitialized global allocations -- runs the launch per CTA, as today.
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
  run as incomplete, as it would per CTA, but not at the same point: the events of the unfinished cohort
  are not delivered, and the step budget is charged k warp-instructions per cohort instruction (more than
  the per-CTA run when CTA rows diverge).  Budgets never turn a verdict into clean or error.
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
that would not arrive -- its lanes elsewhere -- splits the cohort), shared memory as a (k, pool) array
with per-row allocation objects (or per-row views as for the collectives), while loops (their reschedule
quantum is a poll: the per-CTA scheduler interleaves warps there), atomics (per-row, ordered CTA by CTA
only if no other CTA of the cohort touches the bytes -- the footprint check already gives that).
Blocking ops need the cohort scheduler to reproduce each CTA's own
warp interleaving; splitting a blocked cohort mid-run needs the warp's generator state copied, which Python
generators cannot do -- hence the roll-back-and-rerun design, which is exact but pays the cohort's work
twice on a split.  Residency: in the subset waves change nothing observable (no shared memory, no sync);
with shared memory a cohort must take k resident slots of its wave.
"""
from __future__ import annotations

from collections import deque

import numpy as np

import ir

from . import cohort_shared
from .cohort_rows import CohortWarp, _RowView, _Split
from .errors import ResourceLimit
from .ops import barrier, misc, ptx_math, warp as warp_ops
from .residency import _MEMORY, ReleasedShared
from .runtime import DONE, Poll, Scheduler, Warp
from .sync import NamedBarrier

# the cohort size Synccheck and Racecheck run with: the same events as per CTA (below), a production grid's
# Python overhead shared by 64 CTAs (1,600 x 4 warps: 147 s -> 25 s CPU), and a roll-back costs at most 64 CTAs
CHECK_COHORT = 64
ELEMENT_SITES = frozenset({"element load global", "element store global", "element load local",
                           "element store local", "element load shared", "element store shared"})
# ops whose closures compute lane by lane on vectors of any length (reviewed: no 32-lane constant); the
# griddepcontrol pair is a no-op in NumSim (ops/misc: a launch's predecessor is taken as complete), per CTA too
NATIVE = frozenset(ptx_math.HANDLERS) | {"tir.reinterpret", "tir.ptr_byte_offset", "ld", "st", "griddepcontrol.wait",
                                         "griddepcontrol.launch_dependents"}
# run once per CTA row on a 32-lane view of the cohort warp (`_RowView`): the warp collectives, and setmaxnreg
# (its bookkeeping is the CTA's)
PER_ROW = frozenset(warp_ops.HANDLERS) | {"cuda.__activemask", "tir.tvm_warp_activemask", "setmaxnreg"}
# CTA barriers: every row arrives at its own CTA's barrier (`CohortWarp.each_row_blocking`)
BARRIERS = frozenset({"bar.sync", "cuda.cta_sync", "cuda.warpgroup_sync", "tir.tvm_storage_sync"})
SPACES = ("", "global", "shared", "shared::cta")      # ld/st state spaces a cohort runs ("": generic)
_STMTS = (ir.Evaluate, ir.Store, ir.Let, ir.For, ir.If, ir.Assert, ir.Break, ir.Continue, ir.Return,
          ir.DeclBuffer, ir.While)
assert misc.HANDLERS.keys() >= {"tir.reinterpret", "tir.ptr_byte_offset", "cuda.__activemask", "setmaxnreg",
                                "griddepcontrol.wait", "griddepcontrol.launch_dependents"}
assert barrier.HANDLERS.keys() >= BARRIERS


def eligible(func: ir.PrimFunc, program, cluster: tuple, gated: bool, clc: bool) -> str | None:
    """None if the launch may run in cohorts, else why not (for the stats)."""
    if gated:
        return "a forced schedule"
    if clc or cluster != (1, 1, 1):
        return "clusters"
    spaces = {i.space for i in program.buffers.values()} - {"global", "local", "shared"}
    if spaces:
        return f"{sorted(spaces)[0]} buffers"
    for node in ir.walk(func.body):
        if isinstance(node, ir.Stmt) and not isinstance(node, _STMTS):
            return f"statement {type(node).__name__}"
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is None or not info.supported:
                continue        # outside the modeled set: reaching it stops the run as it does per CTA
            if info.name not in NATIVE | PER_ROW | BARRIERS:
                return f"operation {node.op}"
            if info.name in ("ld", "st") and info.quals.get("space", "") not in SPACES:
                return f"operation {node.op}"
    other = sorted({s.op for s in program.sites} - ELEMENT_SITES
                   - {s.op for s in program.sites if not s.op.startswith("element ")})
    if other:
        return f"operation {other[0]}"
    return None


def wrap_op(info, fn, blocking: bool):
    """The cohort program's op closure: per-CTA operations run per CTA row (`CohortWarp.each_row`), CTA
    barriers for every row at once (`CohortWarp.each_row_blocking`)."""
    if blocking:
        if info.name not in BARRIERS:
            return fn

        def run_gen(w):
            if type(w) is CohortWarp:
                return (yield from w.each_row_blocking(fn))
            return (yield from fn(w))
        return run_gen
    if info.name not in PER_ROW and not (info.name in ("ld", "st") and info.quals.get("space") in SPACES[2:]):
        return fn
    whole = getattr(fn, "cohort", None)      # the op's own path for a whole cohort warp, when it applies

    def run(w):
        if type(w) is CohortWarp:
            if whole is not None and whole(w):
                return None
            return w.each_row(fn)
        return fn(w)
    return run


def wrap_access(info, fn, idx, value, site: int):
    """An element load (`value` None) or store closure: one of shared memory runs for every row at once
    (numsim.cohort_shared), or per CTA row where that does not apply (each row its own CTA's bytes)."""
    if info.space != "shared":
        return fn
    if value is None:
        load = cohort_shared.element_load(info, idx, site)

        def run_load(w):
            if type(w) is CohortWarp:
                got = load(w)
                return w.each_row(fn) if got is None else got
            return fn(w)
        return run_load
    store = cohort_shared.element_store(info, idx, value, site)

    def run_store(w):
        if type(w) is CohortWarp:
            if not store(w):
                w.each_row(fn)
            return None
        return fn(w)
    return run_store


class _LoggedView(np.ndarray):
    """Global memory while a cohort runs: every store through it remembers what it overwrote (the undo log).
    Reads give plain arrays (the closures test `type(x) is np.ndarray`); slices stay logged views."""

    log: list

    def __array_finalize__(self, obj):
        self.log = getattr(obj, "log", None)

    def __setitem__(self, key, value):
        if type(key) is np.ndarray:
            key = key.copy()
        plain = self.view(np.ndarray)
        self.log.append((plain, key, np.array(plain[key], copy=True)))
        plain[key] = value

    def __getitem__(self, key):
        if type(key) is slice:
            return super().__getitem__(key)
        return self.view(np.ndarray)[key]

    def take(self, *args, **kwargs):
        return self.view(np.ndarray).take(*args, **kwargs)


class _AllocProxy:
    """A global allocation whose bytes are a logged view (records name the real allocation: `real`)."""

    def __init__(self, real, log: list):
        self.real = real
        data = real.data.view(_LoggedView)
        data.log = log
        self.data = data

    def __getattr__(self, name):
        return getattr(self.real, name)


class _Globals:
    """The launch's global memory as a cohort sees it: the same allocations, behind `_AllocProxy`s."""

    def __init__(self, real, log: list):
        self.real = real
        self.allocs = {name: _AllocProxy(a, log) for name, a in real.allocs.items()}
        self._by_id = {a.real.id: a for a in self.allocs.values()}

    def find(self, addr: int, size: int):
        a = self.real.find(addr, size)
        return None if a is None else self._by_id[a.id]


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
            if not _ranges_meet(parts):
                continue        # no row writes inside the span of bytes another row touches: no byte is shared
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


def _ranges_meet(parts: list) -> bool:
    """Does some row's span of written bytes overlap another row's span of touched bytes (a cheap necessary
    condition for a conflict: rows usually touch disjoint ranges)?"""
    lo: dict[int, int] = {}
    hi: dict[int, int] = {}
    wlo: dict[int, int] = {}
    whi: dict[int, int] = {}
    for row, offs, write in parts:
        if not offs.size:
            continue
        a, b = int(offs.min()), int(offs.max())
        lo[row], hi[row] = min(lo.get(row, a), a), max(hi.get(row, b), b)
        if write:
            wlo[row], whi[row] = min(wlo.get(row, a), a), max(whi.get(row, b), b)
    for r, (a, b) in ((r, (wlo[r], whi[r])) for r in wlo):
        for q in lo:
            if q != r and a <= hi[q] and lo[q] <= b:
                return True
    return False


class _CohortEng:
    """What a cohort warp reaches through `w.eng`: the real state's counters and budgets, logged global memory,
    and per-row buffers of the events.  Anything else is outside the subset: `_Split`."""

    def __init__(self, eng, k: int, written: set):
        self.real = eng
        self.k = k
        self.stats = eng.stats
        self.loop_budget = eng.loop_budget
        self.tracing = eng.tracing
        self.written = written                   # alloc ids the kernel may store to
        self.log: list = []
        self.globals = _Globals(eng.globals, self.log)
        self.global_views = {}
        for slot, view in eng.global_views.items():
            lv = view.view(_LoggedView)
            lv.log = self.log
            self.global_views[slot] = lv
        self.records: list[list] = [[] for _ in range(k)]    # per row, in order: ("access" | "sync", ...)
        self.footprint = _Footprint()
        # what runtime.Scheduler reads and writes of its engine state (a cohort has no async completions)
        self.sites = eng.sites
        self.pending: deque = deque()
        self.dirty: dict = {}
        self.waiters: dict = {}
        self.current = None

    def touch(self, obj) -> None:
        self.dirty[id(obj)] = None

    def __getattr__(self, name):
        raise _Split(f"engine state {name!r}")

    def checkpoint(self, w) -> None:
        self.real.meter.charge((w.instr - w.instr_seen) * self.k)
        w.instr_seen = w.instr

    def note_uninitialized(self, site, w, name) -> None:
        """A read of never-written bytes, noted for each CTA row that executes it (global memory is all written
        in a cohort run, see `run_cohorts`; a register no row wrote is None, one only some rows wrote splits)."""
        if type(w) is _RowView:
            self.records[w.row].append(("uninit", w.index, site, name))
            return
        for r in range(self.k):
            if w.row_mask(r) is not False:
                self.records[r].append(("uninit", w.index, site, name))

    def access(self, w, site, alloc, offsets, size, kind, proxy="generic", order="weak", scope="cta", lanes=None,
               actor=-1, iters=None, warp=None, cta=None) -> None:
        if w is None or lanes is not None or actor != -1:
            raise _Split("an async access")
        if type(w) is _RowView:
            self._record(w.row, w, site, alloc, w.mask, offsets, size, kind, proxy, order, scope)
            return
        mask = w.mask
        vec = type(offsets) is np.ndarray
        for r in range(self.k):
            lo = 32 * r
            m = None if mask is None else mask[lo:lo + 32]
            if m is not None:
                if not m.any():
                    continue            # this CTA does not execute the access
                if w.row_full[r] and m.all():
                    m = None
            self._record(r, w, site, alloc, m, offsets[lo:lo + 32] if vec else offsets, size, kind, proxy, order,
                         scope)

    def access_rows(self, w, site, allocs: list, offsets, size, kind, order="weak", scope="cta") -> None:
        """A shared-memory access of a whole cohort warp: one record per row with active lanes, naming the row's
        own allocation (`allocs`, by row); its CTA's bytes, which no other row reaches."""
        vec = type(offsets) is np.ndarray
        iters = tuple(w.iters)
        for r in range(self.k):
            m = w.row_mask(r)
            if m is not False:
                self.records[r].append(("access", w.index, iters, m, site, allocs[r],
                                        offsets[32 * r:32 * r + 32] if vec else offsets, size, kind, "generic", order,
                                        scope))

    def _record(self, r, w, site, alloc, m, off, size, kind, proxy, order, scope) -> None:
        alloc = getattr(alloc, "real", alloc)
        self.records[r].append(("access", w.index, tuple(w.iters), m, site, alloc, off, size, kind, proxy, order,
                                scope))
        if alloc.space == "shared":
            if type(w) is not _RowView:
                raise _Split("a shared-memory access of the whole cohort")
            return          # the row's own CTA's bytes: no other CTA of the cohort reaches them
        if alloc.id not in self.written:
            if kind != "read":
                raise _Split(f"a store to {alloc.name}, which the compiler did not list as written")
        else:
            self.footprint.add(alloc, r, off if m is None or type(off) is not np.ndarray else off[m], size,
                               kind != "read")

    def sync(self, w, kind, site, **fields) -> None:
        if type(w) is not _RowView:
            raise _Split(f"sync event {kind} of the whole cohort")
        self.records[w.row].append(("sync", w.index, tuple(w.iters), w.mask, site, kind, fields))

    def rollback(self) -> None:
        for plain, key, old in reversed(self.log):
            plain[key] = old
        self.log.clear()


class _Row:
    """The per-CTA warp an event is delivered for (what `EngineState.access` / `sync` read of a warp)."""

    __slots__ = ("cta", "gid", "iters", "mask")

    def __init__(self, w: Warp, iters, mask):
        self.cta, self.gid, self.iters = w.cta, w.gid, iters
        self.mask = w.mask if mask is None else mask


class Launch:
    """What `run_cohorts` needs of the launch: the per-CTA program, how a CTA gets its shared memory
    (`make_shared`, None without shared memory), and whether CTAs run in waves (then a CTA's shared memory is
    made before its cohort runs and released once it committed, as `numsim.residency` does at a CTA's exit)."""

    def __init__(self, body, cohort_body, nslots: int, written: set, dtypes: dict, max_polls: int, make_shared,
                 waves: bool, layout=None):
        self.body = body                    # the per-CTA program
        self.cohort_body = cohort_body      # the program compiled with `wrap_op` / `wrap_access`
        self.nslots = nslots
        self.written = written              # global alloc ids the kernel may store to
        self.dtypes = dtypes                # local slot -> dtype name
        self.max_polls = max_polls
        self.make_shared = make_shared
        self.waves = waves
        self.layout = layout                # the shared layout (with `make_shared`)


def run_cohorts(eng, ctas: list, size: int, launch: Launch, stats: dict) -> int | None:
    """Run the launch's CTAs in cohorts of up to `size` consecutive CTAs; a cohort that cannot commit runs per
    CTA.  Counts go to `stats` as the run goes (a budget may end it).  Returns the index of the first CTA from
    which the caller must run the rest of the launch per CTA (a cohort met an engine error or a deadlock: the
    per-CTA run reports it as it would), else None."""
    stats.update({"cohort_size": size, "cohorts": 0, "ctas_in_cohorts": 0, "split": 0})
    reasons: dict[str, int] = {}
    stats["split_reasons"] = reasons
    if not all(a.all_written for a in eng.globals.allocs.values()):
        size = 1          # uninitialized global memory: its read notes name warps (see `_CohortEng`)
    for start in range(0, len(ctas), size):
        group = ctas[start:start + size]
        if launch.waves and launch.make_shared is not None:
            for rt in group:
                launch.make_shared(rt)
        failed, why = _try_cohort(eng, group, launch) if len(group) > 1 else (True, "a single CTA")
        if not failed:
            stats["cohorts"] += 1
            stats["ctas_in_cohorts"] += len(group)
        else:
            stats["split"] += 1
            reasons[why] = reasons.get(why, 0) + 1
        # a cohort that did not commit: its CTAs one at a time, each still as a (one-row) cohort, so that an
        # error stops nothing half-done and the rest of the launch can run per CTA from that CTA on
        for i, rt in enumerate(group if failed else ()):
            one, _ = _try_cohort(eng, [rt], launch)
            if one == "error":
                stats["rest_per_cta"] = len(ctas) - start - i
                return start + i
            if one:
                Scheduler(eng, rt.warps, launch.max_polls).run(launch.body)
        if launch.waves and launch.make_shared is not None:
            _release(eng, group)
    return None


def _release(eng, group: list) -> None:
    """The group's CTAs exited: their shared memory goes (as numsim.residency releases it)."""
    if eng.columns is not None:
        eng.columns.flush()             # buffered records still name the allocations about to go
    for rt in group:
        if eng.columns is not None:
            eng.columns.release(rt.shared.allocs.values())
        rt.shared = ReleasedShared(rt.index, {k: v for k, v in rt.shared.__dict__.items() if k not in _MEMORY})
        rt.views = []


def _reset(group: list, launch: Launch) -> None:
    """Undo what a rolled-back cohort did to its CTAs' own state: barriers, setmaxnreg books, shared memory."""
    for rt in group:
        rt.named = [NamedBarrier(rt.index, b) for b in range(16)]
        rt.setmaxnreg = None
        if launch.make_shared is not None:
            launch.make_shared(rt)


_COUNTERS = ("polls", "blocks", "warps_finished")


def _try_cohort(eng, group: list, launch: Launch):
    """Run `group` as one cohort under the scheduler and commit it: (False, None) if it committed, else
    (True, why) -- run the group per CTA -- or ("error", why) -- run the rest of the launch per CTA; nothing of
    the cohort is committed then."""
    k = len(group)
    ceng = _CohortEng(eng, k, launch.written)
    nwarps = len(group[0].warps)
    cws = [CohortWarp([rt.warps[j] for rt in group], j, ceng, launch.nslots, launch.dtypes) for j in range(nwarps)]
    if launch.make_shared is not None:
        pools = cohort_shared.Pools(group, launch.layout, launch.make_shared)
        for cw in cws:
            cw.pools = pools
    counters = {c: eng.stats[c] for c in _COUNTERS}
    body = launch.cohort_body

    def program(cw):
        for y in body(cw):
            if type(y) is Poll:
                # a while loop's reschedule quantum: each CTA's warp polls here only if it is still in the loop
                if cw.mask is not None and not cw.mask.reshape(k, 32).any(axis=1).all():
                    raise _Split("the CTAs of the cohort reach a while loop's reschedule point at different steps")
                ceng.stats["polls"] += k - 1
            yield y
    failed: bool | str = False
    why = None
    try:
        Scheduler(ceng, cws, max(launch.max_polls // k, 1)).run(program)
        if ceng.footprint.conflict():
            raise _Split("two CTAs of the cohort touch the same global bytes, one writing")
    except ResourceLimit:
        ceng.rollback()
        raise
    except _Split as err:
        failed, why = True, str(err)
    except Exception as err:          # an engine error, a deadlock (or a defect): the per-CTA run reports it
        failed, why = "error", f"{type(err).__name__} in the cohort"
    finally:
        eng.stats["warps_finished"] = counters["warps_finished"]     # counted per CTA below
        for cw in cws:                # a warp and its registers refer to each other: the run keeps gc off
            cw.local = {}
            cw.env = []
            cw.views = []
            cw.pools = None
    if failed:
        ceng.rollback()
        _reset(group, launch)
        eng.stats.update(counters)
        return failed, why
    # commit: each CTA's events in the order its own warps made them (the order the per-CTA scheduler gives
    # them: the cohort's steps are every row's steps), CTA after CTA
    for r, rt in enumerate(group):
        warps = rt.warps
        for rec in ceng.records[r]:
            w = warps[rec[1]]
            if rec[0] == "access":
                _, _, iters, m, site, alloc, off, size, kind, proxy, order, scope = rec
                eng.access(_Row(w, iters, m), site, alloc, off, size, kind, proxy, order, scope)
            elif rec[0] == "sync":
                _, _, iters, m, site, kind, fields = rec
                eng.sync(_Row(w, iters, m), kind, site, **fields)
            else:
                eng.note_uninitialized(rec[2], w, rec[3])
        for j, w in enumerate(warps):
            w.instr = w.instr_seen = cws[j].instr
            w.status = DONE
            eng.stats["warps_finished"] += 1
    return False, None
