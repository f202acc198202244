"""Forced schedules: NumSim's scheduler made to follow a given order of steps.

A `Schedule` lists `Step`s in NumSim's own vocabulary -- the n-th sync event of one kind a
warp raises at a static site, the n-th memory access record of a warp (or of an async
operation it issued) at a site, a warp reaching an operation (and being held there), the
delivery of an async completion to a barrier -- plus the operations and completions to hold
back until every step has happened.  NumSim does not know where a schedule comes from (a
checker's witness, a race pair reversed); it only follows it.

How: the kernel is compiled with a hold in front of each statement holding a site that a
step or a held key names (a default run compiles no holds, so it keeps its speed).  Before
such a statement runs, the `Gate` says whether the warp may go on: an operation a step names
runs only when every earlier step has happened; a held operation only after the last step.
The gate observes sync events and access records and consumes the steps they match (one
that happens before its turn is recorded as out of order).  A completion is delivered when
a step names it (by its issue, or by barrier and bytes on a scheduled barrier); completions
held back wait for the last step.  Between steps the default scheduler runs whatever is
free.  When nothing can run: if every unfinished warp waits on a barrier, the schedule led
into a deadlock (reported as one); if the gate holds a warp or a completion, the run stops
with `ScheduleStuck` (verdict incomplete), naming the held and blocked warps and the step it
waited for.  A warp spinning on memory (a while loop polling, SPIN_POLLS times with nothing
observable changing) is parked meanwhile, so a stuck schedule is found without spending the
poll budget; once the schedule is done the default rules apply again.

Occurrences count the events of one (warp, site, event) in execution order, skipping the
events async completions raise (`is_async_event`); an async operation's access takes the
occurrence of its issue.  The planner that builds a schedule from a default run counts the
same way (`occurrences`).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .runtime import BLOCKED, DONE, RUNNABLE, EngineState, MemoryWatch, Scheduler, Wait
from .trace import Observer

# a warp polling memory in a loop this many times in a row while nothing visible changes is parked
SPIN_POLLS = 8
# a resume of a bar.sync happens inside the operation that contributed: it is never held before
RESUME_EVENTS = frozenset({"bar.wait"})


def is_async_event(ev) -> bool:
    """A sync event raised by an async completion (not by a warp executing an operation)."""
    return ev.kind == "async.complete" or bool(ev.details.get("async"))


def access_event(rec) -> str:
    """The event name of an access record: its kind, prefixed by "async " for an async operation's."""
    return rec.kind if rec.actor < 0 else "async " + rec.kind


def occurrences(events, accesses=()) -> dict[int, tuple[int, int, str, int]]:
    """For a default run's trace: id(event or record) -> (warp, site, event, occurrence).  An async
    operation's access takes the occurrence of the operation's issue: when async operations complete
    depends on the schedule, their order of issue does not."""
    counts: dict = {}
    issued: dict = {}
    out: dict[int, tuple[int, int, str, int]] = {}
    for ev in events:
        if is_async_event(ev):
            continue
        k = (ev.warp, ev.site, ev.kind)
        n = counts.get(k, 0)
        counts[k] = n + 1
        out[id(ev)] = k + (n,)
        if ev.kind == "async.issue":
            issued[ev.details.get("op")] = n
    for rec in accesses:
        k = (rec.warp, rec.site, access_event(rec))
        if rec.actor >= 0:
            out[id(rec)] = k + (issued.get(rec.actor, -1),)
            continue
        n = counts.get(k, 0)
        counts[k] = n + 1
        out[id(rec)] = k + (n,)
    return out


