"""SARIF 2.1.0: one rule per finding kind; results with physical locations and related
locations for the other operations involved (docs/architecture.md#reports)."""
from __future__ import annotations

from ..common import findings as F

_LEVEL = {"error": "error", "incomplete": "warning", "review": "note"}


def _location(op: dict, message: str | None = None):
    span = op.get("span")
    if span is None:
        return None
    if not isinstance(span, dict):
        span = F.json_safe(span)
    loc = {"physicalLocation": {"artifactLocation": {"uri": span["file"]},
                                "region": {"startLine": span["line"], "startColumn": span["col"],
                                           "endLine": span.get("end_line", span["line"]),
                                           "endColumn": span.get("end_col", span["col"] + 1)}}}
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


def to_sarif(report) -> dict:
    kinds = sorted({f.kind for f in report.findings})
    rules = []
    for k in kinds:
        info = F.kind(k)
        rule = {"id": k, "name": k, "shortDescription": {"text": k.replace("_", " ")},
                "defaultConfiguration": {"level": _LEVEL.get(info.status, "error")}}
        if info.hint:
            rule["help"] = {"text": info.hint}
        rules.append(rule)
    results = []
    for f in report.findings:
        ops = list(_ops(f.details))
        first = next((k for k, (key, op) in enumerate(ops) if key in ("operation", "current", "blocked")
                      and _location(op)), None)
        primary = _location(ops[first][1]) if first is not None else None
        related, seen = [], [primary["physicalLocation"]] if primary else []
        for k, (key, op) in enumerate(ops):
            loc = _location(op, f"{key}: warp {op.get('warp')}")
            # the other operations' places, each once (not the primary one again, nor the same
            # wait of several blocked warps)
            if loc and k != first and loc["physicalLocation"] not in seen:
                seen.append(loc["physicalLocation"])
                loc["id"] = len(related)
                related.append(loc)
        result = {"ruleId": f.kind, "level": _LEVEL[f.status], "message": {"text": f.message},
                  "partialFingerprints": {"modelcheckFindingId": f.id}}
        if primary:
            result["locations"] = [primary]
        if related:
            result["relatedLocations"] = related
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "modelcheck", "informationUri": "https://github.com/modelcheck/modelcheck",
                                "rules": rules}},
            "results": results,
            "properties": {"checker": report.checker, "verdict": report.verdict},
        }],
    }
