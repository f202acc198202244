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

import numpy as np

import ir

from . import values as V
from .errors import ResourceLimit
from .ops import misc, ptx_math, warp as warp_ops
from .runtime import DONE, Scheduler, Warp

# the cohort size Synccheck and Racecheck run with: the same events as per CTA (below), a production grid's
# Python overhead shared by 64 CTAs (1,600 x 4 warps: 147 s -> 25 s CPU), and a roll-back costs at most 64 CTAs
CHECK_COHORT = 64
ELEMENT_SITES = frozenset({"element load global", "element store global", "element load local",
                           "element store local"})
# ops whose closures compute lane by lane on vectors of any length (reviewed: no 32-lane constant)
NATIVE = frozenset(ptx_math.HANDLERS) | {"tir.reinterpret", "tir.ptr_byte_offset", "ld", "st"}
# warp collectives: run once per CTA row on a 32-lane view of the cohort warp (`_RowView`)
PER_ROW = frozenset(warp_ops.HANDLERS) | {"cuda.__activemask", "tir.tvm_warp_activemask"}
_STMTS = (ir.Evaluate, ir.Store, ir.Let, ir.For, ir.If, ir.Assert, ir.Break, ir.Continue, ir.Return,
          ir.DeclBuffer)
assert misc.HANDLERS.keys() >= {"tir.reinterpret", "tir.ptr_byte_offset", "cuda.__activemask"}


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
    spaces = {i.space for i in program.buffers.values()} - {"global", "local"}
    if spaces:
        return f"{sorted(spaces)[0]} buffers"
    for node in ir.walk(func.body):
        if isinstance(node, ir.Stmt) and not isinstance(node, _STMTS):
            return f"statement {type(node).__name__}"
        if isinstance(node, ir.Unsupported):
            return f"unsupported {node.name}"
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is None or info.name not in NATIVE | PER_ROW:
                return f"operation {node.op}"
            if info.name in ("ld", "st") and info.quals.get("space", "") not in ("", "global"):
                return f"operation {node.op}"
    other = sorted({s.op for s in program.sites} - ELEMENT_SITES
                   - {s.op for s in program.sites if not s.op.startswith("element ")})
    if other:
        return f"operation {other[0]}"
    return None


def wrap_op(info, fn, blocking: bool):
    """The cohort program's op closure: warp collectives run per CTA row (`CohortWarp.each_row`)."""
    if info.name not in PER_ROW or blocking:
        return fn

    def run(w):
        if type(w) is CohortWarp:
            return w.each_row(fn)
        return fn(w)
    return run


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

    def _record(self, r, w, site, alloc, m, off, size, kind, proxy, order, scope) -> None:
        alloc = getattr(alloc, "real", alloc)
        self.records[r].append(("access", w.index, tuple(w.iters), m, site, alloc, off, size, kind, proxy, order,
                                scope))
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
        m = self.w.mask
        return None if m is None else m.reshape(-1, 32).any(axis=1)

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


