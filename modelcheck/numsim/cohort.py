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
  global, local and shared buffers, the register arithmetic of ops/ptx_math, ops/cuda_float and ops/ptx_bits (`NATIVE`:
  lane-wise on vectors of any length), ld/st of global and shared memory, the griddepcontrol pair (a no-op per CTA too:
  ops/misc), while loops, the CTA barriers (`BARRIERS`: bar.sync, barrier.sync, cta_sync, warpgroup_sync,
  tvm_storage_sync), and per-CTA operations that run once per CTA row on a 32-lane view of the cohort warp
  (`PER_ROW`, cohort_rows._RowView: the row's slices of the variables and registers, its own CTA's ids and
  state, its own events): warp collectives, setmaxnreg.  Shared memory is per row: each row's CTA has its own
  pool, the rows' pools are rows of one array (cohort_shared) so a shared access is one gather/scatter, and
  what that does not cover runs per row, as do atomics on the CTA's shared memory (`ROW_ATOMICS`: its own
  pool; global atomics may order CTAs).  Ampere cp.async runs per row too, its completions delivered by the
  cohort's scheduler (numsim.cohort_async).  Anything else -- mbarriers, TMA, tcgen05, global atomics,
  fences, clusters, cluster launch control, forced schedules -- runs the launch per CTA, as before.
- The scheduler.  A cohort's warps run under runtime.Scheduler itself, as a CTA's warps do.  A cohort warp
  yields only where every row's warp yields in the per-CTA run, and in the same way, else the cohort splits:
  at a barrier every row arrives at its own CTA's barrier, and the cohort warp blocks (or goes on) only if
  every row's warp would (`CohortWarp.each_row_blocking`; a row whose lanes are elsewhere, or that would pass
  while another waits, splits); at a while loop's reschedule quantum (a Poll every 64 iterations) every row
  must still be in the loop (`_try_cohort`).  Divergent paths that block or poll split (control._paths:
  rows may diverge where no CTA does).  So each row's warps take the steps, in the order, that its CTA's
  warps take under the per-CTA scheduler -- whose order within one CTA does not depend on other CTAs (its
  barriers wake only its own warps) -- and the row's events, kept in the order they happen, are its CTA's.
- Global memory: every store through a global view is undo-logged (`_LoggedView`); `_Footprint` records
  every global access to a buffer the kernel writes, and two CTAs of a cohort touching one byte, one
  writing, roll it back (their lock-step order is not the per-CTA one).  Uninitialized global memory runs
  per CTA (cohorts of one).  A register no row wrote is read as per CTA and noted per row; one only some
  rows wrote splits (`_CohortRegs`).
