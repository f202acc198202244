"""Counterexample replay: run a finding's schedule on NumSim and show what goes wrong
(docs/architecture.md#happens-before-graph-and-replay).

Entry point: `replay(func, inputs, finding_or_witness)` -> `ReplayResult`.  It runs the kernel
twice on the same inputs: under NumSim's default schedule, and under the forced schedule the
finding implies (`plan`: an explorer witness, a race pair run the other way round, a consumer
overtaken by the re-arm of its barrier).  It reports the output elements that differ, the
reads that observed another write than in the default run (which write, from which loop
iteration), the blocked warps if the forced schedule deadlocks, and a protocol violation the
forced run shows.  `finding_or_witness`: a Finding (or its `to_dict()`) from Synccheck or
Racecheck, or an explorer witness (a list of transition dicts).
"""
from __future__ import annotations

import time

import ir

from .. import numsim
from ..common import findings as F
from ..common.phase_a import StrictProtocol
from ..common.results import resolve_inputs
from .observe import barrier_states, observed_writes, other_round, output_differences, read_differences
from .plan import DefaultRun, Plan, PlanError, plans
from .result import ReplayResult, RunSummary

__all__ = ["replay", "ReplayResult", "PlanError"]

MAX_READS = 64       # reads kept in a report (read_count has the total)
MAX_WRITERS = 4      # writes kept per read (saw_count has the total)


def replay(func, inputs=None, finding_or_witness=None, **limits) -> ReplayResult:
    """Replay `finding_or_witness` on `func` with `inputs` (None: zero-filled buffers, as the checkers use);
    raises PlanError when the finding names operations the default run does not have.  `limits`:
    numsim.Engine's budgets and target, for each run."""
    t0 = time.perf_counter()
    func = ir.as_func(func)
    inputs, missing = resolve_inputs(func, inputs, limits.get("max_memory_mb", numsim.budget.DEFAULT_MAX_MEMORY_MB))
    if missing:
        raise numsim.InputError(f"replay needs inputs for {', '.join(missing)} (the same inputs the finding came "
                                f"from)", tuple(missing))
    kind, details, finding = _normalize(finding_or_witness)
    # a finding on another answer sequence of cluster launch control requests: both runs take those answers
    engine = numsim.Engine(func, unsupported="incomplete", clc_answers=tuple(details.get("clc_answers", ())),
                           **limits)
    base, base_obs = _run(engine, inputs, None)
    run = DefaultRun(base, base_obs.trace, base_obs.name_of)
    default = _summary(base, base_obs)
    default_reads = observed_writes(base_obs.trace.accesses)
    reports = []
    for plan in plans(kind, details, run):
        report = _replay_plan(func, engine, inputs, plan, finding, run, base, default, default_reads)
        if report.outcome == "schedule_not_followed" and plan.fallback is not None:
            tried = plan.explanation
            report = _replay_plan(func, engine, inputs, plan.fallback, finding, run, base, default, default_reads)
            report.explanation += f" (tried first, and NumSim could not take it: {tried.split('; ')[-1]})"
        reports.append(report)
    main = reports[0]
    main.alternatives = reports[1:]
    finals = {_state_key(r.final_barriers) for r in reports}
    if len(reports) > 1 and len(finals) > 1:
        # the witnesses of a non-confluence finding end in different states: that is the finding, shown
        for r in reports:
            r.effects.append("final_states_differ")
            if r.outcome == "no_difference":
                r.outcome = "reproduced"
    main.stats["wall_time_s"] = time.perf_counter() - t0
    return main


def _state_key(d: dict) -> str:
    return repr(sorted(d.items()))


def _normalize(x):
    """(kind, details, {id, kind, message} or None) of a Finding, a finding dict, or a bare witness list."""
    if x is None:
        raise TypeError("replay needs a finding (from synccheck/racecheck) or a witness (a list of transitions)")
    if isinstance(x, (list, tuple)):
        return None, {"witness": list(x)}, None
    if isinstance(x, F.Finding):
        return x.kind, x.details, {"id": x.id, "kind": x.kind, "message": x.message}
    if isinstance(x, dict) and "details" in x:
        return x.get("kind"), x["details"], {"id": x.get("id"), "kind": x.get("kind"), "message": x.get("message")}
    raise TypeError(f"replay takes a Finding, a finding dict or a witness list, not {type(x).__name__}")


