"""Reports: the one layer that renders findings as text, JSON and SARIF (docs/architecture.md#reports).

`SyncCheckReport` and `RaceReport` share the interface: `verdict`, `findings`,
`print()`, `format()`, `to_dict()`, `to_sarif()`, `require_clean()`, `stats`.
"""
from __future__ import annotations

from ..common import findings as F
from ..common.verdict import STATUSES, Verdict, verdict_of
from .coverage import coverage_lines, manifest_note, schedules_text
from .sarif import to_sarif
from .text import SourceCache, findings_block

SCHEMA_VERSION = 1


class CheckFailed(RuntimeError):
    """`require_clean()` on a report whose verdict is not clean."""


class Report:
    checker = ""

    def __init__(self, func, findings, stats, input_digest="", scalars=None):
        self.func = func
        self.findings = F.sort_findings(findings)
        self.stats = dict(stats)
        self._input_digest = input_digest     # a str, or a common.results.InputDigest hashed when first read
        self.scalars = dict(scalars or {})
        self.sources: dict = {}        # parameter -> where its value came from (the command line sets it)
        self.overrides: dict = {}      # the module constants given with --const / load(..., NAME=V)
        self.kernel_path = func.path

    @property
    def input_digest(self) -> str:
        return str(self._input_digest)

    def coverage(self) -> list[str]:
        """What this report covered: constants, input sources, launch, schedules; a manifest note."""
        lines = ["covered:"] + coverage_lines(self, self.overrides)
        lines.append(f"  schedules: {schedules_text(self)}")
        note = manifest_note(self.func, self.checker, self.verdict, self.kernel_path)
        if note:
            lines.append(note)
        return lines

    @property
    def verdict(self) -> Verdict:
        return verdict_of(self.findings)

    def counts(self) -> dict:
        return {s.value: sum(1 for f in self.findings if f.status == s) for s in STATUSES}

    def summary(self) -> str:
        return f"{self.checker} {self.verdict.upper()} ({len(self.findings)} findings)"

    def header(self) -> list[str]:
        raise NotImplementedError

    def footer(self) -> list[str]:
        return []

    def format(self, coverage: bool = True) -> str:
        """The report as text (docs/architecture.md#reports): header, findings, footer; then, unless `coverage`
        is False, what it covered (constants, input sources, launch, schedules)."""
        sources = SourceCache(self.func)
        lines = list(self.header())
        block = findings_block(self.findings, sources)
        if block:
            lines.append("")
            lines.extend(block)
        lines.extend(self.footer())
        if coverage:
            lines.extend(self.coverage())
        return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"

    def print(self) -> None:
        print(self.format(), end="")

    def to_dict(self) -> dict:
        """docs/architecture.md#reports: exactly schema_version, checker, verdict, summary, findings, stats, input.

        stats always has wall_time_s, accesses, verifier_states and verifier_transitions (0 when
        phase B did not run), plus the kernel's name, path and module constants."""
        stats = dict(self.stats)
        stats.setdefault("wall_time_s", 0.0)
        stats.setdefault("accesses", (stats.get("numsim") or {}).get("accesses", 0))
        stats.setdefault("verifier_states", 0)
        stats.setdefault("verifier_transitions", 0)
        kernel = {"name": self.func.name, "path": self.func.path,
                  "constants": {c.name: c.value for c in self.func.constants}}
        if self.func.origin:      # a real tvm object: whose lines the spans name
            kernel["source"] = self.func.origin
        stats.setdefault("kernel", kernel)
        return {
            "schema_version": SCHEMA_VERSION,
            "checker": self.checker,
            "verdict": self.verdict,
            "summary": self.summary(),
            "findings": [f.to_dict() for f in self.findings],
            "stats": F.json_safe(stats),
            "input": {"digest": self.input_digest, "scalars": F.json_safe(self.scalars),
                      "sources": dict(self.sources)},
        }

    def to_sarif(self) -> dict:
        return to_sarif(self)

    def require_clean(self) -> None:
        if self.verdict is not Verdict.CLEAN:
            c = self.counts()
            raise CheckFailed(f"{self.checker} {self.verdict} (error={c['error']}, incomplete={c['incomplete']}, "
                              f"review={c['review']})\n{self.format()}")


class SyncCheckReport(Report):
    checker = "synccheck"

    def __init__(self, result):
        from ..common.results import scalars_of
        super().__init__(result.func, result.findings, result.stats, result.input_digest,
                         scalars_of(result.func, result.inputs))
        self.result = result

    def header(self) -> list[str]:
        n = len(self.findings)
        if "verifier_states" in self.stats:
            label = (f"{self.stats['verifier_states']} verifier states / "
                     f"{self.stats['verifier_transitions']} verifier transitions")
        else:
            label = "direct execution"
        return [f"synccheck {self.verdict.upper()} - {n} finding(s); native phase {self.func.name}, {label}"]


class RaceReport(Report):
    checker = "racecheck"

    def __init__(self, result):
        from ..common.results import scalars_of
        super().__init__(result.func, result.findings, result.stats, result.input_digest,
                         scalars_of(result.func, result.inputs))
        self.result = result

    def header(self) -> list[str]:
        return [f"=== racecheck {self.verdict.upper()} ==="]

    def footer(self) -> list[str]:
        spaces = self.stats.get("spaces", ["global", "shared", "tmem"])
        return ([] if self.findings else [""]) + [f"race conflicts checked in {', '.join(spaces)}",
                f"native phase {self.func.name}: {self.stats.get('semantic_accesses', 0)} semantic memory access(es)"]


from .combined import CheckReport  # noqa: E402  (it builds on Report)

__all__ = ["Report", "SyncCheckReport", "RaceReport", "CheckReport", "CheckFailed", "SCHEMA_VERSION"]
