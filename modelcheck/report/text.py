"""Rendering findings as text (docs/architecture.md#reports): findings block, evidence lines with
source excerpts (at most 5 lines, right-aligned numbers, a caret line), hints."""
from __future__ import annotations

from pathlib import Path

from ir import Span, excerpt

from ..common.ranges import id_ranges

_EVIDENCE = (("operation", "Source"), ("related_operations", "Related"), ("prior", "Prior"), ("current", "Current"),
             ("reader", "Reader"), ("writer", "Writer"), ("wait", "Wait"))


def ranges(ids) -> str:
    """"0-3, 5": as NumSim names warps and lanes in its diagnostics, with a space after each comma."""
    return id_ranges((int(i) for i in ids), ", ")


class SourceCache:
    """Source text by file name, for excerpts (the kernel's own text first)."""

    def __init__(self, func=None):
        self.texts = {}
        if func is not None and func.source is not None and func.path:
            self.texts[func.path] = func.source

    def get(self, file: str) -> str | None:
        if file not in self.texts:
            text = None
            if file and not file.startswith("<"):
                try:
                    text = Path(file).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    text = None
            self.texts[file] = text
        return self.texts[file]


def _span(value) -> Span | None:
    if isinstance(value, Span):
        return value
    if isinstance(value, dict) and "line" in value:
        end_line = value["end_line"] if "end_line" in value else value["line"]
        return Span(value.get("file", ""), value["line"], value.get("col", 1), end_line,
                    value.get("end_col", value.get("col", 1) + 1))
    return None


def operation_lines(label: str, op: dict, sources: SourceCache, indent: int = 4, with_warp: bool = True) -> list[str]:
    pad = " " * indent
    parts = []
    if with_warp and op.get("warp", -1) is not None and op.get("warp", -1) >= 0:
        parts.append(f"warp {op['warp']}" + (f" lane {op['lane']}" if op.get("lane") is not None else ""))
    if op.get("site") is not None:
        parts.append(f"source op #{op['site']}")
    iters = op.get("iters") or []
    if iters:
        parts.append("loop iteration " + "/".join(str(i) for i in iters))
    head = f"{pad}{label}: " + ", ".join(parts) if parts else f"{pad}{label}:"
    if op.get("op") and (op.get("async_op") or op.get("access")):
        head += f" [{op['op']}]"
    lines = [head]
    span = _span(op.get("span"))
    if span is not None:
        where = f"{span.file}:{span.line}:{span.col}"
        lines.append(f"{pad}  at {where}")
        text = excerpt(sources.get(span.file), span)
        if text:
            lines.extend(f"{pad}    {line}" for line in text.splitlines())
        elif op.get("source_text"):
            lines.append(f"{pad}    {op['source_text']}")
    elif op.get("source_text"):
        lines.append(f"{pad}  {op['source_text']} [{op.get('op', '')}]")
    return lines


def finding_lines(finding, sources: SourceCache, number: int | None = None, reporters=None) -> list[str]:
    d = finding.details
    message_lines = finding.message.splitlines() or [finding.kind]
    headline = message_lines[0]
    blocked = d.get("blocked")
    if finding.kind == "deadlock" and blocked:
        headline = f"execution cannot make progress; blocked warps {ranges(b['warp'] for b in blocked)}"
    prefix = f"{number}. " if number is not None else ""
    lines = [f"  {prefix}[{finding.status.upper()}] {finding.kind}: {headline}"]
    # the rest of the message only under its own first line; a rewritten headline (deadlock) replaces
    # the message, whose content the Blocked warps groups below show
    rest = message_lines[1:] if headline == message_lines[0] else []
    lines.extend(f"    {line}" for line in rest)
    for key, label in (("access_pair", "Access pair"), ("reason", "Reason"), ("cause", "Cause")):
        if d.get(key):
            lines.append(f"    {label}: {d[key]}")
    for key, label in _EVIDENCE:
        value = d.get(key)
        if isinstance(value, dict):
            lines.extend(operation_lines(label, value, sources))
        elif isinstance(value, list):
            for op in value:
                if isinstance(op, dict):
                    lines.extend(operation_lines(label, op, sources))
    if blocked:
        groups: dict[tuple, list] = {}
        for b in blocked:
            op = b.get("operation", {})
            group = (_awaits(b.get("awaits", "?")), op.get("site"))
            groups.setdefault(group, []).append(b)
        for (awaits, _), items in groups.items():
            lines.append(f"    Blocked warps {ranges(b['warp'] for b in items)}: await {awaits}")
            if items[0].get("state") and items[0]["state"] not in awaits:
                lines.append(f"      Barrier state: {items[0]['state']}")
            op = items[0].get("operation")
            if op:
                lines.extend(operation_lines("Source", op, sources, indent=6, with_warp=False))
    witness = d.get("witness")
    if witness:
        shown = witness[-6:]
        lines.append(f"    Witness schedule ({len(witness)} transition(s){', last 6' if len(witness) > 6 else ''}):")
        for step in shown:
            lines.append(f"      {_step_text(step)}")
    for k, schedule in enumerate(d.get("witnesses") or []):     # nonconfluence: schedules with different ends
        shown = schedule[-6:]
        lines.append(f"    Schedule {k + 1} ({len(schedule)} transition(s){', last 6' if len(schedule) > 6 else ''}):")
        for step in shown:
            lines.append(f"      {_step_text(step)}")
    if d.get("hint"):
        lines.append(f"    Hint: {d['hint']}")
    if reporters:
        lines.append(f"    Id: {finding.id} (reported by {' and '.join(reporters)})")
    return lines


def _awaits(text: str) -> str:
    """'await mbarrier.try_wait on full[0]; phase 0' -> 'mbarrier.try_wait; phase 0' (docs/architecture.md#reports: the
    awaited op, then '; '-separated particulars; the Source line below names the barrier)."""
    head, sep, tail = text.removeprefix("await ").partition("; ")
    return head.split(" on ", 1)[0] + sep + tail


def _step_text(step: dict) -> str:
    if step.get("transition") == "complete":
        return f"async {step.get('completion')} completion lands on {step.get('barrier')} ({step.get('amount')})"
    iters = step.get("iters") or []
    it = f", loop iteration {'/'.join(map(str, iters))}" if iters else ""
    return (f"warp {step.get('warp')}: {step.get('command')} on {step.get('barrier')} "
            f"(source op #{step.get('site')}{it})")


def findings_block(findings, sources: SourceCache, numbered: bool = False, reporters: dict | None = None) -> list[str]:
    """The findings as text; `numbered`: prefix each with its 1-based number (`replay --finding N`);
    `reporters`: finding id -> the checkers that reported it (an Id line says so)."""
    if not findings:
        return []
    lines = [f"=== Verdict findings ({len(findings)}) ==="]
    for k, f in enumerate(findings, 1):
        lines.extend(finding_lines(f, sources, k if numbered else None, (reporters or {}).get(f.id)))
        lines.append("")
    return lines
