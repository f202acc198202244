"""ProofResult: per barrier family and property, proved / refuted (with sizes and the confirming
finding) / incomplete (with the reason), and the solver time.  Data only: `modelcheck.report.proof`
renders it (text, JSON, SARIF)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..common.verdict import Proof

NAMES = {"P1": "every generation receives exactly its arrivals (and tx bytes)",
         "P2": "every wait observes the generation it intends",
         "P3": "the waits of generation g happen before any mutation of generation g+1",
         "P4": "no deadlock; arrivals and bytes balance at exit"}


@dataclass
class PropertyResult:
    family: str
    prop: str
    status: Proof
    seconds: float
    sizes: dict = field(default_factory=dict)
    note: str = ""
    finding: object = None
    replay: dict | None = None   # the confirming finding replayed on NumSim (ReplayResult.summary())
    events: tuple = ()           # the events of the counterexample: warp, op, barrier, generation, iteration, line


@dataclass
class ProofResult:
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

    def finish(self, t0: float, c0: float, ledger=None) -> ProofResult:
        """Record the wall time and CPU time since t0 (perf_counter) and c0 (process_time), and what z3 spent
        (`solving.Ledger`: checks and rlimit counts per query kind)."""
        if ledger is not None:
            self.stats.update(ledger.stats())
        self.stats["wall_time_s"] = time.perf_counter() - t0
        self.stats["cpu_time_s"] = time.process_time() - c0
        self.stats["solver_seconds"] = sum(p.seconds for p in self.properties)
        return self

    @property
    def verdict(self) -> Proof:
        statuses = {p.status for p in self.properties}
        if Proof.REFUTED in statuses:
            return Proof.REFUTED
        if self.reasons or Proof.INCOMPLETE in statuses or not self.properties:
            return Proof.INCOMPLETE
        return Proof.PROVED


def fmt_sizes(sizes: dict) -> str:
    """Sizes as `N=3, M=2`, in name order."""
    return ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
