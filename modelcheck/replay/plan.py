"""Plans: the forced schedule that makes a finding happen, built against the default run.

`plans(finding, run)` -> list of `Plan` (two for a non-confluence finding: one per witness).
The default run (`DefaultRun`) is NumSim's own schedule of the same kernel and inputs; a
finding names operations by (warp, site, loop iterations), and the plan turns each into the
n-th event of its kind at its site (`numsim.schedule.occurrences`), which is what NumSim's
gate follows.  Methods, by what the finding carries:

- witness (phase-B `deadlock`, `fixed_sync_protocol_error`, `fixed_sync_nonconfluent`): the
  explorer's order of sync commands and completion deliveries on the barriers it names;
  every other operation and completion on those barriers waits until the witness is done.
- reversed pair (`data_race`, and the phase-A happens-before findings whose two operations
  nothing orders): run the later operation first, hold the earlier one until it has run (an
  async operation's access: delay its completion, and the commits or arrivals that track it;
  if NumSim cannot take that order, hold its issue instead).
- overtaking (`mbarrier_arrive_before_consumption`, `..._prior_generation_not_consumed`): let
  the consumers observe generation g as late as possible -- once the producer has reached the
  re-arm of generation g+1 (or, for a deferred arrival, just before it lands) -- so they see
  what the producer wrote since.
- default schedule: every other finding does not depend on the schedule; NumSim's default
  run shows it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..common import findings as F
from ..numsim.schedule import Schedule, Step, is_async_event, occurrences

# explorer command kind (witness steps) -> the sync events NumSim raises for it
COMMAND_EVENTS = {"init": ("mbarrier.init",), "inval": ("mbarrier.inval",), "arrive": ("mbarrier.arrive",),
                  "expect_tx": ("mbarrier.expect_tx",), "complete_tx": ("mbarrier.complete_tx",),
                  "wait": ("mbarrier.wait",), "issue_tx": ("async.issue",), "issue_arrive": ("async.issue",),
                  "contribute": ("bar.sync", "bar.red", "bar.arrive"), "resume": ("bar.wait",)}
PROTOCOL_EVENTS = frozenset(e for events in COMMAND_EVENTS.values() for e in events)
# phase-A findings whose `operation` ran after its `related_operations[0]` with nothing ordering them
REVERSIBLE = {"mbarrier_prior_generation_consumption_not_happens_before": "the consuming wait",
              "mbarrier_init_not_happens_before_use": "the init", "cluster_barrier_init_not_visible": "the init"}


# phase-A findings of a re-arm (its `operation`) before any wait observed the previous generation
OVERTAKING = ("mbarrier_arrive_before_consumption", "mbarrier_prior_generation_not_consumed")

# why a race's reversed order may be impossible in NumSim, by ordering failure
RACE_NOTES: dict[str | None, str] = {
    "missing_proxy_bridge": "what is missing is a proxy fence: on hardware the async proxy may observe the generic "
                            "write late (or the reverse) even where execution orders the two accesses. NumSim's memory "
                            "is coherent across proxies, so that stale value shows only on hardware; and NumSim could "
                            "not run the two accesses the other way round either",
    "missing_release_acquire": "in execution the two accesses are ordered (the reader waits for the flag); what is "
                               "missing is the release/acquire pair, so on hardware the reader may still see stale "
                               "data. NumSim's memory is sequentially consistent (no weak memory model), so it "
                               "cannot run them the other way round",
    "missing_same_warp_lane_order": "the two accesses are by lanes of one warp: NumSim runs a warp's lanes in "
                                    "lockstep in program order, so it cannot run them the other way round (the "
                                    "hardware gives no such order without __syncwarp)",
    "async_lifetime_not_drained": "the async operation completes in NumSim before the issuing thread moves on, so "
                                  "the reuse cannot overtake it here; on hardware it can",
    "default": "NumSim cannot run them the other way round: the later access's warp does not get there while the "
               "earlier one is held back (it waits for something that follows it, e.g. a flag it spins on, which "
               "the race checker does not count as ordering). On hardware the missing synchronization lets it see "
               "stale data anyway; NumSim's memory is sequentially consistent, so it cannot show that",
}


class PlanError(Exception):
    """The finding cannot be mapped onto the default run (another kernel, inputs or specialization)."""


@dataclass
class Plan:
    method: str                    # witness | reversed_pair | overtaking | default_schedule
    schedule: Schedule | None
    explanation: str
    steps: list = field(default_factory=list)    # per schedule step: {"label", "operation"?}
    note: str = ""                 # why the forced order may be impossible in NumSim (shown if it is)
    barriers: dict = field(default_factory=dict)   # barrier tuple -> name: their final state is reported
    fallback: "Plan | None" = None  # a stricter order to try when NumSim cannot take this one


class DefaultRun:
    """NumSim's default schedule of the kernel: its result and trace, indexed for the planners."""

    def __init__(self, result, trace, name_of):
        self.result = result
        self.sites = result.sites
        self.events = [ev for ev in trace.sync]
        self.accesses = trace.accesses
        self.occ: dict[int, tuple[int, int, str, int]] = occurrences(self.events, self.accesses)
        self.name_of = name_of
        self.by_op: dict = {}           # (warp, site, iters) -> its events, in order
        for ev in self.events:
            self.by_op.setdefault((ev.warp, ev.site, tuple(ev.iters)), []).append(ev)

    def barrier_name(self, barrier) -> str:
        if barrier is None:
            return "?"
        if barrier[0] == "named":
            return f"named barrier {barrier[2]}"
        return self.name_of(barrier[2])

    def event(self, warp, site, iters, kinds=None, used=(), want_async=False):
        for ev in self.by_op.get((warp, site, tuple(iters or ())), ()):
            if id(ev) not in used and (kinds is None or ev.kind in kinds) and is_async_event(ev) == want_async:
                return ev
        return None

    def access(self, op: dict):
        """The first access record matching a race finding's prior/current operation."""
        iters = tuple(op.get("iters") or ())
        kind = op.get("access")
        is_async = bool(op.get("async_op"))
        lane = op.get("lane")
        for rec in self.accesses:
            if rec.warp == op["warp"] and rec.site == op["site"] and tuple(rec.iters) == iters and \
                    (kind is None or rec.kind == kind) and (rec.actor >= 0) == is_async and \
                    (lane is None or rec.lanes is None or bool(rec.lanes[lane])):
                return rec
        return None

    def issue_of(self, actor: int):
        for ev in self.events:
            if ev.kind == "async.issue" and ev.details.get("op") == actor:
                return ev
        return None

    def operation(self, warp, site, iters, **extra) -> dict:
        return F.operation(self.sites, warp, site, iters, extra=extra or None)


