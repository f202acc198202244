"""`explain(report, finding)`: why a finding's operations are (not) ordered, or why warps hang.

Assumes a report (or checker result) that keeps its kernel and inputs (`report.result.func`
/ `.inputs`, as `SyncCheckReport` and `RaceReport` do) and one of its findings (the
object, its 1-based number in `report.findings`, or its id).  The graph is built by one
NumSim run of that kernel on those inputs.

- race (`data_race`, `tmem_lifetime_review`, `scope_mismatch`): the two accesses are found
  in the run; the answer is the shortest state path ordering them, or the statement that
  none exists and which edge would be needed (a lane-order edge, an arrive->wait edge from
  one warp to the other, a completion the reader must observe, a proxy bridge);
  (a tcgen05.dealloc counts as a write of its allocation, as Racecheck judges it);
- `deadlock`: the blocked warps, the barrier generation each awaits, who arrives on that
  barrier in the run, and the wait-for cycle among the blocked warps when there is one
  (for a phase-B deadlock, the witness schedule too);
- a generation mutated before its predecessor's consumption (`mbarrier_arrive_before_
  consumption` and the prior-generation kinds): the waits that consumed generation g - 1
  and whether a path orders any of them before the mutation;
- another finding with an operation and related operations (e.g. init not before a use):
  whether a path orders a related operation before it.
"""
from __future__ import annotations

from ir.errors import UsageError

from ..common import findings as F
from .build import build
from .describe import Explanation
from .races import explain_race
from .waits import explain_consumption, explain_deadlock, explain_operations

_RACE_KINDS = ("data_race", "tmem_lifetime_review", "scope_mismatch")
_CONSUMPTION_KINDS = ("mbarrier_arrive_before_consumption", "mbarrier_prior_generation_not_consumed",
                      "mbarrier_prior_generation_consumption_not_happens_before")


def select(report, finding):
    """The finding meant by `finding`: a Finding, a 1-based number, or an id (or unique id prefix)."""
    if hasattr(finding, "kind") and hasattr(finding, "details"):
        return finding
    findings = list(report.findings)
    try:
        return F.select(findings, finding)
    except F.NoSuchFinding as err:
        if err.reason == "range":
            raise UsageError(f"finding {err.which} does not exist: the report has {err.count} finding(s), "
                             f"numbered from 1") from None
        known = ", ".join(f.id for f in findings) or "none"
        what = "is ambiguous" if err.reason == "several" else "is not in the report"
        raise UsageError(f"finding {err.which!r} {what}; ids: {known}") from None


def explain(report, finding, hb=None) -> Explanation:
    """Explain one finding of `report` (see the module docstring); `hb` reuses an already built graph."""
    f = select(report, finding)
    result = getattr(report, "result", report)
    if hb is None:
        if getattr(result, "func", None) is None or getattr(result, "inputs", None) is None:
            raise ValueError("explain needs a report that keeps its kernel and inputs (modelcheck.synccheck / "
                             "modelcheck.racecheck reports do)")
        hb = build(result.func, result.inputs)
    if f.kind in _RACE_KINDS and "prior" in f.details and "current" in f.details:
        return explain_race(hb, f)
    if f.kind == "deadlock":
        return explain_deadlock(hb, f)
    if f.kind in _CONSUMPTION_KINDS and "operation" in f.details and f.details.get("generation") is not None:
        return explain_consumption(hb, f)
    if "operation" in f.details and f.details.get("related_operations"):
        return explain_operations(hb, f)
    return Explanation(f.id, f.kind, None, f"{f.kind}: no happens-before question to answer for this finding kind "
                                          f"(it names no pair of operations and no blocked warps)")