- A cohort that cannot commit (`_Split`) rolls back its stores, resets its CTAs' barriers, setmaxnreg books
  and shared memory, and its CTAs run again one at a time, each as a one-row cohort (per CTA if even that
  splits).  An engine error or a deadlock in a cohort rolls it back the same way, and the rest of the launch
  from the first CTA that fails alone runs per CTA, so the per-CTA engine reports it: a deadlock names the
  same warps, with every other CTA finished, as in a per-CTA run.  A non-deadlock error stops the per-CTA
  run with the resident CTAs part-way through their steps (the scheduler's interleaving); in cohorts the
  CTAs before the failing one have finished: the error is the same, advisories gathered along the way
  (uninitialized reads) and the partial outputs may differ.  A budget (ResourceLimit) ends the run as
  incomplete, as it would per CTA, but not at the same point.  The step budget is charged one step per
  cohort instruction (what the run costs us: one closure call over 32k lanes; numsim.budget), the stats count
  k warp-instructions.  Budgets never turn a verdict into clean or error.
- Delivery: a committed cohort's records go to observers CTA by CTA, each CTA's in its own order, through
  the engine's own `access`/`sync`/`note_uninitialized`.  Sequence numbers follow delivery: within a CTA
  the order is the per-CTA run's; across CTAs it is cohort by cohort, where the per-CTA scheduler
  interleaves resident CTAs round by round (kernels that never block or poll: CTA by CTA in both, the
  whole stream identical).  Representation details: an offset uniform per CTA may arrive as a vector of
  equal values, a full row's lane mask as None -- the same accesses to every consumer (tests normalize).
- Residency: with waves and shared memory, a cohort's CTAs hold their shared memory together: the cohort
  size is at most the CTAs resident at once, their pools are made when the cohort starts and released
  (`_release`, as numsim.residency does at a CTA's exit) once it committed.

Happens-before, not interleaving: the checkers order two CTAs' events only through sync.  Synccheck's phase A
checks each barrier's protocol in run order, but the cohort's barriers are per CTA (named barriers), so only
each CTA's own order matters; its causality clocks and the explorer's fixed per-warp programs are per warp.
Racecheck merges access records and sync events by sequence number (each CTA's kept in order) and orders
pairs by vector clocks; a barrier joins one CTA's warps only, and nothing in the subset is gpu-scoped
(atomics, fences and polling on global memory run per CTA), so two CTAs' accesses are never ordered: a
conflicting pair is a race in either interleaving.  Inside a cohort the footprint check rolls such pairs
back; between cohorts the pair is reported in both runs (what a CTA reads after a race may differ).
"""
from __future__ import annotations

from collections import deque

import numpy as np

import ir

from . import cohort_async, cohort_shared
from .cohort_async import ASYNC_PER_ROW, ASYNC_WAITS, MBARRIER_PER_ROW, MBARRIER_WAITS, AsyncRows
from .cohort_footprint import Footprint
from .cohort_rows import CohortWarp, _RowView, _Split
from .errors import ResourceLimit
from .ops import barrier, cuda_float, misc, ptx_bits, ptx_math, warp as warp_ops
from .residency import _MEMORY, ReleasedShared
from .runtime import DONE, Poll, Scheduler, Warp
from .sync import NamedBarrier
from .values import nnz

# the cohort size Synccheck and Racecheck run with: the same events as per CTA (below), a production grid's
# Python overhead shared by 64 CTAs (1,600 x 4 warps: 147 s -> 25 s CPU), and a roll-back costs at most 64 CTAs
CHECK_COHORT = 64
ELEMENT_SITES = frozenset({"element load global", "element store global", "element load local",
                           "element store local", "element load shared", "element store shared"})
# thread indexes from the warp's lanes, index and warp_base (ops/misc `_index`): a cohort warp's are the CTA's, tiled
INDEXES = frozenset({"cuda.lane_id", "cuda.warp_id", "cuda.thread_rank", "cuda.warpgroup_id", "cuda.warp_in_warpgroup",
                     "cuda.thread_in_warpgroup"})
# atomics on the CTA's own shared memory run per CTA row (its pool); global ones may order CTAs: per CTA
ROW_ATOMICS = ("atom", "red")
# ops whose closures compute lane by lane on vectors of any length (reviewed: no 32-lane constant); the
# griddepcontrol pair is a no-op in NumSim (ops/misc: a launch's predecessor is taken as complete), per CTA too
NATIVE = frozenset(ptx_math.HANDLERS) | frozenset(cuda_float.HANDLERS) | frozenset(ptx_bits.HANDLERS) | INDEXES | {
    "tir.reinterpret", "tir.ptr_byte_offset", "ld", "st", "griddepcontrol.wait", "griddepcontrol.launch_dependents"}
# run once per CTA row on a 32-lane view of the cohort warp (`_RowView`): the warp collectives, and setmaxnreg
# (its bookkeeping is the CTA's)
PER_ROW = (frozenset(warp_ops.HANDLERS) | {"cuda.__activemask", "tir.tvm_warp_activemask", "setmaxnreg"}
           | ASYNC_PER_ROW | MBARRIER_PER_ROW)
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
    stored = None
    for node in ir.walk(func.body):
        if isinstance(node, ir.Stmt) and not isinstance(node, _STMTS):
            return f"statement {type(node).__name__}"
        if isinstance(node, ir.While) and _polls_global(node, stored if stored is not None else
                                                        (stored := _stored_globals(func, program)), program):
            return "a while loop reading global memory the kernel writes (it may wait for another CTA)"
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is None or not info.supported:
                continue        # outside the modeled set: reaching it stops the run as it does per CTA
            if info.name in ROW_ATOMICS:
                if info.quals.get("space", "") not in SPACES[2:]:
                    return f"operation {node.op}"
                continue
            if info.name not in NATIVE | PER_ROW | BARRIERS | ASYNC_WAITS | MBARRIER_WAITS:
                return f"operation {node.op}"
            if info.name in ("ld", "st") and info.quals.get("space", "") not in SPACES:
                return f"operation {node.op}"
    other = sorted({s.op for s in program.sites} - ELEMENT_SITES
                   - {s.op for s in program.sites if not s.op.startswith("element ")})
    if other:
        return f"operation {other[0]}"
    return None


def _polls_global(loop: ir.While, stored: set, program) -> bool:
    """Does the loop read a global buffer the kernel may store to (`stored`)?  It may spin until another CTA
    writes it, which a cohort would not let happen (it runs its CTAs before later ones); the per-CTA run
    interleaves them."""
    reads, _ = _global_reads(loop, program)
    return bool(reads & stored)


def _global_reads(node, program) -> tuple[set, set]:
    """(global allocations `node` reads: element loads and ld addresses; ids of those ld address nodes)."""
    reads: set = set()
    seen: set = set()
    for n in ir.walk(node):
        if isinstance(n, ir.Load):
            info = program.buffers.get(n.buffer)
            if info is not None and info.space == "global":
                reads.add(info.alloc)
        elif isinstance(n, ir.OpCall) and n.op.startswith("ld."):
            for o in n.operands:
                for a in ir.walk(o):
                    if isinstance(a, ir.Address):
                        seen.add(id(a))
                        info = program.buffers.get(a.buffer)
                        if info is not None and info.space == "global":
                            reads.add(info.alloc)
    return reads, seen


def _stored_globals(func: ir.PrimFunc, program) -> set:
    """Global allocations the kernel may store to: element stores, and any address of one not just loaded
    from (st, atomics, async copies, pointers)."""
    _, loaded = _global_reads(func.body, program)
    out = set()
    for n in ir.walk(func.body):
        if isinstance(n, (ir.Store, ir.Address)) and id(n) not in loaded:
            info = program.buffers.get(n.buffer)
            if info is not None and info.space == "global":
                out.add(info.alloc)
    return out


def wrap_op(info, fn, blocking: bool):
    """The cohort program's op closure: per-CTA operations run per CTA row (`CohortWarp.each_row`), CTA
    barriers for every row at once (`CohortWarp.each_row_blocking`)."""
    if blocking:
        if info.name not in BARRIERS and info.name not in ASYNC_WAITS and info.name not in MBARRIER_WAITS:
            return fn

        whole_gen = getattr(fn, "cohort", None)     # the op's own path for a whole cohort warp (cohort_mbarrier)

        def run_gen(w):
            if type(w) is CohortWarp:
                if whole_gen is not None:
                    return (yield from whole_gen(w, fn))
                return (yield from w.each_row_blocking(fn))
            return (yield from fn(w))
        return run_gen
    if info.name not in PER_ROW and not (info.name in ("ld", "st", *ROW_ATOMICS)
                                         and info.quals.get("space") in SPACES[2:]):
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


class _CohortEng(AsyncRows):
    """What a cohort warp reaches through `w.eng`: the real state's counters and budgets, logged global memory,
    per-row buffers of the events, and async completions (cohort_async).  Anything else is outside the subset:
    `_Split`."""

    def __init__(self, eng, group: list, written: set):
        self.real = eng
        self.k = k = len(group)
        self.row_of = {rt.index: r for r, rt in enumerate(group)}
        self.stats = eng.stats
        self.poll_sites, self.poll_last = eng.poll_sites, eng.poll_last    # the run's poll tally (spin_note)
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
        self.cohort_warps: list = []             # the cohort's warps (`note_exit_rows` asks whether all finished)
        self.footprint = Footprint(k)
        # what runtime.Scheduler reads and writes of its engine state
        self.sites = eng.sites
        self.pending: deque = deque()
        self.sync_obs = eng.sync_obs
        # the launch's tensor maps, pointing at the logged global memory (a TMA store rolls back); maps held in
        # memory (`map_store`) are outside the subset
        self.tensor_maps = {a: _logged_map(m, self.globals) for a, m in getattr(eng, "tensor_maps", {}).items()}
        if getattr(eng, "map_store", None) is None:
            self.map_store = None
        self.alias = {}                          # id(row object) -> the RowsObj watching it (cohort_async)
        self.composites = {}
        self.dirty = {}
        self.waiters: dict = {}
        self.current = None
        self.uninit_notes = 0                    # reads of unwritten bytes noted (cohort_mbarrier)

    def __getattr__(self, name):
        raise _Split(f"engine state {name!r}")

    def checkpoint(self, w) -> None:
        self.real.meter.charge(w.instr - w.instr_seen)      # one step per cohort step (numsim.budget)
        w.instr_seen = w.instr

    def note_uninitialized(self, site, w, name) -> None:
        """A read of never-written bytes, noted for each CTA row that executes it (global memory is all written
        in a cohort run, see `run_cohorts`; a register no row wrote is None, one only some rows wrote splits)."""
        self.uninit_notes += 1
        if type(w) is _RowView:
            self.records[w.row].append(("uninit", w.index, site, name))
            return
        for r, m in enumerate(w.row_masks()):
            if m is not False:
                self.records[r].append(("uninit", w.index, site, name))

    def access(self, w, site, alloc, offsets, size, kind, proxy="generic", order="weak", scope="cta", lanes=None,
               actor=-1, iters=None, warp=None, cta=None) -> None:
        if w is None:
            self.async_access(site, alloc, offsets, size, kind, proxy, order, scope, lanes, actor, iters, warp, cta)
            return
        if lanes is not None or actor != -1:
            raise _Split("an access naming its own lanes or actor")
        if type(w) is _RowView:
            self._record(w.row, w, site, alloc, w.mask, offsets, size, kind, proxy, order, scope)
            return
        # the whole cohort warp: one record per row with active lanes, the footprint once for every row
        vec = type(offsets) is np.ndarray and offsets.ndim
        real = getattr(alloc, "real", alloc)
        iters = tuple(w.iters)
        for r, m in enumerate(w.row_masks()):
            if m is not False:
                self.records[r].append(("access", w.index, iters, m, site, real,
                                        offsets[32 * r:32 * r + 32] if vec else offsets, size, kind, proxy, order,
                                        scope))
        if real.space == "shared":
            raise _Split("a shared-memory access of the whole cohort")
        if real.id not in self.written:
            if kind != "read":
                raise _Split(f"a store to {real.name}, which the compiler did not list as written")
        else:
            self.footprint.add_lanes(real, w.lane_row, w.mask, offsets, size, kind != "read")

    def access_rows(self, w, site, allocs: list, offsets, size, kind, order="weak", scope="cta") -> None:
        """A shared-memory access of a whole cohort warp: one record per row with active lanes, naming the row's
        own allocation (`allocs`, by row); its CTA's bytes, which no other row reaches."""
        vec = type(offsets) is np.ndarray
        iters = tuple(w.iters)
        for r, m in enumerate(w.row_masks()):
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

    def note_exit_rows(self, w) -> None:
        """Cohort warp `w` finished: each CTA's warp exits there, in its CTA's order (runtime._note_exit)."""
        last = all(x.status == DONE for x in self.cohort_warps)
        iters = tuple(w.iters)
        for r in range(self.k):
            # (lanes None: the CTA's warp's own mask, its full mask, as a per-CTA warp's mask is when it finishes)
            self.records[r].append(("sync", w.index, iters, None, None, "warp.exit", {"details": {"cta_exited": last}}))

    def rollback(self) -> None:
        for plain, key, old in reversed(self.log):
            plain[key] = old
        self.log.clear()


def _logged_map(bound, globals_):
    """A copy of a bound tensor map whose allocation is the cohort's logged view of it."""
    alloc = getattr(bound, "alloc", None)
    proxy = None if alloc is None else globals_._by_id.get(alloc.id)
    if proxy is None:
        return bound
    out = object.__new__(type(bound))
    for name in type(bound).__slots__:
        setattr(out, name, getattr(bound, name))
    out.alloc = proxy
    return out


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
        rt.mbarriers = {}
        for w in rt.warps:
            w.groups = None             # the rows' async groups (cohort_rows: a row view shares its warp's)
        if launch.make_shared is not None:
            launch.make_shared(rt)


_COUNTERS = ("polls", "blocks", "warps_finished", "async_ops", "accesses", "lane_accesses")


def _try_cohort(eng, group: list, launch: Launch):
    """Run `group` as one cohort under the scheduler and commit it: (False, None) if it committed, else
    (True, why) -- run the group per CTA -- or ("error", why) -- run the rest of the launch per CTA; nothing of
    the cohort is committed then."""
    k = len(group)
    ceng = _CohortEng(eng, group, launch.written)
    nwarps = len(group[0].warps)
    cws = [CohortWarp([rt.warps[j] for rt in group], j, ceng, launch.nslots, launch.dtypes) for j in range(nwarps)]
    ceng.cohort_warps = cws
    if launch.make_shared is not None:
        pools = cohort_shared.Pools(group, launch.layout, launch.make_shared)
        for cw in cws:
            cw.pools = pools  # type: ignore[assignment]
    counters = {c: eng.stats[c] for c in _COUNTERS}
    async_id = eng.async_id         # a rolled-back cohort's operations never happened: their ids are drawn again
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
        Scheduler(ceng, list[Warp](cws), max(launch.max_polls // k, 1)).run(program)
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
        # the run keeps gc off: break the cycles (a warp and its registers; the engine's current warp and its
        # waiters) so the cohort's undo log, footprint and records go with it (else ~0.8 MB per CTA stays)
        ceng.current = None
        ceng.waiters = {}
        ceng.cohort_warps = []
        for cw in cws:
            cw.local = {}
            cw.env = []
            cw.views = []
            cw.pools = None
    if failed:
        ceng.rollback()
        _reset(group, launch)
        eng.stats.update(counters)
        eng.async_id = async_id
        return failed, why
    # commit: each CTA's events in the order its own warps made them (the order the per-CTA scheduler gives
    # them: the cohort's steps are every row's steps), CTA after CTA
    quiet = _counts_only(eng)
    count = nnz
    accesses = lane_accesses = 0
    row = _Row.__new__(_Row)
    for r, rt in enumerate(group):
        warps = rt.warps
        for rec in ceng.records[r]:
            tag = rec[0]        # the warps' own events first: most records (millions in a production grid)
            if tag == "access":
                if quiet:
                    m = rec[3]
                    if m is None:
                        m = warps[rec[1]].mask
                    accesses += 1
                    lane_accesses += 32 if m is None else int(count(m))
                    continue
                _, wi, iters, m, site, alloc, off, size, kind, proxy, order, scope = rec
                eng.access(_Row(warps[wi], iters, m), site, alloc, off, size, kind, proxy, order, scope)
            elif tag == "sync":
                _, wi, iters, m, site, kind, fields = rec
                w0 = warps[wi]      # `_Row(w0, iters, m)`, one object for all: `eng.sync` copies its fields
                row.cta, row.gid, row.iters, row.mask = w0.cta, w0.gid, iters, w0.mask if m is None else m
                eng.sync(row, kind, site, **fields)
            elif quiet and tag == "async":      # an async op's access (cohort_async.deliver): counted alike
                accesses += 1
                lane_accesses += int(count(rec[5]))
            elif not cohort_async.deliver(eng, rec):
                eng.note_uninitialized(rec[2], warps[rec[1]], rec[3])
        for j, w in enumerate(warps):
            w.instr = w.instr_seen = cws[j].instr
            w.status = DONE
            eng.stats["warps_finished"] += 1
    eng.stats["accesses"] += accesses
    eng.stats["lane_accesses"] += lane_accesses
    return False, None


def _counts_only(eng) -> bool:
    """No observer takes access records: `eng.access` would only count them (the commit counts them itself)."""
    return not eng.tracing