def plans(kind: str | None, details: dict, run: DefaultRun) -> list[Plan]:
    if details.get("witness"):
        return [_witness(details["witness"], run, details.get("barrier"))]
    if details.get("witnesses"):
        return [_witness(w, run, details.get("barrier")) for w in details["witnesses"]]
    if kind == "data_race" or ("prior" in details and "current" in details and "access" in details["prior"]):
        return [_reversed_race(details, run)]
    if kind in REVERSIBLE and details.get("related_operations") and details.get("operation"):
        return [_reversed_sync(kind, details, run)]
    if kind in OVERTAKING and details.get("operation"):
        plan = _overtaking(details, run)
        if plan is not None:
            return [plan]
        return [_default("no other warp waits on the barrier: the default schedule shows the early re-arm")]
    return [_default("this finding does not depend on the schedule: NumSim's default schedule shows it")]


def _default(why: str) -> Plan:
    return Plan("default_schedule", None, why)


# ---------------------------------------------------------------------------------------------- witness
def _witness(witness: list, run: DefaultRun, barrier_name: str | None) -> Plan:
    used: set = set()
    mapped: list = []
    covered: dict = {}             # barrier tuple -> name
    for n, step in enumerate(witness):
        if step.get("transition") == "complete":
            mapped.append(None)
            continue
        kinds = COMMAND_EVENTS.get(step.get("kind"))
        ev = run.event(step["warp"], step["site"], step.get("iters"), kinds, used)
        if ev is None:
            raise PlanError(f"witness step {n + 1} ({step.get('command', step.get('kind'))} by warp {step['warp']} "
                            f"at site {step['site']}, iteration {list(step.get('iters') or [])}) is not an operation "
                            f"of the default run: replay with the kernel, constants and inputs the finding came from")
        used.add(id(ev))
        mapped.append(ev)
        if ev.barrier is not None:
            covered[ev.barrier] = run.barrier_name(ev.barrier)
    by_name: dict = {}
    for b, name in covered.items():
        by_name.setdefault(name, b)
    steps: list[Step] = []
    shown: list[dict] = []
    for n, (step, ev) in enumerate(zip(witness, mapped)):
        if ev is None:
            barrier = by_name.get(step.get("barrier"))
            if barrier is None:
                barrier = next((e.barrier for e in run.events if e.barrier is not None and e.barrier[0] == "mbarrier"
                                and run.barrier_name(e.barrier) == step.get("barrier")), None)
                if barrier is None:
                    raise PlanError(f"witness step {n + 1}: no barrier {step.get('barrier')!r} in the default run")
                covered[barrier] = step.get("barrier")
            tx = int(step.get("amount", 0)) if step.get("completion") == "tx" else 0
            what = f"{tx} bytes" if tx else "a deferred arrival"
            label = f"deliver an async completion ({what}) on {step.get('barrier')}"
            steps.append(Step("complete", barrier=barrier, tx=tx, label=label))
            shown.append({"label": label})
            continue
        w, site, event, k = run.occ[id(ev)]
        label = f"warp {w}: {step.get('command', ev.kind)} on {covered.get(ev.barrier, '?')}"
        steps.append(Step("sync", w, site, event, k, label=label))
        shown.append({"label": label, "operation": run.operation(w, site, ev.iters)})
    held = frozenset(run.occ[id(ev)] for ev in run.events
                     if ev.barrier in covered and ev.kind in PROTOCOL_EVENTS and not is_async_event(ev)
                     and id(ev) not in used)
    barriers = frozenset(b for b in covered if b[0] == "mbarrier")
    names = ", ".join(sorted(set(covered.values()))) or barrier_name or "?"
    why = (f"follows the explorer's witness on {names}: its {len(steps)} sync operations and completion deliveries "
           f"in order; other operations and completions on {names} wait until it is done, everything else runs as "
           f"in the default schedule")
    return Plan("witness", Schedule(tuple(steps), held, barriers), why, shown, barriers=dict(covered))


