"""`CheckReport`: Synccheck and Racecheck as one list of findings, one entry per bug.

Racecheck runs Synccheck's phase-A protocol checks and the engine's own checks on its
execution, so a barrier misuse or an out-of-bounds access is reported by both checkers.
`merge` keeps the first report's finding (Synccheck's, with its id) and drops a later one
whose kind and details -- without source locations and the `domain` tag Racecheck adds --
are the same; the dropped ids stay aliases (`CheckReport.select` accepts them, `to_dict`
lists them under `also_reported_as`).  Numbers (`replay --finding N`) follow this list.
"""
from __future__ import annotations

from ..common import findings as F
from .coverage import schedules_text
from .sarif import to_sarif
from .text import SourceCache, findings_block

_ORDER = ["clean", "review", "incomplete", "error"]
_CHECKER_ONLY = ("domain",)


def merge_key(f) -> str:
    details = {k: v for k, v in f.details.items() if k not in _CHECKER_ONLY}
    return F.finding_id("", f.kind, details)


def merge(reports) -> tuple[list, dict]:
    """(findings, {kept id: [(checker, alias id), ...]}) over `reports` in order."""
    kept: dict[str, F.Finding] = {}
    aliases: dict[str, list] = {}
    for r in reports:
        for f in r.findings:
            key = merge_key(f)
            if key in kept:
                if kept[key].id != f.id:
                    aliases.setdefault(kept[key].id, []).append((r.checker, f.id))
                continue
            kept[key] = f
    findings = F.sort_findings(kept.values())
    return findings, aliases


class CheckReport:
    """`modelcheck check`: the reports of Synccheck and Racecheck with their findings merged."""

    checker = "check"

    def __init__(self, reports):
        if not reports:
            raise ValueError("CheckReport needs at least one report")
        self.reports = list(reports)
        self.func = self.reports[0].func
        self.result = getattr(self.reports[0], "result", None)
        self.findings, self.aliases = merge(self.reports)
        self.stats = {r.checker: r.stats for r in self.reports}

    @property
    def sources(self) -> dict:
        return self.reports[0].sources

    @property
    def verdict(self) -> str:
        return max((r.verdict for r in self.reports), key=_ORDER.index)

    def counts(self) -> dict:
        return {s: sum(1 for f in self.findings if f.status == s) for s in ("error", "incomplete", "review")}

    def checker_of(self, finding) -> list[str]:
        """The checkers that reported `finding`."""
        first = finding.id.partition(":")[0]
        return [first] + [c for c, _ in self.aliases.get(finding.id, [])]

    def select(self, which):
        """Finding `which`: a 1-based number in `findings`, an id or unique id prefix, or an alias id."""
        if isinstance(which, str) and not which.isdigit():
            exact = [kept for kept, al in self.aliases.items() if any(a == which for _, a in al)]
            prefix = {kept for kept, al in self.aliases.items() if any(a.startswith(which) for _, a in al)}
            own = [f for f in self.findings if f.id.startswith(which)]
            if exact:
                which = exact[0]
            elif len(prefix) == 1 and not own:
                which = prefix.pop()
        return F.select(self.findings, which)

    def summary(self) -> str:
        return f"check {self.verdict.upper()} ({len(self.findings)} findings)"

    def format(self) -> str:
        lines = []
        for r in self.reports:
            lines.extend(r.header())
        block = findings_block(self.findings, SourceCache(self.func), numbered=True,
                               reporters={f.id: self.checker_of(f) for f in self.findings})
        if block:
            lines.append("")
            lines.extend(block)
        for r in self.reports:
            lines.extend(line for line in r.footer() if line)
        lines.extend(self.reports[0].coverage() if len(self.reports) == 1 else self._coverage())
        return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"

    def _coverage(self) -> list[str]:
        first = self.reports[0].coverage()
        out = [line for line in first if not line.startswith(("  schedules:", "note:"))]
        for r in self.reports:
            out.append(f"  {r.checker}: {schedules_text(r)}")
        out.extend(n for r in self.reports for n in r.coverage() if n.startswith("note:"))
        return out

    def print(self) -> None:
        print(self.format(), end="")

    def to_dict(self) -> dict:
        findings = []
        for f in self.findings:
            d = f.to_dict()
            d["reported_by"] = self.checker_of(f)
            d["also_reported_as"] = [a for _, a in self.aliases.get(f.id, [])]
            findings.append(d)
        first = self.reports[0].to_dict()
        return {"schema_version": first["schema_version"], "checker": self.checker, "verdict": self.verdict,
                "summary": self.summary(), "findings": findings,
                "stats": {r.checker: r.to_dict()["stats"] for r in self.reports}, "input": first["input"],
                "reports": [{"checker": r.checker, "verdict": r.verdict, "summary": r.summary()}
                            for r in self.reports]}

    def to_sarif(self, category: str | None = None) -> dict:
        return to_sarif(self, category=category)

    def require_clean(self) -> None:
        from . import CheckFailed
        if self.verdict != "clean":
            c = self.counts()
            raise CheckFailed(f"check {self.verdict} (error={c['error']}, incomplete={c['incomplete']}, "
                              f"review={c['review']})\n{self.format()}")
