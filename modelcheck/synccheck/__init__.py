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
from ..numsim.trace import Observer
from ..common.results import InputDigest, engine_findings, limit_finding, resolve_inputs
from . import segments, snapshots

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
    facts: dict | None = None                   # segments.Footprint's, when asked for and the run completed


class _Commands(Observer):
    """The sync events phase B's programs are built from (`explorer.is_read`), in order; the others are only
    counted.  A kernel's per-lane cp.async issues are millions of events no command comes from."""

    wants_accesses = False

    def __init__(self):
        self.sync: list = []
        self.events = 0

    def on_sync(self, ev) -> None:
        self.events += 1
        if explorer.is_read(ev):
            self.sync.append(ev)


ENGINE_LIMITS = ("max_polls", "max_loop_iterations", "max_steps", "max_seconds", "max_memory_mb", "target")


def phase_a(func, inputs=None, *, build_programs: bool = True, clc_answers: tuple = (), clc_choice=None,
            footprint: bool = False, **limits) -> PhaseA:
    """Run NumSim once with the strict-protocol and causality observers; build the sync programs.
    `limits`: numsim.Engine's budgets and target (ENGINE_LIMITS); `clc_answers`: the first cluster launch control
    choice points' answers (numsim/ops/clc.py); `footprint`: record the facts the CLC segment search needs
    (segments.Footprint: the clusters' global reads and writes, their requests)."""
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
    causality.clocks_of = explorer.is_command
    effects = UnobservedEffects(CHECKER)
    trace = _Commands()
    observers: tuple = (strict, causality, effects, trace)
    foot = segments.Footprint() if footprint else None
    if foot is not None:
        observers += (foot,)
    engine = numsim.Engine(func, unsupported="incomplete", clc_answers=clc_answers, cohorts=numsim.CHECK_COHORT,
                           clc_choice=clc_choice, **limits)
    try:
        res = engine.run(inputs, observers=observers)
    except numsim.InputError as err:
        f = F.make(CHECKER, "analysis_incomplete", str(err), {"reason": "missing_input_bindings",
                                                              "parameters": list(err.missing)})
        return PhaseA(func, inputs, [f], {})
    found = []
    if res.halt is not None and isinstance(res.halt.payload, F.Finding):
        found.append(res.halt.payload)
    found.extend(engine_findings(CHECKER, res))
    if res.termination == "completed":
        found.extend(effects.findings())
    stats.update({"phase_a_wall_time_s": time.perf_counter() - t0, "numsim": dict(res.stats),
                  "sync_events": trace.events, "termination": res.termination})
    programs = None
    if build_programs and res.termination == "completed" and not any(f.status in (Verdict.ERROR, Verdict.INCOMPLETE)
                                                                     for f in found):
        programs = explorer.build(trace.sync, causality.event_clocks, _namer(res, causality))
    facts = foot.result() if foot is not None and res.termination == "completed" else None
    return PhaseA(func, inputs, found, stats, res, programs, facts)


def check(func, inputs=None, *, max_states: int = 200_000, max_transitions: int = 2_000_000,
          max_seconds: float = numsim.budget.DEFAULT_MAX_SECONDS, phase_b: bool = True,
          max_clc_paths: int = explorer.choices.DEFAULT_MAX_PATHS, clc_snapshots: bool = True,
          clc_segments: bool = True, **limits) -> SyncResult:
    """`max_seconds` bounds the whole check (the run, then phase B with what is left); `limits`: the run's
    other budgets and target (ENGINE_LIMITS).  A kernel whose cluster launch control requests can be answered
    either way is checked on every answer sequence: by segments (`clc_segments`, segments.py: the runs of a few
    sequences that together hold every segment of tiles one cluster can do, when the trace shows the clusters
    do not communicate), else once per answer sequence (at most `max_clc_paths` runs: explorer/choices.py).  Each
    run resumes from a snapshot of a run where its answers first differ (`clc_snapshots`, Linux: snapshots.py;
    else, or when a snapshot is lost, a whole run from the start: the same run either way)."""
    w0, t0 = time.perf_counter(), numsim.budget.now()     # wall clock for the stats, the budget clock for budgets
    snaps = snapshots.Snapshots(max_seconds + 30.0) if clc_snapshots and phase_b else None
    try:
        return _check(func, inputs, w0, t0, snaps, max_states, max_transitions, max_seconds, phase_b, max_clc_paths,
                      clc_segments, limits)
    finally:
        if snaps is not None:
            snaps.close()