# ---------------------------------------------------------------------------------------------- reversed pairs
def _reversed_race(details: dict, run: DefaultRun) -> Plan:
    prior, current = details["prior"], details["current"]
    first, second = _race_side(prior, run, "prior"), _race_side(current, run, "current")
    a_label = _access_label(current, second)
    b_label = _access_label(prior, first)
    steps = [_access_step(second, run, a_label)]
    if first.kind == "sync":
        steps.append(Step("sync", *run.occ[id(first.event)], label=f"then: {b_label}"))
    elif first.actor >= 0:
        # the earlier access belongs to an async operation: first try delaying its completion (with every
        # completion that tracks it: a later commit or cp.async.mbarrier.arrive of the same warp); if NumSim
        # cannot take that order, hold back its issue instead
        issue = run.issue_of(first.actor)
        if issue is None:
            raise PlanError("the prior access's async operation has no issue event in the default run")
        note = RACE_NOTES.get(details.get("ordering_failure"), RACE_NOTES["default"])
        why = _reversed_why(prior, current)
        shown = [{"label": a_label, "operation": current}, {"label": f"then: {b_label}", "operation": prior}]
        held_back = Step("sync", *run.occ[id(issue)], label=f"then: {b_label} (its async operation is issued)")
        fallback = Plan("reversed_pair", Schedule((steps[0], held_back)), why + "; its async operation is "
                        "issued only after that", shown, note)
        delayed = (steps[0], Step("complete", *run.occ[id(issue)], label=f"then: {b_label} (its async operation "
                                  f"completes)"), _access_step(first, run, f"then: {b_label}"))
        plan = Plan("reversed_pair", Schedule(delayed, held_completions=_trackers(run, issue)),
                    why + "; its async operation completes only after that",
                    [shown[0], {"label": delayed[1].label, "operation": prior}, shown[1]], note)
        if issue.warp != second_warp(second):
            plan.fallback = fallback    # (the same warp issued it earlier in program order: cannot be held)
        return plan
    else:
        steps.append(_access_step(first, run, f"then: {b_label}"))
    shown = [{"label": a_label, "operation": current}, {"label": f"then: {b_label}", "operation": prior}]
    return Plan("reversed_pair", Schedule(tuple(steps)), _reversed_why(prior, current), shown,
                RACE_NOTES.get(details.get("ordering_failure"), RACE_NOTES["default"]))