@dataclass(frozen=True)
class Step:
    """One step: kind sync | access | reach (warp, site, event, occurrence), or complete: the delivery of
    the completion of one async issue (warp, site, "async.issue", occurrence), or of any completion of
    `tx` bytes (0: a deferred arrival) on `barrier` (warp None)."""

    kind: str
    warp: int | None = None
    site: int | None = None
    event: str = ""               # sync event kind, access event ("read", "async write", ...)
    occurrence: int = 0
    barrier: tuple | None = None  # complete: the barrier the completion lands on
    tx: int = 0                   # complete: its bytes (0: a deferred arrival)
    label: str = field(default="", compare=False)

    @property
    def key(self) -> tuple:
        return (self.warp, self.site, self.event, self.occurrence)

    def describe(self) -> str:
        if self.label:
            return self.label
        if self.kind == "complete":
            if self.warp is not None:
                return f"deliver the completion issued by warp {self.warp} at site {self.site} (#{self.occurrence})"
            return f"deliver a completion ({self.tx} B) on {self.barrier}"
        verb = {"reach": "reaches", "access": "accesses"}.get(self.kind, "runs")
        return f"warp {self.warp} {verb} site {self.site} ({self.event} #{self.occurrence})"


@dataclass(frozen=True)
class Schedule:
    steps: tuple
    held: frozenset = frozenset()      # (warp, site, event, occurrence) keys held until the last step
    barriers: frozenset = frozenset()  # completions on these barriers are delivered by steps only
    held_completions: frozenset = frozenset()   # issue keys whose completions wait for the last step

    def sites(self) -> frozenset:
        """Static sites that need a hold in front of them."""
        out = {s.site for s in self.steps if s.kind in ("sync", "access", "reach") and s.event not in RESUME_EVENTS
               and not s.event.startswith("async ")}
        out.update(k[1] for k in self.held)
        return frozenset(out)


class ScheduleStuck(Exception):
    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details


