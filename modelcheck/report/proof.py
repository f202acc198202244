"""Proofs rendered: `ProofReport(result)` wraps a `prover.ProofResult` with the text, JSON and
SARIF views (`format()`, `print()`, `to_dict()`, `to_sarif()`), and reads through to the
result's fields (`verdict`, `properties`, `reasons`, `stats`, ...)."""
from __future__ import annotations

import json

from ..common.verdict import Proof
from ..prover.result import NAMES, ProofResult, PropertyResult, fmt_sizes
from .sarif import to_sarif as _findings_sarif

SCHEMA_VERSION = 1


class ProofReport:
    """A proof's outcome, per barrier family and property, and how it was reached."""

    checker = "prove"

    def __init__(self, result: ProofResult):
        self.result = result

    def __getattr__(self, name):
        if name == "result":                 # not yet set (while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.result, name)

    @property
    def verdict(self) -> Proof:
        return self.result.verdict

    @property
    def counterexample(self) -> dict | None:
        """The first refuted property's counterexample (sizes, events, confirming finding, replay), or None."""
        for p in self.result.properties:
            if p.status is Proof.REFUTED:
                return property_dict(p)["counterexample"] | {"family": p.family, "property": p.prop}
        return None

    def format(self) -> str:
        return format_proof(self.result)

    def print(self) -> None:
        print(self.format(), end="")

    def to_dict(self) -> dict:
        r = self.result
        return {"schema_version": SCHEMA_VERSION, "checker": "prove", "kernel": r.kernel, "verdict": r.verdict,
                "symbolic": {n: {"lo": lo, "hi": hi} for n, (lo, hi) in r.ranges.items()},
                "properties": [property_dict(p) for p in r.properties], "incomplete": list(r.reasons),
                "counterexample": self.counterexample, "skeleton": r.skeleton,
                "stats": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.stats.items()}}

    def to_sarif(self) -> dict:
        """One SARIF run: each refuted property as the finding that confirmed it (with its source locations),
        a refutation without one as a `prove_refuted` error, an open proof as one `prove_incomplete` warning."""
        return {"version": "2.1.0", "$schema": _SARIF_SCHEMA, "runs": [sarif_run(self.result)]}


_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def property_dict(p: PropertyResult) -> dict:
    out = {"family": p.family, "property": p.prop, "meaning": NAMES[p.prop], "status": p.status,
           "solver_seconds": round(p.seconds, 4)}
    if p.status is Proof.REFUTED:
        cex: dict = {"sizes": p.sizes}
        out["counterexample"] = cex
        if p.events:
            cex["events"] = list(p.events)
        if p.finding is not None:
            f = p.finding
            cex["confirmed_by"] = {"kind": f.kind, "message": f.message,  # type: ignore[attr-defined]
                                   "details": _jsonable(f.details)}      # type: ignore[attr-defined]
        if p.replay is not None:
            cex["replay"] = _jsonable(p.replay)
    if p.note:
        out["note"] = p.note
    return out


def format_proof(r: ProofResult) -> str:
    rng = ", ".join(f"{n} in [{lo}, {'inf' if hi is None else hi}]" for n, (lo, hi) in r.ranges.items())
    lines = [f"prove {r.verdict} - {r.kernel} for all {rng}"]
    for reason in r.reasons:
        lines.append(f"  incomplete: {reason}")
    fams: dict = {}
    for p in r.properties:
        fams.setdefault(p.family, []).append(p)
    for fam in sorted(fams):
        lines.append(f"  {fam}:")
        for p in sorted(fams[fam], key=lambda x: x.prop):
            lines.append(f"    {p.prop} {p.status:<10} {p.seconds:7.3f} s  {NAMES[p.prop]}")
            if p.status is Proof.REFUTED:
                lines.append(f"       counterexample: {fmt_sizes(p.sizes)} (the smallest failing size Synccheck "
                             f"confirms)")
                for ev in p.events:
                    lines.append(f"       event: {_event_text(ev)}")
            if p.note:
                lines.append(f"       {p.note}")
            if p.status is Proof.REFUTED and p.replay is not None:
                lines.append(f"       replay: {p.replay.get('headline', p.replay.get('outcome'))}")
    st = r.stats
    if r.verdict is Proof.REFUTED:
        how = (f"happens-before certificate: decided concretely at {st.get('concrete_sizes', 0)} size(s); "
               f"{st.get('certificate', '')}")
    else:
        how = (f"happens-before certificate: {st.get('z3_queries', 0) + st.get('path_queries', 0)} z3 queries, "
               f"{st.get('path_templates', 0)} path templates, {st.get('ranking_queries', 0)} ranking checks "
               f"over {st.get('ranking_coefficients', 0)} coefficients, decided concretely at "
               f"{st.get('concrete_sizes', 0)} sizes")
    lines.append(f"  solver {st.get('solver_seconds', 0.0):.3f} s, wall {st.get('wall_time_s', 0):.3f} s, {how}")
    return "\n".join(lines) + "\n"


def sarif_run(r: ProofResult) -> dict:
    """The proof as one SARIF run (see `ProofReport.to_sarif`)."""
    refuted = [p for p in r.properties if p.status is Proof.REFUTED]
    confirmed = [p for p in refuted if p.finding is not None]
    view = _FindingsView(r.verdict, [p.finding for p in confirmed])
    run = _findings_sarif(view)["runs"][0]
    for p, res in zip(confirmed, run["results"]):
        res["message"]["text"] = f"{p.family} {p.prop} refuted at {fmt_sizes(p.sizes)}: {res['message']['text']}"
        res["properties"] = {"family": p.family, "property": p.prop, "sizes": dict(p.sizes)}
    extra = []
    for p in refuted:
        if p.finding is None:
            extra.append(("prove_refuted", "error", f"{p.family} {p.prop} refuted at {fmt_sizes(p.sizes)}"))
    if r.verdict is Proof.INCOMPLETE:
        extra.append(("prove_incomplete", "warning", "; ".join(r.reasons) or "the proof stays open"))
    for rule, level, text in extra:
        if rule not in {x["id"] for x in run["tool"]["driver"]["rules"]}:
            run["tool"]["driver"]["rules"].append({"id": rule, "name": rule,
                                                   "shortDescription": {"text": rule.replace("_", " ")},
                                                   "defaultConfiguration": {"level": level}})
        run["results"].append({"ruleId": rule, "level": level, "message": {"text": text}})
    return run


class _FindingsView:
    """What `report.sarif.to_sarif` reads of a checker report: the checker, its verdict and findings."""

    checker = "prove"

    def __init__(self, verdict, findings):
        self.verdict = verdict
        self.findings = findings


def _event_text(ev: dict) -> str:
    if "warp" not in ev:
        return f"generation {ev['generation']} of {ev['generation_of']}"
    where = "" if ev.get("iteration") is None else f", iteration {ev['iteration']}"
    line = f", line {ev['line']}" if ev.get("line") is not None else ""
    return f"warp {ev['warp']} {ev['op']} on {ev['barrier']}, generation {ev['generation']}{where}{line}"


def _jsonable(x):
    try:
        json.dumps(x)
        return x
    except TypeError:
        return json.loads(json.dumps(x, default=str))


__all__ = ["ProofReport", "format_proof", "property_dict", "sarif_run"]