def second_warp(side) -> int:
    return side.event.warp if side.kind == "sync" else side.warp


def _reversed_why(prior: dict, current: dict) -> str:
    return (f"runs the two unordered accesses the other way round: the {current.get('access', 'access')} by warp "
            f"{current['warp']} first, then the {prior.get('access', 'access')} by warp {prior['warp']} (the default "
            f"schedule ran them in the opposite order)")


def _trackers(run: DefaultRun, issue) -> frozenset:
    """Issue keys of the later async operations whose completion implies `issue`'s: every later tcgen05.commit
    of the warp (a commit tracks all prior tcgen05 operations of the thread), every later
    cp.async.mbarrier.arrive of the same lane (all its prior cp.async)."""
    kind, lane = issue.details.get("kind", ""), issue.details.get("lane")
    out = set()
    for ev in run.events:
        if ev.seq <= issue.seq or ev.kind != "async.issue" or ev.warp != issue.warp:
            continue
        later = ev.details.get("kind")
        if (later == "tcgen05.commit" and kind.startswith("tcgen05")) or \
                (later == "cp.async.mbarrier.arrive" and kind == "cp.async" and ev.details.get("lane") == lane):
            out.add(run.occ[id(ev)])
    return frozenset(out)


class _SyncSide:
    """A race side with no access record of its own: an operation the race checker models as an access
    (a tcgen05.dealloc writes the columns it frees); it runs as its sync event."""

    kind = "sync"
    actor = -1

    def __init__(self, event):
        self.event = event
        self.alloc_name = "its allocation"


def _race_side(op: dict, run: DefaultRun, what: str):
    rec = run.access(op)
    if rec is None:
        ev = run.event(op["warp"], op["site"], op.get("iters"))
        if ev is not None:
            return _SyncSide(ev)
        raise PlanError(f"the race's {what} access (warp {op['warp']}, site {op['site']}, iteration "
                        f"{list(op.get('iters') or [])}) is not an access of the default run: replay with the "
                        f"kernel, constants and inputs the finding came from")
    return rec


def _access_step(side, run: DefaultRun, label: str):
    if side.kind == "sync":
        return Step("sync", *run.occ[id(side.event)], label=label)
    w, site, event, k = run.occ[id(side)]
    return Step("access", w, site, event, k, label=label)


def _access_label(op: dict, rec) -> str:
    who = "an async operation of warp" if rec.actor >= 0 or op.get("async_op") else "warp"
    return f"{who} {op['warp']}: {op.get('access', rec.kind)} of {rec.alloc_name} ({op.get('op', '')})"


def _reversed_sync(kind: str, details: dict, run: DefaultRun) -> Plan:
    later, earlier = details["operation"], details["related_operations"][0]
    ev_late = run.event(later["warp"], later["site"], later.get("iters"), PROTOCOL_EVENTS)
    ev_early = run.event(earlier["warp"], earlier["site"], earlier.get("iters"), PROTOCOL_EVENTS)
    for op, ev in ((later, ev_late), (earlier, ev_early)):
        if ev is None:
            raise PlanError(f"operation of warp {op['warp']} at site {op['site']} is not in the default run: replay "
                            f"with the kernel, constants and inputs the finding came from")
    name = details.get("barrier", run.barrier_name(ev_late.barrier))
    a = f"warp {later['warp']}: {ev_late.kind} on {name}"
    b = f"then: warp {earlier['warp']}: {ev_early.kind} on {name} ({REVERSIBLE[kind]})"
    steps = (Step("sync", *run.occ[id(ev_late)], label=a), Step("sync", *run.occ[id(ev_early)], label=b))
    why = (f"nothing orders {REVERSIBLE[kind]} (warp {earlier['warp']}) before the {ev_late.kind} of warp "
           f"{later['warp']}; the forced schedule runs the {ev_late.kind} first")
    return Plan("reversed_pair", Schedule(steps), why, [{"label": a, "operation": later},
                                                      {"label": b, "operation": earlier}])


