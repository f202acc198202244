"""Synccheck: can this kernel hang or misuse a barrier, for these inputs, in any schedule?

Entry point: `check(func, inputs=None, **limits)` -> `SyncResult`.
Phase A runs NumSim once with the strict-protocol and causality observers; it stops
at the first protocol error.  Phase B (only when phase A is clean and the run
completed) explores every interleaving of the recorded per-warp sync programs and
every landing time of async completions (`modelcheck.explorer`).  A missing input,
an unsupported operation or an exhausted budget gives `incomplete`, never `clean`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import ir

from .. import explorer, numsim
from ..common import findings as F
from ..common.async_effects import UnobservedEffects
from ..common.phase_a import Causality, StrictProtocol
from ..common.verdict import Verdict, verdict_of
from ..common.results import InputDigest, engine_findings, limit_finding, resolve_inputs
from . import snapshots

if TYPE_CHECKING:                   # numsim loads its engine lazily (a fast start for commands that never simulate)
    from ..numsim.engine import NumSimResult

CHECKER = "synccheck"


@dataclass
class SyncResult:
    func: ir.PrimFunc
    findings: list
    stats: dict
    phase_b: object = None          # explorer.Verification, when phase B ran
    inputs: dict = field(default_factory=dict)
    input_digest: str | InputDigest = ""    # InputDigest: hashed when a report reads it
    sites: tuple = ()

    @property
    def verdict(self) -> Verdict:
        return verdict_of(self.findings)


@dataclass
class PhaseA:
    """Phase A's outcome: its findings, and the fixed sync programs when phase B should run."""

    func: ir.PrimFunc
    inputs: dict
    findings: list
    stats: dict
    run: NumSimResult | None = None             # when the run started
    programs: explorer.Programs | None = None   # when the run completed without error or incomplete


ENGINE_LIMITS = ("max_polls", "max_loop_iterations", "max_steps", "max_seconds", "max_memory_mb", "target")


def phase_a(func, inputs=None, *, build_programs: bool = True, clc_answers: tuple = (), clc_choice=None,
            **limits) -> PhaseA:
    """Run NumSim once with the strict-protocol and causality observers; build the sync programs.
    `limits`: numsim.Engine's budgets and target (ENGINE_LIMITS); `clc_answers`: the first cluster launch control
    choice points' answers (numsim/ops/clc.py)."""
    t0 = time.perf_counter()
    func = ir.as_func(func)
    stats: dict = {"checker": CHECKER}
    try:
        inputs, missing = resolve_inputs(func, inputs, limits.get("max_memory_mb",
                                                                  numsim.budget.DEFAULT_MAX_MEMORY_MB))
    except numsim.ResourceLimit as err:
        return PhaseA(func, {}, [limit_finding(CHECKER, err)], stats)
    if missing:
        f = F.make(CHECKER, "analysis_incomplete", f"missing input bindings for {', '.join(missing)}",
                   {"reason": "missing_input_bindings", "parameters": missing})
        return PhaseA(func, inputs, [f], stats)
    strict, causality = StrictProtocol(CHECKER), Causality(CHECKER)
    effects = UnobservedEffects(CHECKER)
    trace = numsim.Trace()
    trace.wants_accesses = False
    engine = numsim.Engine(func, unsupported="incomplete", clc_answers=clc_answers, cohorts=numsim.CHECK_COHORT,
                           clc_choice=clc_choice, **limits)
    try:
        res = engine.run(inputs, observers=(strict, causality, effects, trace))
    except numsim.InputError as err:
        f = F.make(CHECKER, "analysis_incomplete", str(err), {"reason": "missing_input_bindings",
                                                              "parameters": list(err.missing)})
        return PhaseA(func, inputs, [f], {})
    found = []
    if res.halt is not None and isinstance(res.halt.payload, F.Finding):
        found.append(res.halt.payload)
    found.extend(engine_findings(CHECKER, res, trace.sync))
    if res.termination == "completed":
        found.extend(effects.findings())
    stats.update({"phase_a_wall_time_s": time.perf_counter() - t0, "numsim": dict(res.stats),
                  "sync_events": len(trace.sync), "termination": res.termination})
    programs = None
    if build_programs and res.termination == "completed" and not any(f.status in (Verdict.ERROR, Verdict.INCOMPLETE)
                                                                     for f in found):
        programs = explorer.build(trace.sync, causality.event_clocks, _namer(res, causality))
    return PhaseA(func, inputs, found, stats, res, programs)