class CohortWarp(Warp):
    """Warp `index` of k CTAs at once: lane vectors of 32k elements, row r = CTA r."""

    __slots__ = ("FULL", "row_full", "rows", "dtypes")

    def __init__(self, rows: list, index: int, cohort_eng: _CohortEng, nslots: int, dtypes: dict):
        first = rows[0]
        super().__init__(first.gid, first.rt, index, first.nthreads, (1, 1, 1), cohort_eng, nslots)
        k = len(rows)
        self.rows = rows                               # the per-CTA warps, by row
        self.dtypes = dtypes                           # local slot -> dtype name
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
        self.local = _CohortLocal(self)

    def each_row(self, fn):
        """`fn` (a non-blocking op closure) once per CTA row that has active lanes; the rows' results as one
        cohort value (uniform when every row gave the same uniform value)."""
        n = self.FULL.size
        owned: dict = {}
        results = []
        for r, base in enumerate(self.rows):
            lo = 32 * r
            m = None if self.mask is None else self.mask[lo:lo + 32]
            if m is not None and not m.any():
                results.append(None)
                continue
            if m is not None and self.row_full[r] and m.all():
                m = None
            v = Warp.__new__(_RowView)
            v.row, v.gid, v.cta, v.index, v.nthreads = r, base.gid, base.cta, base.index, base.nthreads
            v.full_mask, v.mask = base.full_mask, m
            v.exited = None if self.exited is None else self.exited[lo:lo + 32]
            v.env = _RowEnv(self.env, lo, n)
            v.local = _RowLocal(self.local, lo, n, owned, self.dtypes)
            v.tid, v.tid_yz, v.lane, v.warp_base = base.tid, base.tid_yz, base.lane, base.warp_base
            v.block_idx, v.rt, v.eng = base.block_idx, base.rt, self.eng
            v.iters, v.loops, v.effects, v.instr, v.instr_seen = self.iters, [], 0, 0, 0
            v.async_regs, v.groups, v.async_state, v.last_poll, v.waiting, v.gen = None, None, None, None, None, None
            results.append(fn(v))
            self.effects += v.effects
        for _, rows, regs, i, old_none in owned.values():
            regs.note_write(i, rows, old_none)
        return _assemble(results, n)


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


def run_cohorts(eng, ctas: list, body, cohort_body, size: int, max_polls: int, nslots: int, written: set,
                dtypes: dict) -> dict:
    """Run the launch's CTAs in cohorts of up to `size` consecutive CTAs (`cohort_body`: the program compiled
    with `wrap_op`); a cohort that cannot commit runs per CTA (`body`).  Returns counts for the stats."""
    stats: dict = {"cohort_size": size, "cohorts": 0, "ctas_in_cohorts": 0, "split": 0}
    reasons: dict[str, int] = {}
    stats["split_reasons"] = reasons
    if not all(a.all_written for a in eng.globals.allocs.values()):
        size = 1          # uninitialized global memory: its read notes name warps (see `_CohortEng`)
    for start in range(0, len(ctas), size):
        group = ctas[start:start + size]
        why = _try_cohort(eng, group, cohort_body, nslots, written, dtypes) if len(group) > 1 else "a single CTA"
        if why is None:
            stats["cohorts"] += 1
            stats["ctas_in_cohorts"] += len(group)
            continue
        stats["split"] += 1
        reasons[why] = reasons.get(why, 0) + 1
        Scheduler(eng, [w for rt in group for w in rt.warps], max_polls).run(body)
    return stats


def _try_cohort(eng, group: list, body, nslots: int, written: set, dtypes: dict) -> str | None:
    """Run `group` as one cohort and commit it; None if it committed, else why not (nothing committed)."""
    k = len(group)
    ceng = _CohortEng(eng, k, written)
    nwarps = len(group[0].warps)
    cws = []
    try:
        for j in range(nwarps):
            cw = CohortWarp([rt.warps[j] for rt in group], j, ceng, nslots, dtypes)
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
    finally:
        for cw in cws:                # a warp and its registers refer to each other: the run keeps gc off
            cw.local = {}
            cw.env = []
    # commit: the events CTA by CTA, warp by warp, as the per-CTA engine delivers them
    for r, rt in enumerate(group):
        by_warp: list[list] = [[] for _ in range(nwarps)]
        for rec in ceng.records[r]:
            by_warp[rec[1]].append(rec)
        for j, w in enumerate(rt.warps):
            for rec in by_warp[j]:
                if rec[0] == "access":
                    _, _, iters, m, site, alloc, off, size, kind, proxy, order, scope = rec
                    eng.access(_Row(w, iters, m), site, alloc, off, size, kind, proxy, order, scope)
                else:
                    _, _, iters, m, site, kind, fields = rec
                    eng.sync(_Row(w, iters, m), kind, site, **fields)
            w.instr = w.instr_seen = cws[j].instr
            w.status = DONE
            eng.stats["warps_finished"] += 1
    return None
