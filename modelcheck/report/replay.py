"""Replays rendered: `ReplayReport(result)` wraps a `replay.ReplayResult` with the text and JSON
views (`format()`, `print()`, `to_dict()`, `to_json()`), and reads through to the result's fields
(`outcome`, `effects`, `differences`, `reads`, `summary()`, ...)."""
from __future__ import annotations

import json

from ..common.findings import json_safe
from ..common.verdict import Verdict
from ..replay.result import ReplayResult, RunSummary, other_round
from .view import ResultView

SCHEMA_VERSION = 1
SHOWN_READS = 8


class ReplayReport(ResultView):
    """What the forced schedule did differently from the default one (`modelcheck.replay(...)`)."""

    checker = "replay"

    result: ReplayResult

    def format(self) -> str:
        return format_replay(self.result)

    def print(self) -> None:
        print(self.format(), end="")

    def to_dict(self) -> dict:
        return replay_dict(self.result)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def run_dict(run: RunSummary) -> dict:
    return json_safe({"termination": run.termination, "diagnostics": run.diagnostics,
                      "schedule": run.schedule, "protocol": run.protocol})


def format_replay(r: ReplayResult) -> str:
    """The text report: outcome, schedule steps, both runs' endings, differing outputs and reads."""
    lines = [f"replay {r.outcome.upper().replace('_', ' ')} - {r.kernel}"
             + (f": {r.finding['kind']} ({r.finding['id']})" if r.finding else "")]
    lines += _body(r)
    for k, alt in enumerate(r.alternatives, 2):
        lines.append("")
        lines.append(f"witness {k}: replay {alt.outcome.upper().replace('_', ' ')}")
        lines += _body(alt)
    return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"

def _body(r: ReplayResult) -> list[str]:
    lines = [f"  schedule ({r.method.replace('_', ' ')}): {r.explanation}"]
    for n, step in enumerate(r.steps, 1):
        mark = "x" if step.get("done") else " "
        lines.append(f"    [{mark}] {n:>2}. {step['label']}{_where(step.get('operation'))}")
    prog = r.forced.schedule
    early = prog.get("out_of_order") if prog and r.method == "reversed_pair" else None
    if prog and not prog.get("followed") and r.steps:
        nxt = prog.get("next")
        lines.append(f"    forced schedule not followed: step {nxt + 1 if nxt is not None else '?'} never "
                     f"became possible" + (" (every warp had finished)" if prog.get("abandoned_at") is not None
                                           else ""))
    elif early:
        lines.append(f"    forced schedule not followed: step(s) {', '.join(str(k + 1) for k in early)} happened "
                     f"before their turn (NumSim performs that access earlier than the order asks)")
    if r.note and r.outcome == "schedule_not_followed":
        lines.append(f"    why: {r.note}")
    lines.append(f"  default schedule: {_ending(r.default)}")
    if r.method == "default_schedule":
        for d in r.default.diagnostics:
            for b in d.get("details", {}).get("blocked", []) if d["kind"] == "deadlock" else []:
                lines.append(f"    blocked warp {b['warp']}: {b.get('awaits', '?')}{_iters(b.get('iters'))}")
        if r.default.protocol:
            p = r.default.protocol
            lines.append(f"  protocol violation on the default schedule: {p['kind']}: {p['message']}")
        return lines
    lines.append(f"  forced schedule:  {_ending(r.forced)}")
    for d in r.forced.diagnostics:
        for b in d.get("details", {}).get("blocked", []) if d["kind"] in ("deadlock", "schedule_stuck") else []:
            held = " (held by the forced schedule)" if b.get("held_by_schedule") else ""
            lines.append(f"    blocked warp {b['warp']}: {b.get('awaits', '?')}{held}"
                         f"{_iters(b.get('iters'))}")
    for name, state in sorted(r.final_barriers.items()):
        lines.append(f"  {name} ends: {state}")
    if r.forced.protocol and r.forced.protocol != r.default.protocol:
        p = r.forced.protocol
        lines.append(f"  protocol violation on the forced schedule: {p['kind']}: {p['message']}")

    if r.difference_count:
        lines.append(f"  outputs: {r.difference_count} element(s) differ")
        for d in r.differences:
            idx = ", ".join(str(i) for i in d["index"])
            lines.append(f"    {d['output']}[{idx}]: default {d['default']}, replayed {d['replayed']}")
        if r.difference_count > len(r.differences):
            lines.append(f"    ... {r.difference_count - len(r.differences)} more")
    elif r.forced.termination == "completed" or r.default.termination == "completed":
        lines.append("  outputs: identical")
    if r.difference_count and r.forced.termination not in ("completed", "error"):
        lines.append("    (the forced run stopped before the end: its outputs are partial)")
    if r.reads:
        total = max(r.read_count, len(r.reads))
        lines.append(f"  reads that observed another write or another round's value ({total}):")
        for read in r.reads[:SHOWN_READS]:
            lines += _read_lines(read)
        if total > SHOWN_READS:
            lines.append(f"    ... {total - SHOWN_READS} more")
    return lines


def replay_dict(r: ReplayResult) -> dict:
    """The JSON view: every field of the result, JSON-safe."""
    return json_safe({
        "schema_version": SCHEMA_VERSION, "checker": "replay", "kernel": r.kernel, "finding": r.finding,
        "outcome": r.outcome, "effects": list(r.effects), "method": r.method,
        "explanation": r.explanation, "steps": r.steps, "default": run_dict(r.default),
        "forced": run_dict(r.forced), "differences": r.differences,
        "difference_count": r.difference_count, "reads": r.reads, "read_count": r.read_count,
        "alternatives": [replay_dict(a) for a in r.alternatives], "note": r.note,
        "final_barriers": r.final_barriers, "stats": r.stats})


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
    errs = [d for d in run.diagnostics if d["status"] in (Verdict.ERROR, Verdict.INCOMPLETE)]
    if not errs:
        return f"{run.termination}"
    d = errs[0]
    return f"{run.termination}: {d['kind']}: {d['message']}"


def _writer_text(w: dict | None, read_iters) -> str:
    if w is None:
        return "the initial contents"
    rounds = ""
    if other_round(w, {"iters": read_iters}):
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


__all__ = ["ReplayReport", "format_replay", "replay_dict", "run_dict"]
