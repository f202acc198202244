"""Racecheck: are two conflicting memory accesses unordered, for these inputs?

Entry point: `check(func, inputs=None, **limits)` -> `RaceResult`.  One NumSim run, with
the phase-A observers of Synccheck attached (whose findings Racecheck embeds as errors)
and Racecheck's analysis (`analysis.Analysis`) taking the access records as columns while
the run goes: it follows happens-before knowledge per lane and async operation through the
sync events and judges every conflicting pair of accesses to global, shared and TMEM
bytes, a chunk of records at a time, keeping only what later accesses can still pair with.
Races are classified (proxy bridge, same-warp lane order, release/acquire, async
lifetime, inter-actor sync) and deduplicated by (site pair, allocation).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import ir

from .. import numsim
from ..common import findings as F
from ..common.async_effects import UnobservedEffects
from ..common.phase_a import Causality, StrictProtocol
from ..common.verdict import Verdict, verdict_of
from ..common.results import InputDigest, engine_findings, limit_finding, resolve_inputs
from .analysis import Analysis
from .domains import cross_cluster_ordering

CHECKER = "racecheck"
# clocks per cluster, knowledge that crosses clusters carried in foreign lane columns (racecheck.foreign); True:
# clocks over every lane of the grid from the start (the reference split clocks are tested against)
WHOLE_GRID = False
SPACES = ("global", "shared", "tmem")
_SPACE_LABEL = {"shared": "smem", "global": "gmem", "tmem": "tmem"}
_PAIR = {("write", "read"): "write/read", ("read", "write"): "read/write", ("write", "write"): "write/write",
         ("rmw", "read"): "write/read", ("read", "rmw"): "read/write", ("rmw", "write"): "write/write",
         ("write", "rmw"): "write/write", ("rmw", "rmw"): "write/write"}


@dataclass
class RaceResult:
    func: ir.PrimFunc
    findings: list
    stats: dict
    inputs: dict = field(default_factory=dict)
    input_digest: str | InputDigest = ""    # InputDigest: hashed when a report reads it
    sites: tuple = ()

    @property
    def verdict(self) -> Verdict:
        return verdict_of(self.findings)


def check(func, inputs=None, **limits) -> RaceResult:
    """`limits`: numsim.Engine's budgets and target; the time and memory budgets cover the analysis too."""
    t0 = time.perf_counter()
    func = ir.as_func(func)
    stats: dict = {"checker": CHECKER, "spaces": list(SPACES)}
    try:
        inputs, missing = resolve_inputs(func, inputs, limits.get("max_memory_mb",
                                                                  numsim.budget.DEFAULT_MAX_MEMORY_MB))
    except numsim.ResourceLimit as err:
        stats["wall_time_s"] = time.perf_counter() - t0
        return RaceResult(func, [limit_finding(CHECKER, err)], stats, {})
    if missing:
        f = F.make(CHECKER, "analysis_incomplete", f"missing input bindings for {', '.join(missing)}",
                   {"reason": "missing_input_bindings", "parameters": missing})
        stats["wall_time_s"] = time.perf_counter() - t0
        return RaceResult(func, [f], stats, inputs)
    # clocks per cluster; the census names what may carry knowledge between clusters (racecheck.domains), which
    # then gets foreign columns as it crosses
    crossing = cross_cluster_ordering(func)
    whole = WHOLE_GRID
    why_whole = "whole-grid clocks asked for (racecheck.WHOLE_GRID)"
    try:
        res, effects, analysis = _run(func, inputs, limits, whole)
        if analysis.crossed:        # knowledge crossed clusters after all: the whole grid, from the start
            whole, why_whole = True, "knowledge crossed clusters in the run"
            res, effects, analysis = _run(func, inputs, limits, whole)
    except numsim.InputError as err:
        f = F.make(CHECKER, "analysis_incomplete", str(err), {"reason": "missing_input_bindings",
                                                              "parameters": list(err.missing)})
        return RaceResult(func, [f], {"wall_time_s": time.perf_counter() - t0}, inputs)
    found = []
    if res.halt is not None and isinstance(res.halt.payload, F.Finding):
        sync_finding = res.halt.payload
        found.append(F.make(CHECKER, sync_finding.kind, sync_finding.message,
                            dict(sync_finding.details, domain="synchronization")))
    found.extend(engine_findings(CHECKER, res))
    if res.termination == "completed":
        found.extend(effects.findings())
    ok = analysis.limit is None
    if ok:
        found.extend(race_findings(analysis, res.sites))
    else:
        found.append(limit_finding(CHECKER, analysis.limit))
    spent = analysis.wall_time_s
    stats.update({"numsim": dict(res.stats), "termination": res.termination, "accesses": res.stats["accesses"],
                  "semantic_accesses": res.stats["accesses"], "lane_accesses": analysis.lane_accesses if ok else 0,
                  "unwritten_read_lanes": analysis.unwritten_lanes,
                  "races": len(analysis.races) if ok else 0,
                  "simulation_wall_time_s": time.perf_counter() - t0 - spent, "analysis_wall_time_s": spent,
                  "analysis_chunks": analysis.chunks, "peak_live_entries": analysis.peak_live_entries,
                  "clock_domain": "grid" if whole else "cluster", "peak_clock_rows": analysis.peak_clock_rows,
                  "clock_width": analysis.clock_width,
                  **({"clock_domain_reason": why_whole} if whole else {}),
                  **({"clock_crossing": crossing, "foreign_columns": analysis.foreign_columns}
                     if crossing is not None and not whole else {}),
                  "wall_time_s": time.perf_counter() - t0})
    return RaceResult(func, F.sort_findings(found), stats, inputs, InputDigest(inputs), res.sites)


