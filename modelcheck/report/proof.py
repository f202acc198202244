"""Proofs rendered: `ProofReport(result)` wraps a `prover.ProofResult` with the text, JSON and
SARIF views (`format()`, `print()`, `to_dict()`, `to_sarif()`), and reads through to the
result's fields (`verdict`, `properties`, `reasons`, `stats`, ...)."""
from __future__ import annotations

import json

from ..common.verdict import Proof
from ..prover.result import NAMES, ProofResult, PropertyResult, fmt_sizes
from .sarif import to_sarif as _findings_sarif
from .view import ResultView

SCHEMA_VERSION = 1


class ProofReport(ResultView):
    """A proof's outcome, per barrier family and property, and how it was reached."""

    checker = "prove"

    result: ProofResult
    # set by `modelcheck prove` after the proof (unset otherwise: reads fall through to the result)
    sources: dict
    kernel_path: str

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

    def format(self, verbose: bool = False) -> str:
        return format_proof(self.result, verbose, self.__dict__.get("sources"))

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


def format_proof(r: ProofResult, verbose: bool = False, sources: dict | None = None) -> str:
    """Refutations first (sizes, events, replay), then one line per family; `verbose`: every property of every
    family with its solver time.  Says what the proof covers: the sync protocol (P1-P4) for every size in
    range -- data races are checked only where Racecheck ran."""
    rng = ", ".join(f"{n} in [{lo}, {'inf' if hi is None else hi}]" for n, (lo, hi) in r.ranges.items())
    lines = [f"prove {r.verdict} - {r.kernel} for all {rng}"]
    for reason in r.reasons:
        lines.append(f"  incomplete: {reason}")
    fams: dict = {}
    for p in r.properties:
        fams.setdefault(p.family, []).append(p)
    refuted = [p for p in r.properties if p.status is Proof.REFUTED]
    if refuted:
        lines.append(f"  refuted ({len(refuted)}):")
        for p in refuted:
            lines.extend(_property_lines(p))
    if fams:
        lines.append(f"  families ({len(fams)}):")
    order = ("refuted", "incomplete", "proved")
    for fam in sorted(fams):
        props = sorted(fams[fam], key=lambda x: x.prop)
        by: dict = {}
        for p in props:
            by.setdefault(str(p.status), []).append(p.prop)
        status = "refuted" if "refuted" in by else ("incomplete" if "incomplete" in by else "proved")
        parts = [f"{st} {'/'.join(ps)}" for st, ps in sorted(by.items(), key=lambda kv: order.index(kv[0]))]
        secs = sum(p.seconds for p in props)
        lines.append(f"    {fam:<28} {status:<10} ({'; '.join(parts)}) {secs:6.3f} s")
        if verbose:
            for p in props:
                if p.status is not Proof.REFUTED:
                    lines.extend(_property_lines(p))
    if not verbose and any(p.note and p.status is not Proof.REFUTED for p in r.properties):
        lines.append("    (--verbose shows each property with its note)")
    lines.extend(coverage_lines(r, sources))
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


def _property_lines(p: PropertyResult) -> list[str]:
    lines = [f"    {p.family} {p.prop} {p.status:<10} {p.seconds:7.3f} s  {NAMES[p.prop]}"]
    if p.status is Proof.REFUTED:
        lines.append(f"       counterexample: {fmt_sizes(p.sizes)} (the smallest failing size Synccheck confirms)")
        for ev in p.events:
            lines.append(f"       event: {_event_text(ev)}")
    if p.note:
        lines.append(f"       {p.note}")
    if p.status is Proof.REFUTED and p.replay is not None:
        lines.append(f"       replay: {p.replay.get('headline', p.replay.get('outcome'))}")
    return lines


def coverage_lines(r: ProofResult, sources: dict | None = None) -> list[str]:
    """What the verdict covers: which properties for which sizes, the inputs, and what it does not cover."""
    rng = ", ".join(f"{n}={lo}..{'' if hi is None else hi}" for n, (lo, hi) in r.ranges.items())
    proved = sorted({p.prop for p in r.properties if p.status is Proof.PROVED})
    lines = ["covered:", f"  properties: {', '.join(proved) or 'none'} of P1-P4 proved for every {rng}"]
    if r.stats.get("source"):
        lines.append(f"  source: {r.stats['source']}")
    if sources:
        groups: dict = {}
        for name, src in sources.items():
            groups.setdefault(src, []).append(name)
        lines.append("  inputs: " + "; ".join(f"{', '.join(n)} <- {src}" for src, n in groups.items()))
    lines.append("  not covered: data races (the proof is about the synchronization protocol); Racecheck "
                 "checks them only at the sizes it runs (`modelcheck race KERNEL --const N=V`)")
    return lines


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