class Gate(Observer):
    """Follows a schedule: says which held operations may run, consumes steps as events happen."""

    def __init__(self, schedule: Schedule):
        self.schedule = schedule
        self.steps = schedule.steps
        self.done = [False] * len(self.steps)
        self.at: list[int | None] = [None] * len(self.steps)   # per step: how many steps were done when it happened
        self.pos = 0
        self.finished = not self.steps
        self.index: dict = {}
        self.reach: dict = {}
        self.issues: dict = {}      # complete steps naming one completion by its async issue event
        for k, s in enumerate(self.steps):
            if s.kind in ("sync", "access"):
                self.index.setdefault(s.key, k)
            elif s.kind == "reach":
                self.reach.setdefault(s.key, k)
            elif s.kind == "complete" and s.warp is not None:
                self.issues.setdefault(s.key, k)
        self.held = schedule.held
        self.barriers = schedule.barriers
        self.held_completions = schedule.held_completions
        entry: dict = {}          # site -> the events an operation there raises before it could block
        for s in self.steps:
            if s.kind in ("sync", "access", "reach") and s.event not in RESUME_EVENTS and \
                    not s.event.startswith("async "):
                entry.setdefault(s.site, set()).add(s.event)
        for _w, site, event, _ in self.held:
            if event not in RESUME_EVENTS and not event.startswith("async "):
                entry.setdefault(site, set()).add(event)
        self.entries: dict[int, tuple] = {site: tuple(sorted(evs)) for site, evs in entry.items()}
        self.counts: dict = {}
        self.writes = 0       # write/rmw records seen: progress another warp's spinning loop may observe
        self.last_issue = None
        self.issued: dict = {}    # async operation id -> the occurrence of its issue event
        self.delivering = False
        self.out_of_order: list = []
        self.abandoned_at: int | None = None
        self.eng: GatedState | None = None

    # ------------------------------------------------------------------ holds
    def allows(self, w, sites) -> bool:
        """May warp `w` run the statement holding these (gated) sites now?"""
        if self.finished:
            return True
        gid = w.gid
        counts = self.counts
        mine = []
        for site in sites:
            for event in self.entries.get(site, ()):
                key = (gid, site, event, counts.get((gid, site, event), 0))
                k = self.reach.get(key)
                if k is not None and k == self.pos:
                    self._consume(k)
                    if self.finished:
                        return True
                k = self.index.get(key)
                if k is not None:
                    mine.append(k)
                elif key in self.held:
                    return False
        if not mine:
            return True
        # due when its steps are the next ones (one statement may hold several consecutive steps)
        mine = sorted(set(mine))
        return mine == list(range(self.pos, self.pos + len(mine)))

    def describe_hold(self, w, sites) -> str:
        return f"held by the forced schedule until step {self.pos + 1}: {self.current()}"

    def current(self) -> str:
        return self.steps[self.pos].describe() if self.pos < len(self.steps) else "(schedule done)"

    # ------------------------------------------------------------------ observation
    def on_sync(self, ev) -> None:
        if self.delivering or is_async_event(ev):
            return
        k = (ev.warp, ev.site, ev.kind)
        if ev.kind == "async.issue":
            self.last_issue = ev
            self.issued[ev.details.get("op")] = self.counts.get(k, 0)
        self._count(k)

    def on_access(self, rec) -> None:
        if rec.kind != "read":
            self.writes += 1
        k = (rec.warp, rec.site, access_event(rec))
        if rec.actor >= 0:      # an async operation's access: named by its issue (see `occurrences`)
            self._consume_key(k + (self.issued.get(rec.actor, -1),))
        else:
            self._count(k)

    def _count(self, k) -> None:
        n = self.counts.get(k, 0)
        self.counts[k] = n + 1
        self._consume_key(k + (n,))

    def _consume_key(self, key) -> None:
        if self.finished:
            return
        step = self.index.get(key)
        if step is not None and not self.done[step]:
            if step != self.pos and self.steps[step].event not in RESUME_EVENTS:
                self.out_of_order.append(step)
            self._consume(step)

    def _consume(self, k: int) -> None:
        self.done[k] = True
        self.at[k] = sum(self.done) - 1
        while self.pos < len(self.steps) and self.done[self.pos]:
            self.pos += 1
        if self.pos == len(self.steps):
            self.finished = True
        if self.eng is not None:
            self.eng.touch(self)

    # ------------------------------------------------------------------ completions
    def tag(self):
        """What a completion enqueued now belongs to: (barrier, bytes, key of the async issue event just raised)."""
        ev = self.last_issue
        if ev is None:
            return None
        k = (ev.warp, ev.site, ev.kind)
        return ev.barrier, int(ev.tx), k + (self.counts.get(k, 1) - 1,)

    def may_deliver(self, tag) -> bool:
        if self.finished or tag is None:
            return True
        barrier, tx, issue = tag
        k = self.issues.get(issue)
        if k is not None:          # a step names this very completion
            if k != self.pos:
                return False
            self._consume(k)
            return True
        if issue in self.held_completions:
            return False
        if barrier not in self.barriers:
            return True
        step = self.steps[self.pos]
        if step.kind == "complete" and step.warp is None and step.barrier == barrier and step.tx == tx:
            self._consume(self.pos)
            return True
        return False

    def abandon(self) -> None:
        """Stop following (every warp finished with steps left): release what is held."""
        if not self.finished:
            self.abandoned_at = self.pos
            self.finished = True
            if self.eng is not None:
                self.eng.touch(self)

    def progress(self) -> dict:
        return {"steps": len(self.steps), "done": sum(self.done), "followed": self.abandoned_at is None and
                all(self.done), "next": None if self.pos >= len(self.steps) else self.pos,
                "done_steps": list(self.done), "order": list(self.at), "out_of_order": sorted(set(self.out_of_order)),
                "abandoned_at": self.abandoned_at}


class GatedState(EngineState):
    """EngineState whose completions carry what they belong to, and are delivered as the gate allows."""

    def __init__(self, globals_, sites, observers, gate: Gate):
        super().__init__(globals_, sites, observers)
        self.gate = gate
        gate.eng = self

    def enqueue(self, completion) -> None:
        self.pending.append((completion, self.gate.tag()))

    # an override returning more than the base (None): whether it delivered; the base's callers ignore it
    def deliver_pending(self) -> bool:  # type: ignore[override]
        """Deliver every completion the schedule allows now (FIFO among them); True if any was."""
        gate = self.gate
        delivered = False
        progress = True
        while progress and self.pending:
            progress = False
            batch = list(self.pending)
            self.pending.clear()
            keep = []
            gate.delivering = True
            try:
                for completion, tag in batch:
                    if gate.may_deliver(tag):
                        completion()
                        delivered = progress = True
                    else:
                        keep.append((completion, tag))
            finally:
                gate.delivering = False
            self.pending = deque(keep + list(self.pending))
        return delivered