def check(func, inputs=None, *, max_states: int = 200_000, max_transitions: int = 2_000_000,
          max_seconds: float = numsim.budget.DEFAULT_MAX_SECONDS, phase_b: bool = True,
          max_clc_paths: int = explorer.choices.DEFAULT_MAX_PATHS, clc_snapshots: bool = True,
          **limits) -> SyncResult:
    """`max_seconds` bounds the whole check (the run, then phase B with what is left); `limits`: the run's
    other budgets and target (ENGINE_LIMITS).  A kernel whose cluster launch control requests can be answered
    either way is checked once per answer sequence (at most `max_clc_paths` runs: explorer/choices.py), each
    resumed from a snapshot of the run where its answers first differ (`clc_snapshots`, Linux: snapshots.py;
    else, or when a snapshot is lost, a whole run from the start: the same run either way)."""
    w0, t0 = time.perf_counter(), numsim.budget.now()     # wall clock for the stats, the budget clock for budgets
    snaps = snapshots.Snapshots(max_seconds + 30.0) if clc_snapshots and phase_b else None
    try:
        return _check(func, inputs, w0, t0, snaps, max_states, max_transitions, max_seconds, phase_b, max_clc_paths,
                      limits)
    finally:
        if snaps is not None:
            snaps.close()


def _check(func, inputs, w0, t0, snaps, max_states, max_transitions, max_seconds, phase_b, max_clc_paths,
           limits) -> SyncResult:
    a, found, stats, verification = _leaf(func, inputs, (), t0, max_states, max_transitions, max_seconds,
                                          phase_b, limits, snaps)
    func, inputs = a.func, a.inputs
    if a.run is None:
        stats["wall_time_s"] = time.perf_counter() - w0
        return SyncResult(func, found, stats, inputs=inputs)
    clc = a.run.stats.get("clc")
    if clc is not None and clc["choices"] and phase_b and not _fails(found):
        simulated = [a.run.stats.get("warp_instructions", 0)]
        resumed = [0, 0]    # warp-instructions the resumed runs executed past their snapshot; sequences resumed
        whole = [1]         # runs that finished (the default's included); a run cut by the time budget is not one
        reruns: list = []   # answer prefixes run from the start although a snapshot was taken (it was lost)

        def run(prefix):
            nonlocal found, verification
            left = max_seconds - (numsim.budget.now() - t0)
            if left <= 0:
                raise _OutOfTime
            out = None
            if snaps is not None and snaps.has(prefix):
                try:
                    out = snaps.resume(prefix)
                except snapshots.SnapshotLost as err:
                    reruns.append({"answers": list(prefix), "why": str(err)[:500]})
            if out is not None:
                full, f, v, instr, at_fork = out
                resumed[0] += instr - at_fork
                resumed[1] += 1
            else:
                b, f, _, v = _leaf(func, inputs, prefix, numsim.budget.now(), max_states, max_transitions, left,
                                   phase_b, limits, snaps)
                full, instr = _summary(b, prefix)
                resumed[0] += instr
            simulated.append(instr)
            if _out_of_time(f):
                # the check's time ran out on this sequence (it got what the earlier ones left): say so, not
                # "the run took more than <the remainder>"
                raise _OutOfTime
            whole[0] += 1
            if _fails(f):
                # the default run's (review) findings stay; the failing sequence adds what makes it fail
                found = found + [_on_path(x, full) for x in f if x.status in (Verdict.ERROR, Verdict.INCOMPLETE)]
                verification = v
                return full, True
            return full, False
        try:
            search = explorer.choices.explore(run, first=clc["choices"], max_paths=max_clc_paths)
        except _OutOfTime:
            search = None
        stats["clc_paths"] = len(search.paths) if search is not None else None
        stats["clc_choice_points"] = search.choice_points if search is not None else len(clc["choices"])
        stats["clc_max_paths"] = max_clc_paths
        stats["clc_warp_instructions"] = sum(simulated)     # every answer sequence's run, the default's included
        # what was executed: the default run, then each other sequence from its snapshot (or from the start)
        stats["clc_executed_warp_instructions"] = simulated[0] + resumed[0]
        stats["clc_resumed"] = resumed[1]
        if reruns:
            stats["clc_snapshots_lost"] = reruns
        if search is None or search.truncated:
            runs = whole[0]
            how = "each resumed from a snapshot of the run where its answers first differ" if resumed[1] else \
                "each a whole run of the kernel"
            found.append(F.make(CHECKER, "analysis_incomplete",
                                "cluster launch control: not every answer of the try_cancel requests was explored "
                                + (f"(out of time: the {max_seconds:g} s budget covered the default run and "
                                   f"{runs - 1} other answer sequence(s), {how})"
                                   if search is None else
                                   f"(stopped at the bound of {max_clc_paths} answer sequences)"),
                                {"reason": "resource_limit", "resource": "clc_paths", "bound": max_clc_paths,
                                 "runs": runs}))
    stats["wall_time_s"] = time.perf_counter() - w0
    return SyncResult(func, F.sort_findings(found), stats, verification, inputs, InputDigest(inputs), a.run.sites)


