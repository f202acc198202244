"""ReplayResult: what the forced schedule did differently from NumSim's default schedule.
Data only: `modelcheck.report.replay` renders it (text, JSON).

`outcome`: reproduced (the forced run deadlocks, hits a protocol or memory error the default run
does not, ends with other output values, or a read observes another write) | no_difference |
schedule_not_followed (the forced order could not be taken: the held and blocked warps say why)
| default_schedule (the finding does not depend on the schedule; the default run shows it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..common.findings import json_safe
from ..common.verdict import Verdict


@dataclass
class RunSummary:
    """One run (default or forced): how it ended, its diagnostics, and the schedule's progress."""

    termination: str
    diagnostics: list                       # [{kind, status, message, details}]
    schedule: dict | None = None            # numsim Gate.progress(), forced runs only
    protocol: dict | None = None            # the first strict-protocol violation observed, if any

    def errors(self) -> list:
        return [d for d in self.diagnostics if d["status"] == Verdict.ERROR]


@dataclass
class ReplayResult:
    kernel: str
    finding: dict | None                    # {id, kind, message} of what was replayed
    method: str                             # witness | reversed_pair | overtaking | default_schedule
    explanation: str
    steps: list                             # [{label, operation?, done, order}]
    default: RunSummary
    forced: RunSummary
    differences: list = field(default_factory=list)
    difference_count: int = 0
    reads: list = field(default_factory=list)          # the first MAX_READS reads that saw another write
    read_count: int = 0
    outcome: str = "no_difference"
    effects: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)   # more witnesses of the same finding (non-confluence)
    note: str = ""                                      # why the forced order may be impossible in NumSim
    final_barriers: dict = field(default_factory=dict)  # barrier name -> how it ends on the forced schedule
    stats: dict = field(default_factory=dict)

    def headline(self) -> str:
        """One line: the outcome and its most telling evidence (for embedding, e.g. in a proof's counterexample)."""
        parts = []
        for d in self.forced.errors():
            if d["kind"] == "deadlock":
                warps = sorted({b["warp"] for b in d.get("details", {}).get("blocked", [])})
                what = d.get("details", {}).get("blocked", [{}])[0].get("awaits", "")
                parts.append(f"deadlock, blocked warp(s) {', '.join(map(str, warps))} ({what})")
            else:
                parts.append(f"{d['kind']}: {d['message']}")
        if self.forced.protocol and self.forced.protocol != self.default.protocol:
            parts.append(f"{self.forced.protocol['kind']}")
        if self.difference_count:
            d = self.differences[0]
            idx = ", ".join(str(i) for i in d["index"])
            parts.append(f"{self.difference_count} output element(s) differ ({d['output']}[{idx}]: default "
                         f"{d['default']}, replayed {d['replayed']})")
        wrong = next((r for r in self.reads if any(other_round(w, r["read"]) for w in r["saw"])), None)
        if wrong is not None:
            w = next(w for w in wrong["saw"] if other_round(w, wrong["read"]))
            parts.append(f"warp {wrong['read']['warp']} read {wrong['allocation']} in iteration "
                         f"{'/'.join(map(str, wrong['read']['iters']))} and saw the value of iteration "
                         f"{'/'.join(map(str, w['iters']))}")
        text = "; ".join(parts) if parts else "no visible difference"
        if self.method == "default_schedule":
            return f"the default schedule shows it (it does not depend on the schedule): {text}"
        return f"{self.outcome.replace('_', ' ')} ({self.method.replace('_', ' ')}): {text}"

    def summary(self) -> dict:
        """The outcome, effects and first evidence, JSON-safe (the full report is `to_dict()`)."""
        return json_safe({"outcome": self.outcome, "method": self.method, "effects": list(self.effects),
                          "headline": self.headline(), "differences": self.differences[:4],
                          "difference_count": self.difference_count,
                          "blocked": [b for d in self.forced.errors() for b in d.get("details", {}).get("blocked", [])],
                          "steps": len(self.steps)})


def other_round(w: dict | None, read: dict) -> bool:
    """A write made in another iteration of the loops it shares with the read (observe.other_round)."""
    if w is None or read is None:
        return False
    wi, ri = list(w.get("iters") or ()), list(read.get("iters") or ())
    return bool(wi) and bool(ri) and wi[0] != ri[0]