# ---------------------------------------------------------------------------------------------- overtaking
def _overtaking(details: dict, run: DefaultRun) -> Plan | None:
    op = details["operation"]
    g = int(details.get("previous_generation", details.get("generation", 1) - 1))
    ev = run.event(op["warp"], op["site"], op.get("iters"), ("mbarrier.arrive", "mbarrier.expect_tx"))
    deferred = False
    if ev is None:      # a deferred arrival (cp.async.mbarrier.arrive, tcgen05.commit) landing
        ev = next((e for e in run.events if e.warp == op["warp"] and e.site == op["site"] and
                   tuple(e.iters) == tuple(op.get("iters") or ()) and e.kind == "mbarrier.arrive" and
                   is_async_event(e) and e.generation == g + 1), None)
        deferred = True
    if ev is None:
        raise PlanError(f"the re-arm (warp {op['warp']}, site {op['site']}) is not in the default run: replay with "
                        f"the kernel, constants and inputs the finding came from")
    barrier = ev.barrier
    name = details.get("barrier") or run.barrier_name(barrier)
    waits = _consumer_waits(run, barrier, ev, op["warp"], g)
    if not waits:
        return None
    steps: list[Step] = []
    shown: list[dict] = []
    if deferred:
        # the completions on this barrier land in the default order up to the early one, which waits for the waits
        for e in run.events:
            if e.seq >= ev.seq:
                break
            if e.barrier == barrier and is_async_event(e) and e.kind in ("mbarrier.arrive", "mbarrier.complete_tx"):
                label = f"deliver an async completion on {name} (as in the default schedule)"
                steps.append(Step("complete", barrier=barrier, tx=int(e.tx) if e.kind != "mbarrier.arrive" else 0,
                                  label=label))
                shown.append({"label": label})
    else:
        label = f"warp {op['warp']} reaches the re-arm of {name} (generation {g + 1}) and is held there"
        steps.append(Step("reach", *run.occ[id(ev)], label=label))
        shown.append({"label": label, "operation": op})
    for w, key, iters in waits:
        label = f"warp {w}: mbarrier.wait on {name} observes generation {g}"
        steps.append(Step("sync", *key, label=label))
        shown.append({"label": label, "operation": run.operation(w, key[1], iters)})
    label = (f"{'the deferred arrival issued by ' if deferred else ''}warp {op['warp']}: "
             f"{'lands' if deferred else ev.kind} on {name} (generation {g + 1})")
    if deferred:
        steps.append(Step("complete", barrier=barrier, tx=0, label=label))
    else:
        steps.append(Step("sync", *run.occ[id(ev)], label=label))
    shown.append({"label": label, "operation": op})
    consumers = ", ".join(str(w) for w, _, _ in waits)
    why = (f"lets warp(s) {consumers} observe generation {g} of {name} as late as possible: after warp {op['warp']} "
           f"{'issued' if deferred else 'reached'} the re-arm of generation {g + 1} and before it "
           f"{'lands' if deferred else 'runs'}, so they see what warp {op['warp']} wrote for the next round")
    barriers = frozenset({barrier}) if deferred else frozenset()
    return Plan("overtaking", Schedule(tuple(steps), frozenset(), barriers), why, shown)


_PHASE = re.compile(r"phase (\d)")


def _consumer_waits(run: DefaultRun, barrier, early, producer: int,
                    g: int) -> list[tuple[int, tuple[int, int, str, int], tuple]]:
    """Per other warp: its first wait on `barrier` after the early re-arm (or the wait it is blocked in at the end
    of the default run), if it waits for generation g's parity: (warp, event key, iters)."""
    out = {}
    for e in run.events:
        if e.seq <= early.seq or e.kind != "mbarrier.wait" or e.barrier != barrier or e.warp == producer or \
                e.warp in out or is_async_event(e):
            continue
        out[e.warp] = (run.occ[id(e)], e.iters, e.parity)
    counts: dict = {}
    for e in run.events:
        if e.kind == "mbarrier.wait" and not is_async_event(e):
            counts[(e.warp, e.site)] = counts.get((e.warp, e.site), 0) + 1
    for d in run.result.diagnostics:
        if d.kind != "deadlock":
            continue
        for b in d.details.get("blocked", []):
            w, site = b["warp"], b.get("site")
            if w == producer or w in out or site is None or run.barrier_name(barrier) not in str(b.get("awaits", "")):
                continue
            m = _PHASE.search(str(b.get("awaits", "")))
            key = (w, site, "mbarrier.wait", counts.get((w, site), 0))
            out[w] = (key, tuple(b.get("iters") or ()), int(m.group(1)) if m else None)
    return [(w, key, iters) for w, (key, iters, parity) in sorted(out.items()) if parity in (None, g & 1)]