def _leaf(func, inputs, answers, t0, max_states, max_transitions, max_seconds, phase_b, limits, snaps):
    """`_one_path` with the CLC choice points snapshotted.  In a snapshot resumed by the search this returns
    never: the snapshot's run ends here, and it sends what it found to the check's process and exits."""
    hook = snaps.choice if snaps is not None and snaps.enabled else None
    try:
        out = _one_path(func, inputs, answers, t0, max_states, max_transitions, max_seconds, phase_b, limits,
                        clc_choice=hook)
    except BaseException as err:
        if snaps is not None and snaps.resumed is not None:
            snaps.fail(err)
        raise
    if snaps is not None and snaps.resumed is not None:
        b, f, _, v = out
        full, instr = _summary(b, answers)
        # the verification only matters for a failing sequence (it becomes the result's phase_b)
        snaps.finish((full, f, v if _fails(f) else None, instr, snaps.resumed_steps))
    return out


def _summary(a: PhaseA, answers) -> tuple[list, int]:
    """A run's full answer sequence and its warp-instructions."""
    if a.run is None:
        return list(answers), 0
    return list(a.run.stats.get("clc", {}).get("choices", [])), a.run.stats.get("warp_instructions", 0)


class _OutOfTime(Exception):
    pass


def _out_of_time(found) -> bool:
    """The run stopped at the time budget (the check's own, what earlier runs left of it)."""
    return any(f.kind == "analysis_incomplete" and f.details.get("limit") == "seconds" for f in found)


def _fails(found) -> bool:
    return any(f.status in (Verdict.ERROR, Verdict.INCOMPLETE) for f in found)


def _on_path(f, answers: list):
    """`f` as found on a run whose CLC requests were answered `answers` (True: a cluster was cancelled)."""
    shown = ", ".join("cancelled" if x else "none remain" for x in answers)
    return F.make(CHECKER, f.kind, f"{f.message} (when the cluster launch control requests answer: {shown})",
                  dict(f.details, clc_answers=list(answers)), status=f.status)


def _one_path(func, inputs, answers, t0, max_states, max_transitions, max_seconds, phase_b, limits, clc_choice=None):
    """Phase A, then phase B, on one run with the CLC answers `answers` forced (`clc_choice`: numsim.Engine's)."""
    a = phase_a(func, inputs, build_programs=phase_b, clc_answers=answers, clc_choice=clc_choice,
                max_seconds=max_seconds, **limits)
    found, stats, programs = list(a.findings), a.stats, a.programs
    verification = None
    if a.run is not None and programs is not None:
        verification = explorer.verify(programs, max_states=max_states, max_transitions=max_transitions,
                                       max_seconds=max(max_seconds - (numsim.budget.now() - t0), 0.1))
        found.extend(_phase_b_findings(verification, a.run.sites))
        stats.update({"verifier_states": verification.states, "verifier_transitions": verification.transitions,
                      "projections": verification.projections, "certified_projections": verification.certified,
                      "searched_projections": verification.searched, "program_commands": programs.size(),
                      "phase_b_wall_time_s": verification.wall_time_s})
    return a, found, stats, verification


def _namer(res, causality):
    return causality.ctx.name_of


def _phase_b_findings(v, sites) -> list:
    if v.status == "complete":
        return []
    fail = v.failure
    witness = [_witness_step(step, sites) for step in (fail.witness if fail else [])]
    if v.status == "limit":
        return [F.make(CHECKER, "analysis_incomplete",
                       f"phase B stopped at its {v.limit} limit after {v.states} states / {v.transitions} transitions",
                       {"reason": "resource_limit", "resource": v.limit, "barrier": v.resource_name})]
    if v.status == "deadlock":
        blocked = [dict(b, operation=F.operation(sites, b["warp"], b["site"], b["iters"])) for b in fail.blocked]
        return [F.make(CHECKER, "deadlock",
                       "execution cannot make progress in a schedule of the same program "
                       f"(projection {v.resource_name})",
                       {"verification": "fixed_sync", "barrier": v.resource_name, "blocked": blocked,
                        "witness": witness})]
    if v.status == "protocol_error":
        last = witness[-1] if witness else {}
        details = {"protocol": fail.rule, "barrier": v.resource_name, "witness": witness}
        if "operation" in last:
            details["operation"] = last["operation"]
        return [F.make(CHECKER, "fixed_sync_protocol_error",
                       f"{fail.message} (in a schedule the run did not take)", details)]
    return [F.make(CHECKER, "fixed_sync_nonconfluent",
                   f"schedules of the same program end in {fail.finals} different protocol states on "
                   f"{v.resource_name}", {"barrier": v.resource_name,
                                         "witnesses": [[_witness_step(s, sites) for s in w] for w in fail.witnesses]})]


def _witness_step(step: dict, sites) -> dict:
    out = dict(step)
    if step.get("transition") == "issue":
        out["operation"] = F.operation(sites, step["warp"], step["site"], step["iters"])
    return out