class _Observed(numsim.Observer):
    """The trace of a run, the shared-address namer, and the first strict-protocol violation (not halting)."""

    def __init__(self):
        self.trace = numsim.Trace()
        self.name_of = lambda addr: f"{addr:#x}"
        self.strict = StrictProtocol("replay")
        self.violation = None

    def on_start(self, run):
        self.name_of = run.name_of
        self.strict.on_start(run)

    def on_sync(self, ev):
        self.trace.on_sync(ev)
        if self.violation is None:
            try:
                self.strict.on_sync(ev)
            except numsim.Halt as stop:
                f = stop.payload
                self.violation = {"kind": f.kind, "message": f.message, "operation": f.details.get("operation")}

    def on_access(self, rec):
        self.trace.on_access(rec)


def _run(engine, inputs, schedule):
    obs = _Observed()
    return engine.run(inputs, observers=(obs,), schedule=schedule), obs


def _summary(res, obs) -> RunSummary:
    diags = [{"kind": d.kind, "status": d.status, "message": d.message, "details": _blocked_only(d.details)}
             for d in res.diagnostics if d.kind != "uninitialized_read"]
    return RunSummary(res.termination, diags, res.schedule, obs.violation)


def _blocked_only(details: dict) -> dict:
    keep = ("blocked", "step", "awaited", "reason", "operation", "warp", "iters")
    return {k: v for k, v in details.items() if k in keep}


def _replay_plan(func, engine, inputs, plan: Plan, finding, run: DefaultRun, base, default: RunSummary,
                 default_reads) -> ReplayResult:
    if plan.schedule is None:
        res, forced = base, default
        reads = []
    else:
        res, obs = _run(engine, inputs, plan.schedule)
        forced = _summary(res, obs)
        # an overtaken consumer may read the wrong round on both schedules: show those reads too
        reads = read_differences(default_reads, observed_writes(obs.trace.accesses), plan.method == "overtaking")
    diffs, count = output_differences(base.outputs, res.outputs)
    steps = [dict(s) for s in plan.steps]
    prog = forced.schedule or {}
    for k, s in enumerate(steps):
        done = prog.get("done_steps")
        s["done"] = bool(done[k]) if done and k < len(done) else plan.schedule is None
    report = ReplayResult(func.name, finding, plan.method, plan.explanation, steps, default, forced, diffs, count,
                          [_read_dict(r, run.sites) for r in reads[:MAX_READS]])
    report.read_count = len(reads)
    report.outcome, report.effects = _outcome(plan, default, forced, count, reads)
    if plan.barriers and plan.schedule is not None:
        report.final_barriers = barrier_states(obs.trace.sync, plan.barriers)
    report.note = plan.note
    report.stats = {"forced_warp_instructions": res.stats.get("warp_instructions"),
                    "default_warp_instructions": base.stats.get("warp_instructions")}
    return report


def _op(key, sites) -> dict | None:
    if key is None:
        return None
    warp, site, iters, event = key
    return F.operation(sites, warp, site, iters, extra={"event": event})


def _read_dict(r: dict, sites) -> dict:
    """A read and the writes it saw (another round's first; at most MAX_WRITERS of them, with the total)."""
    read = _op(r["read"], sites)

    def writers(ws):
        ws = sorted(ws, key=lambda w: not other_round(w, r["read"]))
        return [_op(w, sites) for w in ws[:MAX_WRITERS]]
    return {"read": read, "allocation": r["allocation"], "saw": writers(r["saw"]), "saw_count": len(r["saw"]),
            "default_saw": None if r["default_saw"] is None else writers(r["default_saw"]),
            "default_saw_count": None if r["default_saw"] is None else len(r["default_saw"])}


def _outcome(plan: Plan, default: RunSummary, forced: RunSummary, count: int, reads: list):
    if plan.schedule is None:
        return "default_schedule", [f"error:{d['kind']}" for d in default.errors()] + \
            ([f"protocol:{default.protocol['kind']}"] if default.protocol else [])
    effects = []
    before = {(d["kind"], d["message"]) for d in default.errors()}
    for d in forced.errors():
        if (d["kind"], d["message"]) not in before:
            effects.append(f"error:{d['kind']}")
    if forced.protocol and forced.protocol != default.protocol:
        effects.append(f"protocol:{forced.protocol['kind']}")
    if count:
        effects.append("outputs_differ")
    if reads:
        effects.append("reads_differ")
    prog = forced.schedule or {}
    if any(d["kind"] == "schedule_stuck" for d in forced.diagnostics) or \
            (plan.method == "reversed_pair" and prog.get("out_of_order")):
        return "schedule_not_followed", effects
    if effects:
        return "reproduced", effects
    if not prog.get("followed", True):
        return "schedule_not_followed", effects
    return "no_difference", effects
