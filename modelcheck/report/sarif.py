"""SARIF 2.1.0 that GitHub code scanning accepts (docs/architecture.md#reports).

One run per log: the tool `modelcheck`, its `automationDetails.id` naming the category
(`modelcheck/check/`, `modelcheck/sync/`, ... -- one category per command, so uploads of
different commands do not replace each other's alerts), one rule per finding kind with its
page (`docs/kinds/KIND.md`) as help, and one result per finding with a physical location:
the finding's operation, else the kernel's def line (an `incomplete` result says what was
not analysed, and points at the kernel).  Several reports (kernels) go into the one run.
Related locations name the other operations involved.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from ..common import findings as F
from . import kinds

_LEVEL = {"error": "error", "incomplete": "warning", "review": "note"}
SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/modelcheck/modelcheck"


def artifact_uri(file: str) -> str:
    """A URI reference for `file`: relative to the working directory when inside it (what code scanning maps to
    the repository), else a file:// URI."""
    p = Path(file)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri()
    return quote(p.as_posix())


def _region(span: dict) -> dict:
    line = max(int(span["line"]), 1)
    col = max(int(span.get("col") or 1), 1)
    end_line = max(int(span.get("end_line") or line), line)
    end_col = int(span.get("end_col") or col + 1)
    if end_line == line and end_col <= col:
        end_col = col + 1
    return {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col}


def _location(op: dict, message: str | None = None):
    span = op.get("span")
    if span is None:
        return None
    if not isinstance(span, dict):
        span = F.json_safe(span)
    if not span.get("file") or not span.get("line"):
        return None
    loc: dict[str, object] = {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(span["file"])},
                                                   "region": _region(span)}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _ops(details: dict):
    for key in ("operation", "prior", "current", "related_operations", "reader", "writer", "wait"):
        value = details.get(key)
        if isinstance(value, dict):
            yield key, value
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, dict):
                    yield key, v
    for b in details.get("blocked", []) or []:
        if isinstance(b, dict) and isinstance(b.get("operation"), dict):
            yield "blocked", b["operation"]
    if isinstance(details.get("span"), dict):        # a finding placed at a span of its own (unsupported op)
        yield "operation", {"span": details["span"]}


def kernel_location(func) -> dict:
    """The kernel's def line (where a finding about the whole kernel points)."""
    span = getattr(func, "span", None)
    file = getattr(span, "file", None) or func.path or "<kernel>"
    line = getattr(span, "line", 1) or 1
    col = getattr(span, "col", 1) or 1
    return {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(file)},
                                 "region": _region({"line": line, "col": col})},
            "message": {"text": f"kernel {func.name}"}}


def rule(kind: str) -> dict:
    info = F.kind(kind)
    text = kinds.help_text(kind)
    return {"id": kind, "name": "".join(w.capitalize() for w in kind.split("_")),
            "shortDescription": {"text": kind.replace("_", " ")},
            "fullDescription": {"text": kinds.summary(kind)},
            "help": {"text": text, "markdown": text},
            "defaultConfiguration": {"level": _LEVEL.get(info.status, "error")},
            "properties": {"status": info.status, "tags": ["concurrency", "gpu"]}}


def results(report) -> list[dict]:
    out = []
    for f in report.findings:
        ops = list(_ops(f.details))
        first = next((k for k, (key, op) in enumerate(ops) if key in ("operation", "current", "blocked")
                      and _location(op)), None)
        if first is None:
            first = next((k for k, (_, op) in enumerate(ops) if _location(op)), None)
        func = getattr(report, "func", None)
        primary = _location(ops[first][1]) if first is not None else \
            (kernel_location(func) if func is not None else None)
        related: list[dict] = []
        seen = [primary["physicalLocation"]] if primary else []
        for k, (key, op) in enumerate(ops):
            loc = _location(op, f"{key}: warp {op.get('warp')}")
            # the other operations' places, each once (not the primary one again, nor the same
            # wait of several blocked warps)
            if loc and k != first and loc["physicalLocation"] not in seen:
                seen.append(loc["physicalLocation"])
                loc["id"] = len(related)
                related.append(loc)
        result = {"ruleId": f.kind, "level": _LEVEL.get(f.status, "error"),
                  "message": {"text": f.message or f.kind},
                  "partialFingerprints": {"modelcheckFindingId": f.id},
                  "properties": {"status": f.status, "kernel": getattr(func, "name", "")}}
        if primary:
            result["locations"] = [primary]
        if related:
            result["relatedLocations"] = related
        out.append(result)
    return out


def to_sarif_log(reports, category: str) -> dict:
    """One SARIF log, one run, of several reports (kernels) of one command (`category`: check, sync, ...)."""
    from .. import __version__
    kinds_seen = sorted({f.kind for r in reports for f in r.findings})
    res = [r for report in reports for r in results(report)]
    rules = [rule(k) for k in kinds_seen]      # results name their rule by ruleId (runs may be merged: no index)
    verdicts = {getattr(getattr(r, "func", None), "name", r.checker): r.verdict for r in reports}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "modelcheck", "version": __version__, "semanticVersion": __version__,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "automationDetails": {"id": f"modelcheck/{category}/"},
            "originalUriBaseIds": {"SRCROOT": {"uri": Path(os.getcwd()).as_uri() + "/"}},
            "results": res,
            "properties": {"checker": category, "verdict": _worst(verdicts.values()), "verdicts": verdicts},
        }],
    }


def _worst(verdicts) -> str:
    order = ["clean", "proved", "review", "incomplete", "error", "refuted"]
    return max(verdicts, key=lambda v: order.index(v) if v in order else len(order), default="clean")


def to_sarif(report, category: str | None = None) -> dict:
    return to_sarif_log([report], category or report.checker)