def _has_clc(func) -> bool:
    return any(isinstance(n, ir.OpCall) and n.op.startswith("clusterlaunchcontrol.try_cancel")
               for n in ir.walk(ir.as_func(func).body))


class _ClcRuns:
    """The CLC answer sequences' runs of one check: each resumed from a snapshot or rerun, failures collected."""

    def __init__(self, func, inputs, t0, snaps, budgets, limits, footprint, found, verification, first):
        self.func, self.inputs, self.t0, self.snaps, self.limits = func, inputs, t0, snaps, limits
        self.max_states, self.max_transitions, self.max_seconds = budgets
        self.footprint, self.found, self.verification = footprint, found, verification
        self.simulated = [first]    # every sequence's whole-run warp-instructions, the default's first
        self.executed = first       # what was simulated: the default run, then each other from its snapshot
        self.resumed = 0            # sequences resumed from a snapshot
        self.whole = 1              # runs that finished (a run cut by the time budget is not one)
        self.reruns: list = []      # prefixes run from the start although a snapshot was taken (it was lost)
        self.done: dict = {}        # full answer sequence -> the run's facts, of every finished run

    def run(self, prefix: tuple, exact: bool = True, wanted=None, skip_at: int | None = None):
        """Run the sequence answering `prefix` (then the policy's answers): (full answers, whether it fails, the
        trace facts).  `exact`: resume only the snapshot of `prefix` itself (the depth-first search's); else the
        longest snapshot whose answers begin `prefix`, told the rest (the segment search's); `skip_at`: the choice
        point past which the run ends (the clusters still pending never run: segments.cuts)."""
        left = self.max_seconds - (numsim.budget.now() - self.t0)
        if left <= 0:
            raise _OutOfTime
        out, snaps = None, self.snaps
        key = prefix if exact else (snaps.longest(prefix) if snaps is not None else None)
        if snaps is not None and key is not None and snaps.has(key):
            try:
                out = snaps.resume(key, prefix[len(key):], wanted, skip_at)
            except snapshots.SnapshotLost as err:
                self.reruns.append({"answers": list(prefix), "why": str(err)[:500]})
        if out is not None:
            full, f, v, instr, at_fork, facts = out
            self.executed += instr - at_fork
            self.resumed += 1
        else:
            b, f, _, v = _leaf(self.func, self.inputs, prefix, numsim.budget.now(), self.max_states,
                               self.max_transitions, left, True, self.limits, snaps, self.footprint, via_hook=not exact,
                               skip_at=skip_at)
            full, instr = _summary(b, prefix)
            facts = b.facts
            self.executed += instr
        self.simulated.append(instr)
        if _out_of_time(f):
            # the check's time ran out on this sequence (it got what the earlier ones left): say so, not "the
            # run took more than <the remainder>"
            raise _OutOfTime
        self.whole += 1
        if _fails(f):
            # the default run's (review) findings stay; the failing sequence adds what makes it fail
            self.found = self.found + [_on_path(x, full) for x in f if x.status in (Verdict.ERROR, Verdict.INCOMPLETE)]
            self.verification = v
            return full, True, facts
        if skip_at is None:     # a run cut short is no sequence the depth-first search may take as run
            self.done[tuple(full)] = facts
        return full, False, facts

    def cached(self, prefix: tuple, default: bool):
        """`run` for the depth-first search after the segment search: a sequence already run is not run again
        (a run forcing `prefix` takes the policy's `default` past it, so an earlier run that did is the same)."""
        for full in self.done:
            if full[:len(prefix)] == prefix and all(x == default for x in full[len(prefix):]):
                return list(full), False
        full, stop, _ = self.run(prefix)
        return full, stop

    def by_segments(self, nclusters: int, default_run: tuple, facts, max_paths: int) -> tuple[str, int, tuple | None]:
        """The segment search (segments.py): ("covered" | "stopped" | "truncated" | why it fell back, runs,
        the failing sequence's answers)."""
        try:
            return self._segments(nclusters, default_run, facts, max_paths)
        finally:
            if self.snaps is not None:
                self.snaps.wanted = snapshots.every     # a depth-first search after this one resumes any prefix

    def _segments(self, nclusters, default_run, facts, max_paths):
        seg = segments.SegmentSearch(nclusters)
        segs = seg.add(facts)
        if segs is not None and segments.answers_of(segs) != default_run:
            seg.broken = f"the default run's answers {list(default_run)} are not its segments' {segs}"
        if seg.broken or segs is None:
            return seg.broken, 1, None
        if -(-(nclusters + 1) * (nclusters + 2) // 6) > max_paths:
            # every plan needs at least this many runs (each holds T tiles of the T(T+1)(T+2)/6 the segments
            # hold): past the bound, the depth-first search's runs are as good and the plan is not worth making
            return f"{nclusters} tiles need more than the bound of {max_paths} runs", 1, None
        todo = segments.plan(nclusters, set(segs))
        ends = segments.cuts(nclusters, set(segs), todo)
        runs = 1
        for k, (answers, end) in enumerate(zip(todo, ends)):
            if runs >= max_paths:
                return "truncated", runs, None
            # fork snapshots only where a later planned sequence can resume
            ahead = frozenset(a[:m] for a in todo[k + 1:] for m in range(1, len(a) + 1))
            if self.snaps is not None:
                self.snaps.wanted = ahead.__contains__
            full, stop, got = self.run(answers[:end], exact=False, wanted=ahead,
                                       skip_at=end - 1 if end < nclusters else None)
            runs += 1
            if stop:
                return "stopped", runs, answers
            segs = seg.add(got, end)
            if segs is not None and tuple(full) != segments.answers_of(segs, nclusters):
                seg.broken = f"the run forced {list(answers)} answered {full}, not its segments' {segs}"
            if seg.broken or not seg.verify():      # clause (3) as soon as it fails: fewer runs before falling back
                return seg.broken, runs, None
        return ("covered" if seg.complete() else "not every segment ran"), runs, None


def _check(func, inputs, w0, t0, snaps, max_states, max_transitions, max_seconds, phase_b, max_clc_paths,
           clc_segments, limits) -> SyncResult:
    # the segment search needs the runs' trace facts; one resident cluster at a time (segments.py)
    footprint = phase_b and clc_segments and limits.get("clc_resident", 1) == 1 and _has_clc(func)
    a, found, stats, verification = _leaf(func, inputs, (), t0, max_states, max_transitions, max_seconds,
                                          phase_b, limits, snaps, footprint)
    func, inputs = a.func, a.inputs
    if a.run is None:
        stats["wall_time_s"] = time.perf_counter() - w0
        return SyncResult(func, found, stats, inputs=inputs)
    clc = a.run.stats.get("clc")
    if clc is not None and clc["choices"] and phase_b and not _fails(found):
        runs = _ClcRuns(func, inputs, t0, snaps, (max_states, max_transitions, max_seconds), limits, footprint,
                        found, verification, a.run.stats.get("warp_instructions", 0))
        default = limits.get("clc_policy", "steal") == "steal"
        search: explorer.choices.ChoiceSearch | None = None
        outcome, seg_runs = "off", 0
        try:
            if footprint:
                nclusters = _clusters(a.run)
                stats["clc_segments"] = seg_stats = {"outcome": "out of time", "tiles": nclusters,
                                                     "segments": nclusters * (nclusters + 1) // 2,
                                                     "sequences": 2 ** max(nclusters - 1, 0)}
                outcome, seg_runs, failing = runs.by_segments(nclusters, tuple(clc["choices"]), a.facts, max_clc_paths)
                seg_stats.update({"outcome": outcome, "runs": seg_runs})
                if outcome in ("covered", "stopped", "truncated"):
                    search = explorer.choices.ChoiceSearch(max_paths=max_clc_paths)
                    search.paths = [((), list(clc["choices"]))] + [(p, list(p)) for p in runs.done if p]
                    search.truncated = outcome == "truncated"
                    search.stopped = failing
            if search is None:      # the sequences, depth first (the segment search's runs are not run again)
                search = explorer.choices.explore(lambda p: runs.cached(p, default), first=clc["choices"],
                                                  max_paths=max_clc_paths)
        except _OutOfTime:
            search = None
        found, verification = runs.found, runs.verification
        # the sequences checked: the segment search's runs (covering every sequence when "covered"), or the
        # depth-first search's sequences (those the segment search ran included)
        stats["clc_paths"] = (seg_runs if outcome in ("covered", "stopped", "truncated") else len(search.paths)) \
            if search is not None else None
        stats["clc_choice_points"] = search.choice_points if search is not None else len(clc["choices"])
        stats["clc_max_paths"] = max_clc_paths
        stats["clc_warp_instructions"] = sum(runs.simulated)     # every answer sequence's run, the default's included
        stats["clc_executed_warp_instructions"] = runs.executed
        stats["clc_resumed"] = runs.resumed
        if runs.reruns:
            stats["clc_snapshots_lost"] = runs.reruns
        if search is None or search.truncated:
            how = "each resumed from a snapshot of the run where its answers first differ" if runs.resumed else \
                "each a whole run of the kernel"
            found.append(F.make(CHECKER, "analysis_incomplete",
                                "cluster launch control: not every answer of the try_cancel requests was explored "
                                + (f"(out of time: the {max_seconds:g} s budget covered the default run and "
                                   f"{runs.whole - 1} other answer sequence(s), {how})"
                                   if search is None else
                                   f"(stopped at the bound of {max_clc_paths} answer sequences)"),
                                {"reason": "resource_limit", "resource": "clc_paths", "bound": max_clc_paths,
                                 "runs": runs.whole}))
    stats["wall_time_s"] = time.perf_counter() - w0
    return SyncResult(func, F.sort_findings(found), stats, verification, inputs, InputDigest(inputs), a.run.sites)


def _clusters(res) -> int:
    """The clusters of the launch (the CLC scheduler's tiles)."""
    grid, cluster = res.stats.get("grid") or (1, 1, 1), res.stats.get("cluster") or (1, 1, 1)
    n = 1
    for g, c in zip(grid, cluster):
        n *= g // max(c, 1)
    return n


def _leaf(func, inputs, answers, t0, max_states, max_transitions, max_seconds, phase_b, limits, snaps,
          footprint=False, via_hook=False, skip_at=None):
    """`_one_path` with the CLC choice points snapshotted.  In a snapshot resumed by the search this returns
    never: the snapshot's run ends here, and it sends what it found to the check's process and exits.
    `via_hook`: the answers are forced through the snapshot hook, so the run may fork at forced choice points;
    `skip_at`: the choice point past which the run ends (ops/clc.py skip_rest)."""
    hook = snaps.choice if snaps is not None and snaps.enabled else None
    forced = answers
    if hook is not None and via_hook:
        snaps.forced, snaps.skip_at, forced = tuple(answers), skip_at, ()
    elif via_hook and skip_at is not None:      # no snapshots: a hook that only forces the answers and the end
        hook, forced = _forcing(tuple(answers), skip_at), ()
    try:
        out = _one_path(func, inputs, forced, t0, max_states, max_transitions, max_seconds, phase_b, limits,
                        clc_choice=hook, footprint=footprint)
    except BaseException as err:
        if snaps is not None and snaps.resumed is not None:
            snaps.fail(err)
        raise
    finally:
        if snaps is not None and snaps.resumed is None:
            snaps.forced, snaps.skip_at = (), None
    if snaps is not None and snaps.resumed is not None:
        b, f, _, v = out
        full, instr = _summary(b, answers)
        # the verification only matters for a failing sequence (it becomes the result's phase_b)
        snaps.finish((full, f, v if _fails(f) else None, instr, snaps.resumed_steps, b.facts))
    return out


def _forcing(answers: tuple, skip_at: int):
    """numsim.Engine's clc_choice hook answering `answers`, the run ending past choice point `skip_at`."""
    def choice(taken: tuple, default: bool, steps: int):
        k = len(taken)
        answer = answers[k] if k < len(answers) else default
        return (answer, True) if k == skip_at else answer
    return choice


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


def _one_path(func, inputs, answers, t0, max_states, max_transitions, max_seconds, phase_b, limits, clc_choice=None,
              footprint=False):
    """Phase A, then phase B, on one run with the CLC answers `answers` forced (`clc_choice`: numsim.Engine's)."""
    a = phase_a(func, inputs, build_programs=phase_b, clc_answers=answers, clc_choice=clc_choice,
                footprint=footprint, max_seconds=max_seconds, **limits)
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
