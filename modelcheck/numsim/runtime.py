"""Run-time state and the scheduler of NumSim.

Deterministic.  Warps are generators run in a fixed order (CTA, then warp).  A warp
runs until it blocks (yields a `Wait`), polls (yields a `Poll`: a try_wait/test_wait
that returned false, or a while loop's reschedule quantum), or finishes.  Pending
async completions are delivered in FIFO order between scheduling rounds.  A warp
that polls the same site twice with no side effect in between is parked on the
barrier it polls until that barrier changes — it cannot behave differently before.
Deadlock = nothing runnable, no pending completion, and some warp not finished; the
report names each blocked warp and what it awaits.  Budgets exhausted raise
`ResourceLimit` (incomplete), never a deadlock claim; the stop names the wait most polls were at
(`spin_note`), so a spin nothing in the launch ends reads as one, not as slowness.  Woken warps rejoin the queue in the
order their barriers changed (a dict, not a set: run to run the same).  `schedule.py` holds
the variant that follows a forced schedule.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from . import values as V
from .errors import EngineError, ResourceLimit
from .sync import MBarrier, NamedBarrier
from .columns import AccessColumns
from .trace import AccessRecord, SyncEvent
from ..common.ranges import id_ranges

RUNNABLE, BLOCKED, DONE = 0, 1, 2


class Wait:
    """A blocked warp's condition: resumes when `check()` holds; re-checked when `obj` changes (or any of
    `objs`, for the divergent paths of one warp blocked on several objects)."""

    __slots__ = ("obj", "check", "what", "site", "objs")

    def __init__(self, obj, check, what, site=None, objs=None):
        self.obj = obj
        self.check = check
        self.what = what      # text, or a callable making it (only needed for deadlock reports)
        self.site = site      # static op id of the blocking operation
        self.objs = objs      # every object whose change may satisfy `check` (None: just `obj`)

    def watched(self) -> tuple:
        return self.objs if self.objs is not None else (self.obj,)

    def describe(self) -> str:
        return self.what() if callable(self.what) else self.what


class MemoryWatch:
    """What a warp parked in a spin on memory (`cuda.wait_until`) waits for: a change of the bytes it last read
    (`lanes`' words of `alloc` at `offsets`).  No operation touches it; the scheduler re-checks it between rounds
    (`Scheduler.wake_memory`), so a spin nothing can end is a deadlock."""

    __slots__ = ("alloc", "offsets", "lanes", "size", "seen", "what")

    def __init__(self, alloc, offsets, lanes, size: int, what):
        self.alloc = alloc
        self.offsets = offsets
        self.lanes = lanes
        self.size = size
        self.what = what
        self.seen = self._bytes()

    def _bytes(self) -> bytes:
        offs = self.offsets[self.lanes] if type(self.offsets) is np.ndarray else [self.offsets]
        data = self.alloc.data
        return b"".join(data[int(o):int(o) + self.size].tobytes() for o in np.unique(offs))

    def changed(self) -> bool:
        return self._bytes() != self.seen

    def describe(self) -> str:
        return self.what()


class Poll:
    """A poll that found nothing (or a loop's reschedule quantum)."""

    __slots__ = ("obj", "site", "what")

    def __init__(self, obj, site, what=""):
        self.obj = obj
        self.site = site
        self.what = what


class Loop:
    """Per-loop lane bookkeeping for divergent break/continue."""

    __slots__ = ("brk", "cont")

    def __init__(self):
        self.brk = None
        self.cont = None


class Warp:
    FULL = V.FULL     # every lane of the warp's lane vectors (numsim.cohort: every lane of a CTA cohort)
    COHORT = False    # warp j of a CTA cohort (numsim.cohort_rows.CohortWarp)
    __slots__ = ("gid", "cta", "index", "nthreads", "mask", "full_mask", "env", "local", "tid", "tid_yz", "lane",
                 "warp_base", "block_idx", "iters", "rt", "eng", "effects", "loops", "status", "waiting",
                 "last_poll", "groups", "gen", "async_state", "instr", "instr_seen", "async_regs", "exited")

    def __init__(self, gid, cta_rt, index, nthreads, block_dims, eng, nslots):
        self.gid = gid
        self.cta = cta_rt.index
        self.index = index
        self.nthreads = nthreads
        self.full_mask = None if nthreads == 32 else (V.LANES < nthreads)
        self.mask = self.full_mask
        self.env = [None] * nslots
        self.local: dict = {}
        bx = block_dims[0]
        linear = index * 32 + V.LANES
        self.tid = (linear % bx).astype(np.int32)
        self.tid_yz = (((linear // bx) % block_dims[1]).astype(np.int32),
                       (linear // (bx * block_dims[1])).astype(np.int32))
        self.lane = V.LANES
        self.warp_base = index * 32
        self.block_idx = cta_rt.block_idx
        self.iters: list[int] = []
        self.rt = cta_rt
        self.eng = eng
        self.effects = 0
        self.loops: list[Loop] = []
        self.status = RUNNABLE
        self.waiting: Wait | None = None
        self.last_poll = None
        self.groups = None
        self.gen = None
        self.async_state = None
        self.instr = 0
        self.instr_seen = 0       # warp-instructions already charged to the step budget
        self.async_regs = None    # (slot, index) -> pending async results (numsim.registers)
        self.exited = None        # lanes that returned from the kernel (a `return` under a divergent branch)

    def active(self) -> np.ndarray:
        """The active-lane mask as a bool vector."""
        return self.FULL if self.mask is None else self.mask

    def active_count(self) -> int:
        return 32 if self.mask is None else int(V.nnz(self.mask))

    def describe(self) -> str:
        return f"warp {self.gid} (CTA {self.cta}, warp {self.index})"


class CTARuntime:
    """One CTA's shared memory, barriers and warps."""

    def __init__(self, index, block_idx, shared, nthreads):
        self.index = index
        self.block_idx = block_idx
        self.shared = shared
        self.views: list = []
        self.mbarriers: dict[int, MBarrier] = {}
        self.named = [NamedBarrier(index, k) for k in range(16)]
        self.nthreads = nthreads
        self.warps: list[Warp] = []
        self.tmem = None
        self.cluster_rank = 0          # %cluster_ctarank (the launch's cluster shape sets these)
        self.cluster_size = 1
        self.cluster_idx = (0, 0, 0)   # %cluster_ctaid: the CTA's place in its cluster
        self.cluster_id = 0            # linear index of the CTA's cluster in the grid
        self.cluster: list[CTARuntime] = [self]   # the CTAs of this cluster, by rank
        self.cluster_barrier = None    # the cluster's barrier.cluster state (numsim.sync.ClusterBarrier)
        self.exited = False            # every warp of the CTA has finished: its shared memory is gone
        self.setmaxnreg = None         # warp index -> [(count, dir, site)] (numsim.registers_budget)

    def peer(self, rank: int) -> "CTARuntime":
        """The CTA of `rank` in this CTA's cluster."""
        return self.cluster[rank]

    def mbarrier(self, addr: int) -> MBarrier:
        b = self.mbarriers.get(addr)
        if b is None:
            b = self.mbarriers[addr] = MBarrier(self.index, addr)
        return b


class Scheduler:
    """Runs the warps of a launch to completion, deadlock, error or a budget."""

    def __init__(self, eng, warps: list[Warp], max_polls: int):
        self.eng = eng
        self.warps = warps
        self.queue: deque[Warp] = deque(warps)
        self.max_polls = max_polls
        self.polls = 0
        self.parked: dict[int, list[Warp]] = {}
        self.memory_waits: list[Warp] = []     # warps parked on a MemoryWatch (re-checked between rounds)

    def run(self, program) -> None:
        eng = self.eng
        gens = {w.gid: program(w) for w in self.warps}
        queue = self.queue
        while True:
            round_len = len(queue)
            while round_len:
                round_len -= 1
                w = queue.popleft()
                self._step(w, gens[w.gid])
                self._wake_dirty()
            if self.memory_waits and self.wake_memory():
                continue
            if eng.pending:
                eng.current = None      # completions are the async units' doing, not the last warp's
                eng.deliver_pending()
                self._wake_dirty()
                continue
            if queue:
                continue
            blocked = [w for w in self.warps if w.status != DONE]
            if not blocked:
                return
            eng.current = None          # a deadlock is no single warp's error: `blocked` names them all
            self._deadlock(blocked)

    def _deadlock(self, blocked: list[Warp]):
        first = next((w.waiting.site for w in blocked if w.waiting and w.waiting.site is not None), None)
        span = self.eng.sites[first].span if first is not None else None
        raise EngineError("deadlock", _deadlock_message(blocked), span,
                          blocked=[self._blocked_entry(w) for w in blocked])

    @staticmethod
    def _blocked_entry(w: Warp) -> dict:
        return {"warp": w.gid, "cta": w.cta, "warp_in_cta": w.index,
                "awaits": w.waiting.describe() if w.waiting else "?", "state": _state_of(w.waiting),
                "site": w.waiting.site if w.waiting else None, "iters": list(w.iters)}

    def _step(self, w: Warp, gen) -> None:
        eng = self.eng
        eng.current = w
        try:
            y = next(gen)
        except StopIteration:
            w.status = DONE
            eng.stats["warps_finished"] += 1
            eng.checkpoint(w)
            _note_exit(eng, w)
            return
        eng.checkpoint(w)
        if type(y) is Wait:
            if y.check():
                self.queue.append(w)
                return
            w.status = BLOCKED
            w.waiting = y
            for obj in y.watched():
                if type(obj) is MemoryWatch:
                    self.memory_waits.append(w)
                else:
                    eng.waiters.setdefault(id(obj), []).append(w)
            eng.stats["blocks"] += 1
            return
        # a poll
        self.polls += 1
        eng.stats["polls"] += 1
        tally = eng.poll_sites
        tally[y.site] = tally.get(y.site, 0) + 1
        eng.poll_last[w.gid] = y.site
        if self.polls > self.max_polls:
            raise ResourceLimit("polls", f"more than {self.max_polls} polls without completing the run",
                                max_polls=self.max_polls)
        key = (y.site, w.effects)
        if w.last_poll == key and y.obj is not None:
            # same site, no side effect since the last poll: nothing changes until the barrier does
            version = y.obj.version
            w.status = BLOCKED
            w.waiting = Wait(y.obj, lambda o=y.obj, v=version: o.version != v, y.what, y.site)
            eng.waiters.setdefault(id(y.obj), []).append(w)
            w.last_poll = None
            return
        w.last_poll = key
        self.queue.append(w)

    def wake_memory(self) -> bool:
        """Make runnable the warps parked on memory that changed; True if any was."""
        woken: list[Warp] = []
        still: list[Warp] = []
        for w in self.memory_waits:
            if w.status != BLOCKED or w.waiting is None:
                continue
            (woken if w.waiting.check() else still).append(w)
        self.memory_waits = still
        for w in woken:
            w.status = RUNNABLE
            w.waiting = None
            self.queue.append(w)
        return bool(woken)

    def _wake_dirty(self) -> None:
        eng = self.eng
        if not eng.dirty:
            return
        dirty = eng.dirty
        eng.dirty = {}
        for key in dirty:
            waiters = eng.waiters.get(key)
            if not waiters:
                continue
            still = []
            for w in waiters:
                if w.status != BLOCKED:
                    continue        # woken through another object it waited on (a divergent warp's paths)
                if w.waiting is not None and w.waiting.check():
                    w.status = RUNNABLE
                    w.waiting = None
                    self.queue.append(w)
                else:
                    still.append(w)
            if still:
                eng.waiters[key] = still
            else:
                del eng.waiters[key]


def spin_note(eng) -> str:
    """For a run stopped by a budget: the wait most of its polls were at, when most were at one site.  A
    spin on memory has no barrier to park on, so it ends only on a budget; the note tells that apart from a
    run that is merely long (the writer may be another launch, the host, or a release the run never made)."""
    polls = eng.stats["polls"]
    if not polls or not eng.poll_sites:
        return ""
    site, n = max(eng.poll_sites.items(), key=lambda kv: kv[1])
    if n * 2 <= polls:
        return ""
    warps = sum(1 for s in eng.poll_last.values() if s == site)
    where = eng.sites[site]
    span = where.span
    at = f"{span.file.rsplit('/', 1)[-1]}:{span.line}" if span is not None else f"site {site}"
    return (f"; {n:,} of its {polls:,} polls were at {at} ({where.op}), the last poll of {warps} warp(s): "
            f"a wait that had not ended")


def spin_details(eng) -> dict:
    """The polls per site behind `spin_note` (the three busiest), for the report's details."""
    top = sorted(eng.poll_sites.items(), key=lambda kv: -kv[1])[:3]
    return {"polls_at": [{"site": s, "span": str(eng.sites[s].span), "op": eng.sites[s].op, "polls": n,
                          "warps_last_polling": sum(1 for x in eng.poll_last.values() if x == s)}
                         for s, n in top]}


def _note_exit(eng, w: Warp) -> None:
    """A finished warp is a sync event in every launch (Racecheck retires its knowledge; in a cluster launch peers'
    accesses to its CTA's shared memory must happen before the CTA's exit); in a cluster launch the CTA's last warp
    ends its shared memory.  A cohort warp's exit is each of its CTAs' (numsim.cohort records it per CTA)."""
    rt = w.rt
    bar = rt.cluster_barrier
    if bar is not None and bar.arrived:
        bar.try_complete()                # the barrier awaits only non-exited threads
        eng.touch(bar)
    if w.COHORT:
        eng.note_exit_rows(w)
        return
    last = all(x.status == DONE for x in rt.warps)
    if rt.cluster_size > 1:
        rt.exited = last
    # the whole warp exits: its lanes are its full mask, whatever lanes were active last (the same in cohort runs);
    # the mask is put back (a finished warp's lanes still count where barriers look at them)
    mask, w.mask = w.mask, w.full_mask
    eng.sync(w, "warp.exit", None, details={"cta_exited": last})
    w.mask = mask


def _state_of(waiting) -> str | None:
    """The awaited barrier's state (arrivals, transactions), for deadlock reports."""
    describe = getattr(waiting.obj, "describe", None) if waiting is not None else None
    return describe() if callable(describe) else None


def _deadlock_message(blocked: list[Warp]) -> str:
    groups: dict[str, list[int]] = {}
    for w in blocked:
        groups.setdefault(w.waiting.describe() if w.waiting else "?", []).append(w.gid)
    parts = [f"warps {id_ranges(ws)}: {what}" for what, ws in groups.items()]
    return f"execution cannot make progress; blocked warps {id_ranges([w.gid for w in blocked])}; " + "; ".join(parts)


class EngineState:
    """What op implementations reach through `w.eng`: memory, observers, async queue, counters."""

    EMPTY_STATS = {"warp_instructions": 0, "accesses": 0, "lane_accesses": 0, "polls": 0, "blocks": 0,
                   "sync_events": 0, "async_ops": 0, "warps_finished": 0}
    tensor_maps: dict           # address -> bound tensor map; set by Engine.run (absent on a bare state)

    def __init__(self, globals_, sites, observers):
        self.globals = globals_
        self.global_views: dict[int, np.ndarray] = {}
        self.sites = sites
        self.stats = dict(self.EMPTY_STATS)
        self.sync_obs = [o.on_sync for o in observers]
        wanting = [o for o in observers if getattr(o, "wants_accesses", True)]
        self.access_obs = [o.on_access for o in wanting if not getattr(o, "wants_columns", False)]
        sinks = [o.on_access_chunk for o in wanting if getattr(o, "wants_columns", False)]
        self.columns = AccessColumns(sinks, self.stats) if sinks else None
        self.tracing = bool(wanting)
        self.seq = 0
        self.pending: deque = deque()
        self.dirty: dict = {}           # ids of touched objects, in touch order (a set's order varies by address)
        self.waiters: dict[int, list[Warp]] = {}
        self.current: Warp | None = None
        self.meter = None               # the run's budgets (numsim.budget.Meter)
        self.unsupported_reached: set[int] = set()
        self.uninitialized: dict[int, dict] = {}
        self.async_register_hazards: dict[tuple, dict] = {}
        self.async_id = 0
        self.clc = None                 # the launch scheduler of a kernel with try_cancel (ops/clc.py)
        self.map_store = None           # tensor maps held as data in memory (tmap_values.MapStore)
        self.residency = None           # the waves of a grid larger than the GPU holds (numsim.residency)
        self.loop_budget = 1_000_000
        self.clock = 0
        self.poll_sites: dict[int, int] = {}    # site -> polls there (`spin_note`)
        self.poll_last: dict[int, int] = {}     # warp gid -> the site of its last poll

    def checkpoint(self, w: Warp) -> None:
        """Charge the warp's warp-instructions since its last checkpoint to the run's step budget."""
        self.meter.charge(w.instr - w.instr_seen)
        w.instr_seen = w.instr

    def touch(self, obj) -> None:
        self.dirty[id(obj)] = None

    def sync(self, w: Warp, kind: str, site: int, **fields) -> None:
        self.stats["sync_events"] += 1
        if not self.sync_obs:
            return
        self.seq += 1
        # lane masks are never mutated in place once assigned (ops build new arrays), so no copy
        ev = SyncEvent(self.seq, kind, w.cta, w.gid, site, w.mask, tuple(w.iters), **fields)
        for cb in self.sync_obs:
            cb(ev)

    def async_sync(self, cta: int, warp: int, kind: str, site: int, iters, **fields) -> None:
        """A sync event raised by an async completion (not by a running warp)."""
        self.stats["sync_events"] += 1
        if not self.sync_obs:
            return
        self.seq += 1
        ev = SyncEvent(self.seq, kind, cta, warp, site, None, iters, **fields)
        for cb in self.sync_obs:
            cb(ev)

    def access(self, w: Warp | None, site: int, alloc, offsets, size: int, kind: str, proxy="generic",
               order="weak", scope="cta", lanes=None, actor=-1, iters=None, warp=None, cta=None) -> None:
        """Report one memory instruction (`w` None: an async operation, named by warp/cta/iters/lanes)."""
        cols = self.columns
        if cols is not None and not self.access_obs:
            # the columnar fast path: one tuple, counted when the chunk is made
            self.seq += 1
            rows = cols.rows
            if w is not None:
                rows.append((self.seq, w.cta, w.gid, site, tuple(w.iters) if iters is None else iters,
                             w.mask if lanes is None else lanes, alloc, offsets, size, kind, proxy, order, scope,
                             actor))
            else:
                rows.append((self.seq, cta, warp, site, iters, lanes, alloc, offsets, size, kind, proxy, order, scope,
                             actor))
            if len(rows) + cols.bulk_rows >= cols.limit:
                cols.flush()
            return
        if not self.tracing or cols is None:
            self.stats["accesses"] += 1
            if lanes is not None:
                self.stats["lane_accesses"] += int(V.nnz(lanes))
            else:
                assert w is not None                # an async operation (w None) always names its lanes
                self.stats["lane_accesses"] += 32 if w.mask is None else int(V.nnz(w.mask))
        if not self.tracing:
            return
        self.seq += 1
        if w is not None:
            cta, warp = w.cta, w.gid
            iters = tuple(w.iters) if iters is None else iters
            if lanes is None:
                lanes = w.mask
        rec = AccessRecord(self.seq, cta, warp, site, iters, lanes, alloc.space, alloc.id, alloc.name, offsets, size,
                           kind, proxy, order, scope, actor)
        for cb in self.access_obs:
            cb(rec)
        if cols is not None:
            cols.rows.append((self.seq, cta, warp, site, iters, lanes, alloc, offsets, size, kind, proxy, order, scope,
                              actor))
            if cols.full():
                cols.flush()

    def access_runs(self, op, site: int, alloc, starts, sizes, kind: str, proxy: str = "async") -> None:
        """Report an async operation's footprint: byte runs [starts[i], starts[i] + sizes[i]) of `alloc`, one
        record each (one bulk record for column observers), actor and lane the operation's."""
        starts = np.asarray(starts, dtype=np.int64).reshape(-1)
        n = starts.size
        if not self.tracing:
            self.stats["accesses"] += 1
            return
        if not n:
            return
        seq0 = self.seq + 1
        self.seq += n
        cols = self.columns
        if self.access_obs:
            if cols is None:
                self.stats["accesses"] += n
                self.stats["lane_accesses"] += n
            lanes = np.zeros(32, dtype=np.bool_)
            lanes[op.lane] = True
            for i, (s, z) in enumerate(zip(starts.tolist(), np.broadcast_to(sizes, (n,)).tolist())):
                rec = AccessRecord(seq0 + i, op.cta, op.warp, site, op.iters, lanes, alloc.space, alloc.id, alloc.name,
                                   s, z, kind, proxy, "weak", "cta", op.id)
                for cb in self.access_obs:
                    cb(rec)
        if cols is not None:
            cols.bulk(seq0, op.cta, op.warp, site, op.iters, op.lane, alloc, starts, sizes, kind, proxy, op.id)

    def retire(self, op) -> None:
        """Async operation `op` is complete: it makes no more accesses (column observers may forget it)."""
        if self.columns is not None:
            self.columns.retire(op.id)

    def finish_accesses(self) -> None:
        """Hand the last buffered access records to the column observers."""
        if self.columns is not None:
            self.columns.flush()

    def enqueue(self, completion) -> None:
        """Queue an async completion (a callable) for delivery between rounds."""
        self.pending.append(completion)

    def deliver_pending(self) -> None:
        batch = list(self.pending)
        self.pending.clear()
        for completion in batch:
            completion()

    def note_async_register(self, site: int, pending, w: Warp, access: str, register: str) -> None:
        """A register read or written while an async op's result for it is pending (numsim.registers)."""
        entry = self.async_register_hazards.setdefault((site, pending.site, access), {
            "count": 0, "warps": set(), "registers": {}, "op": pending.kind, "wait": pending.wait,
            "warp": w.gid, "cta": w.cta, "iters": list(w.iters), "issue_iters": list(pending.iters)})
        entry["count"] += 1
        entry["warps"].add(w.gid)
        entry["registers"][register] = None

    def note_uninitialized(self, site: int, w: Warp, alloc_name: str) -> None:
        entry = self.uninitialized.setdefault(site, {"count": 0, "warps": set(), "allocation": alloc_name})
        entry["count"] += 1
        entry["warps"].add(w.gid)
