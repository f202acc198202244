"""ProofReport: per barrier family and property, proved / refuted (with sizes and the confirming
finding) / incomplete (with the reason), and the solver time (DESIGN §8)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

NAMES = {"P1": "every generation receives exactly its arrivals (and tx bytes)",
         "P2": "every wait observes the generation it intends",
         "P3": "the waits of generation g happen before any mutation of generation g+1",
         "P4": "no deadlock; arrivals and bytes balance at exit"}


@dataclass
class PropertyResult:
    family: str
    prop: str
    status: str                  # proved | refuted | incomplete
    seconds: float
    sizes: dict = field(default_factory=dict)
    note: str = ""
    finding: object = None
    replay: dict | None = None   # the confirming finding replayed on NumSim (ReplayReport.summary())
    events: tuple = ()           # the events of the counterexample: warp, op, barrier, generation, iteration, line

    def to_dict(self) -> dict:
        out = {"family": self.family, "property": self.prop, "meaning": NAMES[self.prop], "status": self.status,
               "solver_seconds": round(self.seconds, 4)}
        if self.status == "refuted":
            out["counterexample"] = {"sizes": self.sizes}
            if self.events:
                out["counterexample"]["events"] = list(self.events)
            if self.finding is not None:
                out["counterexample"]["confirmed_by"] = {"kind": self.finding.kind, "message": self.finding.message,
                                                        "details": _jsonable(self.finding.details)}
            if self.replay is not None:
                out["counterexample"]["replay"] = _jsonable(self.replay)
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class ProofReport:
    kernel: str
    symbolic: tuple
    ranges: dict
    properties: list = field(default_factory=list)
    reasons: list = field(default_factory=list)       # why the proof is incomplete as a whole
    skeleton: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)

    def incomplete(self, reason: str, span=None) -> None:
        if span is not None and str(span) not in reason:
            reason = f"{span}: {reason}"      # where: the op or launch the reason names
        self.reasons.append(reason)

    def finish(self, t0: float, c0: float, ledger=None) -> "ProofReport":
        """Record the wall time and CPU time since t0 (perf_counter) and c0 (process_time), and what z3 spent
        (`solving.Ledger`: checks and rlimit counts per query kind)."""
        if ledger is not None:
            self.stats.update(ledger.stats())
        self.stats["wall_time_s"] = time.perf_counter() - t0
        self.stats["cpu_time_s"] = time.process_time() - c0
        self.stats["solver_seconds"] = sum(p.seconds for p in self.properties)
        return self

    @property
    def verdict(self) -> str:
        statuses = {p.status for p in self.properties}
        if "refuted" in statuses:
            return "refuted"
        if self.reasons or "incomplete" in statuses or not self.properties:
            return "incomplete"
        return "proved"

    @property
    def counterexample(self) -> dict | None:
        for p in self.properties:
            if p.status == "refuted":
                return p.to_dict()["counterexample"] | {"family": p.family, "property": p.prop}
        return None

    def format(self, verbose: bool = False) -> str:
        """Refutations first (sizes, events, replay), then one line per family; `verbose`: every property of
        every family with its solver time.  Says what the proof covers: the sync protocol (P1-P4) for every
        size in range -- data races are checked only where Racecheck ran."""
        rng = ", ".join(f"{n} in [{lo}, {'inf' if hi is None else hi}]" for n, (lo, hi) in self.ranges.items())
        lines = [f"prove {self.verdict} - {self.kernel} for all {rng}"]
        for r in self.reasons:
            lines.append(f"  incomplete: {r}")
        fams: dict = {}
        for p in self.properties:
            fams.setdefault(p.family, []).append(p)
        refuted = [p for p in self.properties if p.status == "refuted"]
        if refuted:
            lines.append(f"  refuted ({len(refuted)}):")
            for p in refuted:
                lines.extend(self._property_lines(p))
        if fams:
            lines.append(f"  families ({len(fams)}):")
        for fam in sorted(fams):
            props = sorted(fams[fam], key=lambda x: x.prop)
            by = {}
            for p in props:
                by.setdefault(p.status, []).append(p.prop)
            status = "refuted" if "refuted" in by else ("incomplete" if "incomplete" in by else "proved")
            parts = [f"{st} {'/'.join(ps)}" for st, ps in sorted(by.items(), key=lambda kv: ("refuted", "incomplete",
                                                                                             "proved").index(kv[0]))]
            secs = sum(p.seconds for p in props)
            lines.append(f"    {fam:<28} {status:<10} ({'; '.join(parts)}) {secs:6.3f} s")
            if verbose:
                for p in props:
                    if p.status != "refuted":
                        lines.extend(self._property_lines(p))
        if not verbose and any(p.note and p.status != "refuted" for p in self.properties):
            lines.append("    (--verbose shows each property with its note)")
        lines.extend(self.coverage_lines())
        st = self.stats
        if self.verdict == "refuted":
            how = (f"happens-before certificate: decided concretely at {st.get('concrete_sizes', 0)} size(s); "
                   f"{st.get('certificate', '')}")
        else:
            how = (f"happens-before certificate: {st.get('z3_queries', 0) + st.get('path_queries', 0)} z3 queries, "
                   f"{st.get('path_templates', 0)} path templates, {st.get('ranking_queries', 0)} ranking checks "
                   f"over {st.get('ranking_coefficients', 0)} coefficients, decided concretely at "
                   f"{st.get('concrete_sizes', 0)} sizes")
        lines.append(f"  solver {st.get('solver_seconds', 0.0):.3f} s, wall {st.get('wall_time_s', 0):.3f} s, {how}")
        return "\n".join(lines) + "\n"

    def _property_lines(self, p) -> list[str]:
        lines = [f"    {p.family} {p.prop} {p.status:<10} {p.seconds:7.3f} s  {NAMES[p.prop]}"]
        if p.status == "refuted":
            lines.append(f"       counterexample: {fmt_sizes(p.sizes)} (the smallest failing size Synccheck "
                         f"confirms)")
            for ev in p.events:
                lines.append(f"       event: {_event_text(ev)}")
        if p.note:
            lines.append(f"       {p.note}")
        if p.status == "refuted" and p.replay is not None:
            lines.append(f"       replay: {p.replay.get('headline', p.replay.get('outcome'))}")
        return lines

    def coverage_lines(self) -> list[str]:
        """What the verdict covers: which properties for which sizes, the inputs, and what it does not cover."""
        rng = ", ".join(f"{n}={lo}..{'' if hi is None else hi}" for n, (lo, hi) in self.ranges.items())
        proved = sorted({p.prop for p in self.properties if p.status == "proved"})
        lines = ["covered:",
                 f"  properties: {', '.join(proved) or 'none'} of P1-P4 proved for every {rng}"]
        sources = getattr(self, "sources", None)
        if sources:
            groups: dict = {}
            for name, src in sources.items():
                groups.setdefault(src, []).append(name)
            lines.append("  inputs: " + "; ".join(f"{', '.join(n)} <- {src}" for src, n in groups.items()))
        lines.append("  not covered: data races (the proof is about the synchronization protocol); Racecheck "
                     "checks them only at the sizes it runs (`modelcheck race KERNEL --const N=V`)")
        return lines

    def print(self) -> None:
        print(self.format(), end="")

    def to_dict(self) -> dict:
        return {"schema_version": 1, "checker": "prove", "kernel": self.kernel, "verdict": self.verdict,
                "symbolic": {n: {"lo": lo, "hi": hi} for n, (lo, hi) in self.ranges.items()},
                "properties": [p.to_dict() for p in self.properties], "incomplete": list(self.reasons),
                "counterexample": self.counterexample, "skeleton": self.skeleton,
                "stats": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.stats.items()}}


def fmt_sizes(sizes: dict) -> str:
    """Sizes as `N=3, M=2`, in name order."""
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))


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
