"""ReplayReport: what the forced schedule did differently from NumSim's default schedule.

`outcome`: reproduced (the forced run deadlocks, hits a protocol or memory error the default run
does not, ends with other output values, or a read observes another write) | no_difference |
schedule_not_followed (the forced order could not be taken: the held and blocked warps say why)
| default_schedule (the finding does not depend on the schedule; the default run shows it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..common.findings import json_safe

SCHEMA_VERSION = 1
SHOWN_READS = 8


@dataclass
class RunSummary:
    """One run (default or forced): how it ended, its diagnostics, and the schedule's progress."""

    termination: str
    diagnostics: list                       # [{kind, status, message, details}]
    schedule: dict | None = None            # numsim Gate.progress(), forced runs only
    protocol: dict | None = None            # the first strict-protocol violation observed, if any

    def errors(self) -> list:
        return [d for d in self.diagnostics if d["status"] == "error"]

    def to_dict(self) -> dict:
        return json_safe({"termination": self.termination, "diagnostics": self.diagnostics,
                          "schedule": self.schedule, "protocol": self.protocol})


@dataclass
class ReplayReport:
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

    # ------------------------------------------------------------------ text
    def format(self) -> str:
        lines = [f"replay {self.outcome.upper().replace('_', ' ')} - {self.kernel}"
                 + (f": {self.finding['kind']} ({self.finding['id']})" if self.finding else "")]
        lines += self._body()
        for k, alt in enumerate(self.alternatives, 2):
            lines.append("")
            lines.append(f"witness {k}: replay {alt.outcome.upper().replace('_', ' ')}")
            lines += alt._body()
        return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"

    def _body(self) -> list[str]:
        lines = [f"  schedule ({self.method.replace('_', ' ')}): {self.explanation}"]
        for n, step in enumerate(self.steps, 1):
            mark = "x" if step.get("done") else " "
            lines.append(f"    [{mark}] {n:>2}. {step['label']}{_where(step.get('operation'))}")
        prog = self.forced.schedule
        early = prog.get("out_of_order") if prog and self.method == "reversed_pair" else None
        if prog and not prog.get("followed") and self.steps:
            nxt = prog.get("next")
            lines.append(f"    forced schedule not followed: step {nxt + 1 if nxt is not None else '?'} never "
                         f"became possible" + (" (every warp had finished)" if prog.get("abandoned_at") is not None
                                               else ""))
        elif early:
            lines.append(f"    forced schedule not followed: step(s) {', '.join(str(k + 1) for k in early)} happened "
                         f"before their turn (NumSim performs that access earlier than the order asks)")
        if self.note and self.outcome == "schedule_not_followed":
            lines.append(f"    why: {self.note}")
        lines.append(f"  default schedule: {_ending(self.default)}")
        if self.method == "default_schedule":
            for d in self.default.diagnostics:
                for b in d.get("details", {}).get("blocked", []) if d["kind"] == "deadlock" else []:
                    lines.append(f"    blocked warp {b['warp']}: {b.get('awaits', '?')}{_iters(b.get('iters'))}")
            if self.default.protocol:
                p = self.default.protocol
                lines.append(f"  protocol violation on the default schedule: {p['kind']}: {p['message']}")
            return lines
        lines.append(f"  forced schedule:  {_ending(self.forced)}")
        for d in self.forced.diagnostics:
            for b in d.get("details", {}).get("blocked", []) if d["kind"] in ("deadlock", "schedule_stuck") else []:
                held = " (held by the forced schedule)" if b.get("held_by_schedule") else ""
                lines.append(f"    blocked warp {b['warp']}: {b.get('awaits', '?')}{held}"
                             f"{_iters(b.get('iters'))}")
        for name, state in sorted(self.final_barriers.items()):
            lines.append(f"  {name} ends: {state}")
        if self.forced.protocol and self.forced.protocol != self.default.protocol:
            p = self.forced.protocol
            lines.append(f"  protocol violation on the forced schedule: {p['kind']}: {p['message']}")

        if self.difference_count:
            lines.append(f"  outputs: {self.difference_count} element(s) differ")
            for d in self.differences:
                idx = ", ".join(str(i) for i in d["index"])
                lines.append(f"    {d['output']}[{idx}]: default {d['default']}, replayed {d['replayed']}")
            if self.difference_count > len(self.differences):
                lines.append(f"    ... {self.difference_count - len(self.differences)} more")
        elif self.forced.termination == "completed" or self.default.termination == "completed":
            lines.append("  outputs: identical")
        if self.difference_count and self.forced.termination not in ("completed", "error"):
            lines.append("    (the forced run stopped before the end: its outputs are partial)")
        if self.reads:
            total = max(self.read_count, len(self.reads))
            lines.append(f"  reads that observed another write or another round's value ({total}):")
            for r in self.reads[:SHOWN_READS]:
                lines += _read_lines(r)
            if total > SHOWN_READS:
                lines.append(f"    ... {total - SHOWN_READS} more")
        return lines

    def print(self) -> None:
        print(self.format(), end="")

    def headline(self) -> str:
        """One line: the outcome and its most telling evidence (for embedding, e.g. in a ProofReport)."""
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
        wrong = next((r for r in self.reads if any(_other_round(w, r["read"]) for w in r["saw"])), None)
        if wrong is not None:
            w = next(w for w in wrong["saw"] if _other_round(w, wrong["read"]))
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

    def to_dict(self) -> dict:
        return json_safe({
            "schema_version": SCHEMA_VERSION, "checker": "replay", "kernel": self.kernel, "finding": self.finding,
            "outcome": self.outcome, "effects": list(self.effects), "method": self.method,
            "explanation": self.explanation, "steps": self.steps, "default": self.default.to_dict(),
            "forced": self.forced.to_dict(), "differences": self.differences,
            "difference_count": self.difference_count, "reads": self.reads, "read_count": self.read_count,
            "alternatives": [a.to_dict() for a in self.alternatives], "note": self.note,
            "final_barriers": self.final_barriers, "stats": self.stats})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def _where(op: dict | None) -> str:
    if not op:
        return ""
    span = op.get("span")
    line = getattr(span, "line", None) if span is not None and not isinstance(span, dict) else \
        (span or {}).get("line")
    text = op.get("source_text", "")
    at = f"line {line}" if line else f"site {op.get('site')}"
    return f"  [{at}{_iters(op.get('iters'))}: {text}]" if text else f"  [{at}{_iters(op.get('iters'))}]"