def _run(func, inputs, limits: dict, whole: bool):
    """One NumSim run with the phase-A observers and the analysis (clocks over the whole grid or per cluster)."""
    strict, causality = StrictProtocol(CHECKER), Causality(CHECKER)
    causality.record_clocks = False
    effects = UnobservedEffects(CHECKER)
    engine = numsim.Engine(func, unsupported="incomplete", cohorts=numsim.CHECK_COHORT, **limits)
    meter = engine.meter()
    analysis = Analysis(meter, whole_grid=whole)
    res = engine.run(inputs, observers=(strict, causality, effects, analysis), meter=meter)
    analysis.finish()
    return res, effects, analysis


def _warps_per_cta(res) -> int:
    block = res.stats.get("block") or (32, 1, 1)
    return (block[0] * block[1] * block[2] + 31) // 32


def _operation(sites, rec, info: dict, lane: int) -> dict:
    if rec.actor >= 0:
        op = F.operation(sites, rec.warp, rec.site, rec.iters,
                         extra={"lane": info.get("lane", lane), "async_op": True, "access": rec.kind,
                                "space": rec.space})
        op["op"] = info.get("kind", op.get("op", "async"))
        return op
    return F.operation(sites, rec.warp, rec.site, rec.iters,
                       extra={"lane": lane, "access": rec.kind, "space": rec.space, "order": rec.order})


def _is_review(race) -> bool:
    """An unwaited tcgen05.ld, then a conflicting tcgen05 write by the same warp: a register dependency the checker
    cannot see may already order them (docs/semantics.md#tcgen05-and-tmem), so this is a review, not an error.
    A dealloc has no such dependency."""
    prior, cur = race.prior_rec, race.current_rec
    if prior.actor < 0 or prior.space != "tmem" or cur.warp != prior.warp or race.current_kind == "read":
        return False
    return race.prior_info.get("kind") == "tcgen05.ld" and race.current_info.get("kind") != "tcgen05.dealloc"


def race_findings(p, sites) -> list:
    """Findings of an analysis (`Analysis` or `Pass`): races grouped by (site pair, allocation, failure), then the
    first scope mismatches."""
    groups: dict[tuple, list] = {}
    for race in p.races:
        prior, cur = race.prior_rec, race.current_rec
        key = (prior.site, cur.site, prior.alloc, prior.space, race.how[1], _is_review(race))
        groups.setdefault(key, []).append(race)
    out = []
    for (_psite, _csite, _alloc, space, failure, review), races in groups.items():
        first = races[0]
        prior, cur = first.prior_rec, first.current_rec
        lo = min(r.lo for r in races)
        hi = max(r.hi for r in races)
        domain, failure, text, bridge, hint = first.how
        pair = _PAIR.get((first.prior_kind, first.current_kind), f"{first.prior_kind}/{first.current_kind}")
        kind = "tmem_lifetime_review" if review else "data_race"
        label = _SPACE_LABEL.get(space, space)
        message = (f"unordered {pair} on {label} {prior.alloc_name}:[{lo}, {hi}) ... {domain} ordering failure: "
                   f"{text}")
        details = {"access_pair": pair.replace("/", "_"), "ordering_domain": domain, "ordering_failure": failure,
                   "prior": _operation(sites, prior, first.prior_info, first.prior_lane),
                   "current": _operation(sites, cur, first.current_info, first.current_lane),
                   "overlap": {"allocation": prior.alloc_name, "space": space, "byte_offset": lo, "byte_len": hi - lo,
                               "byte_end": hi},
                   "occurrences": sum(r.count for r in races)}
        if bridge:
            details["proxy_bridge"] = bridge
        if hint and not review:
            details["hint"] = hint
        if review:
            details["reason"] = ("the earlier tcgen05.ld may be complete through a register dependency the checker "
                                 "cannot see; otherwise add tcgen05.wait::ld before reusing the TMEM columns")
        out.append(F.make(CHECKER, kind, message, details))
    for t, cur, wlevel, level, cross in p.scope_mismatches[:16]:
        names = {1: "cta", 2: "cluster", 3: "gpu", 4: "sys", 0: "weak"}
        out.append(F.make(CHECKER, "scope_mismatch",
                          f"memory accesses use scopes .{names[wlevel]} and .{names[level]}, which do not mutually "
                          f"cover {'different-CTA' if cross else 'same-CTA'} actors",
                          {"ordering_domain": "memory", "ordering_failure": "scope_mismatch",
                           "prior": _operation(sites, t, {}, 0), "current": _operation(sites, cur, {}, 0)}))
    return out