class GatedScheduler(Scheduler):
    """The default scheduler, with completions delivered as the gate allows and stuck schedules reported."""

    def __init__(self, eng, warps, max_polls: int):
        super().__init__(eng, warps, max_polls)
        self.spinning: list = []       # warps parked in a loop that polls memory, with the progress they saw
        self.delivered = 0
        self.last_spin: dict = {}
        self.spun_at: tuple | None = None

    def run(self, program) -> None:
        eng = self.eng
        gate = eng.gate
        gens = {w.gid: program(w) for w in self.warps}
        queue = self.queue
        while True:
            round_len = len(queue)
            while round_len:
                round_len -= 1
                w = queue.popleft()
                self._step(w, gens[w.gid])
                self._settle()
            if eng.pending:
                eng.current = None
                if eng.deliver_pending():
                    self.delivered += 1
                    self._settle()
                    continue
            if queue:
                continue
            if self.memory_waits and self.wake_memory():
                continue
            if self.spinning and self._progress() != self.spun_at:
                for w in self.spinning:       # something changed since they parked: let them look again
                    w.status = RUNNABLE
                    w.last_poll = None
                    queue.append(w)
                self.spinning = []
                continue
            unfinished = [w for w in self.warps if w.status != DONE]
            if gate.finished:
                if not unfinished and not eng.pending:
                    return
                if not unfinished:      # cannot happen: with the gate finished every completion is deliverable
                    raise RuntimeError("forced schedule: completions left undelivered")
                eng.current = None
                self._deadlock(unfinished)
            if not unfinished:
                gate.abandon()          # every warp finished: the remaining steps can no longer happen
                continue
            eng.current = None
            if not eng.pending and all(w.waiting is not None and w.waiting.obj is not None and w.waiting.obj is not gate
                                       and type(w.waiting.obj) is not MemoryWatch for w in unfinished):
                self._deadlock(unfinished)   # every warp waits on a barrier: the schedule led into a deadlock
            raise ScheduleStuck(
                f"the forced schedule cannot take step {gate.pos + 1} ({gate.current()}); "
                f"{len(unfinished)} warp(s) held or blocked",
                step=gate.pos, awaited=gate.current(), pending_completions=len(eng.pending),
                blocked=[dict(self._blocked_entry(w), held_by_schedule=w.waiting is not None
                              and w.waiting.obj is gate) for w in unfinished])

    def _step(self, w, gen) -> None:
        polls = self.polls
        super()._step(w, gen)
        if self.polls != polls and w.status == RUNNABLE and not self.eng.gate.finished and self._spinning(w):
            # a loop polling memory (no barrier to park on) while nothing any warp can observe changes: with
            # the schedule holding the other warps, what it reads stays the same, so park it until that changes
            self.queue.remove(w)
            w.status = BLOCKED
            w.waiting = Wait(None, lambda: False, "spins in a loop polling memory that nothing changes",
                             w.last_poll[0])
            self.spinning.append(w)
            self.spun_at = self._progress()

    def _spinning(self, w) -> bool:
        """SPIN_POLLS polls in a row of this warp with no visible change in between (its own local registers
        may change: a loop counting in registers alone longer than that is taken for a spin)."""
        now = self._progress()
        seen, n = self.last_spin.get(w.gid, (None, 0))
        n = n + 1 if seen == now else 0
        self.last_spin[w.gid] = (now, n)
        return n >= SPIN_POLLS

    def _progress(self) -> tuple:
        """What other warps can observe: schedule steps, memory writes, sync operations, completions, exits."""
        eng = self.eng
        return (eng.gate.pos, eng.gate.writes, eng.stats["sync_events"], self.delivered,
                eng.stats["warps_finished"])

    def _settle(self) -> None:
        """Wake everything the last step made ready (a wake-up check may itself advance the gate)."""
        while self.eng.dirty:
            self._wake_dirty()


def hold(sites: tuple):
    """The generator a gated statement runs first: wait until the gate lets this warp go on."""
    first = sites[0]

    def wait_turn(w):
        gate = w.eng.gate
        if gate.allows(w, sites):
            return
        while not gate.allows(w, sites):
            yield Wait(gate, lambda: gate.allows(w, sites), lambda: gate.describe_hold(w, sites), first)
    return wait_turn