def _iters(iters) -> str:
    return f", iteration {'/'.join(str(i) for i in iters)}" if iters else ""


def _ending(run: RunSummary) -> str:
    errs = [d for d in run.diagnostics if d["status"] in ("error", "incomplete")]
    if not errs:
        return f"{run.termination}"
    d = errs[0]
    return f"{run.termination}: {d['kind']}: {d['message']}"


def _other_round(w: dict | None, read: dict) -> bool:
    """A write made in another iteration of the loops it shares with the read (observe.other_round)."""
    if w is None or read is None:
        return False
    wi, ri = list(w.get("iters") or ()), list(read.get("iters") or ())
    return bool(wi) and bool(ri) and wi[0] != ri[0]


def _writer_text(w: dict | None, read_iters) -> str:
    if w is None:
        return "the initial contents"
    rounds = ""
    if _other_round(w, {"iters": read_iters}):
        rounds = f" -- a value from iteration {'/'.join(map(str, w['iters']))}, read in iteration " \
                 f"{'/'.join(map(str, read_iters))}"
    return f"the {w.get('event', 'write')} by warp {w['warp']}{_where(w)}{rounds}"


def _writers(ws: list, read_iters, total: int | None = None, shown: int = 2) -> str:
    """The first writes a read saw (another round's first, as kept by the report), and how many more."""
    total = len(ws) if total is None else total
    text = "; ".join(_writer_text(w, read_iters) for w in ws[:shown])
    return text + (f"; and {total - shown} more write(s)" if total > shown else "")


def _read_lines(r: dict) -> list[str]:
    read = r["read"]
    lines = [f"    read of {r['allocation']} by warp {read['warp']}{_where(read)}"]
    iters = read.get("iters")
    lines.append("      saw " + _writers(r["saw"], iters, r.get("saw_count")))
    if r["default_saw"] is None:
        lines.append("      (the default schedule never ran this read)")
    elif r["default_saw"] == r["saw"] and r.get("default_saw_count") == r.get("saw_count"):
        lines.append("      (so did the default schedule)")
    else:
        lines.append("      default schedule saw " + _writers(r["default_saw"], iters, r.get("default_saw_count")))
    return lines
