"""Refutations: a property the invariant does not settle is searched for a real counterexample.

Two searches, cheapest first.  z3 unrolls the transition system from the initial state
(bounded model checking, the symbolic sizes minimized) within a per-property time
budget.  Whatever it finds is confirmed on NumSim: the kernel is specialized to each
size from the lower bound up to the one found and checked by Synccheck (every schedule of
the fixed program at that size), so the reported size is the smallest that really fails,
with Synccheck's finding as the witness; that finding is then replayed on NumSim at that
size (`modelcheck.replay`: its witness schedule next to the default one) and the replay's
outcome -- the stuck warps, the wrong-round reads -- goes into the report.  Properties z3 could not refute in its budget
get one more chance from the same concrete sweep over small sizes; a finding is
attributed to a property by its kind and to a family by the barriers it names.
"""
from __future__ import annotations

import re
import time

from .induction import Outcome, bmc
from .model import Model

BMC_SECONDS = 6.0
SWEEP_SIZES = 12

# finding kind -> the property it breaks
KIND_PROPERTY = {
    "deadlock": "P4", "named_barrier_leftover": "P4",
    "mbarrier_arrive_before_consumption": "P3",
    "mbarrier_prior_generation_consumption_not_happens_before": "P3",
    "mbarrier_prior_generation_not_consumed": "P3",
    "mbarrier_arrival_overflow": "P1", "mbarrier_transaction_over_delivery": "P1",
    "named_barrier_arrival_overflow": "P1", "named_barrier_contract_mismatch": "P1",
    "mbarrier_invalid_phase": "P2",
}


class Sweep:
    """Synccheck of the kernel specialized to given sizes, each size checked once."""

    def __init__(self, func, specialize):
        self.func = func
        self.specialize = specialize
        self.results: dict = {}
        self.seconds = 0.0

    def errors(self, sizes: dict):
        key = tuple(sorted(sizes.items()))
        if key not in self.results:
            from .. import synccheck
            t0 = time.monotonic()
            try:
                small, inputs = self.specialize(self.func, sizes)
                rep = synccheck(small, inputs)
                errors = [f for f in rep.findings if f.status == "error"]
                if not errors and rep.verdict == "incomplete":
                    why = "; ".join(f.message for f in rep.findings if f.status == "incomplete") or "incomplete"
                    raise RuntimeError(f"Synccheck could not check {fmt_sizes(sizes)}: {why}")
                self.results[key] = errors
            except Exception as err:      # noqa: BLE001 - a size that cannot be specialized is reported as such
                self.results[key] = err
            self.seconds += time.monotonic() - t0
        return self.results[key]

    def first_failure(self, ranges: dict, upto: dict, names_on: str):
        """The smallest value of `names_on` (others as in `upto`) at which Synccheck reports an error."""
        lo = ranges[names_on][0]
        for v in range(lo, upto[names_on] + 1):
            sizes = dict(upto)
            sizes[names_on] = v
            errs = self.errors(sizes)
            if isinstance(errs, Exception):
                return sizes, errs
            if errs:
                return sizes, errs
        return None, None


def families_named(finding, families) -> set:
    text = repr(finding.details) + " " + finding.message
    return {f for f in families if re.search(rf"\b{re.escape(f)}\[", text)}


def refute(model: Model, func, ranges: dict, unknown: dict, deadline: float, specialize, max_depth: int) -> dict:
    """(family, property) -> Outcome for the properties induction left unknown."""
    out = _refute(model, func, ranges, unknown, deadline, specialize, max_depth)
    replays: dict = {}
    for outcome in out.values():
        if outcome.status == "refuted" and outcome.finding is not None:
            key = (tuple(sorted(outcome.model.items())), outcome.finding.id)
            if key not in replays:
                replays[key] = confirm_by_replay(func, specialize, outcome.model, outcome.finding)
            outcome.replay = replays[key]
    return out


def confirm_by_replay(func, specialize, sizes: dict, finding) -> dict:
    """Replay the confirming finding on the kernel specialized to `sizes`: a summary of what it shows."""
    from ..replay import PlanError, replay
    try:
        small, inputs = specialize(func, sizes)
        return replay(small, inputs, finding).summary()
    except PlanError as err:
        return {"outcome": "not_replayable", "headline": f"not replayable: {err}"}


def _refute(model: Model, func, ranges: dict, unknown: dict, deadline: float, specialize, max_depth: int) -> dict:
    sweep = Sweep(func, specialize)
    first = sorted(ranges)[0]
    lo, hi = ranges[first]
    top = lo + SWEEP_SIZES - 1 if hi is None else min(hi, lo + SWEEP_SIZES - 1)
    # the concrete sweep first: it is cheap, and a kernel already known to fail needs little z3 budget
    failing, failure = sweep.first_failure(ranges, {n: r[0] for n, r in ranges.items()} | {first: top}, first)
    if isinstance(failure, Exception) or not failure:
        failing, failure = None, None
    out = {}
    for key, prior in sorted(unknown.items()):
        budget = BMC_SECONDS if failure is None else BMC_SECONDS / 3
        found = bmc(model, key, max_depth, min(deadline, time.monotonic() + budget))
        seconds = prior.seconds + found.seconds
        if found.status == "refuted":
            sizes, errs = sweep.first_failure(ranges, found.model, first)
            if isinstance(errs, Exception):
                out[key] = Outcome("incomplete", seconds, found.model, found.depth,
                                   note=f"cannot specialize to {fmt_sizes(found.model)}: {errs}")
            elif errs:
                res = Outcome("refuted", seconds, sizes, found.depth,
                              note=f"confirmed on NumSim at {fmt_sizes(sizes)}: {errs[0].kind}: {errs[0].message}")
                res.finding = errs[0]
                out[key] = res
            else:
                out[key] = Outcome("incomplete", seconds, found.model, found.depth,
                                   note=f"z3 found a violating trace at {fmt_sizes(found.model)} but Synccheck finds "
                                        f"none up to there: the skeleton abstraction is coarser than the kernel")
            continue
        out[key] = _from_sweep(model, key, seconds, f"{prior.note}; {found.note}", failing, failure, lo)
    return out


def _from_sweep(model, key, seconds, note, sizes, failure, lo) -> Outcome:
    """The concrete sweep's failure, if it breaks this property of this family; else incomplete."""
    if failure is None:
        return Outcome("incomplete", seconds, note=note)
    f = failure[0]
    prop = KIND_PROPERTY.get(f.kind)
    fams = families_named(f, model.families)
    fam, p = key
    if (prop is None or prop == p) and (not fams or fam in fams):
        res = Outcome("refuted", seconds, sizes, None,
                      note=f"found by checking sizes from {lo}: Synccheck at {fmt_sizes(sizes)}: {f.kind}: {f.message}")
        res.finding = f
        return res
    return Outcome("incomplete", seconds, note=f"{note}; the kernel fails at {fmt_sizes(sizes)} ({f.kind})")


def fmt_sizes(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
