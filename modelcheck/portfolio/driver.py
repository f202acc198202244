"""One batch run: plan -> tasks -> the ones not yet recorded -> executor -> records -> outputs.

`run_batch` is `modelcheck.batch`.  The driver is the only writer of the results file: an
executor calls `emit` once per task (after the retry rule), and the driver turns the outcome
into a record, appends it (details first), and advances the progress bar.  A record:

  key, kernel, constants, check, inputs {builder, specs, seed} (+ symbolic for prove)
  verdict          clean | review | error | incomplete (prove: proved -> clean, refuted -> error)
  checker_verdict  the checker's own verdict (proved/refuted/incomplete for prove; null if it never finished)
  findings         [{kind, id, status}] (prove: the confirming finding of each refuted property)
  reason           why the task is incomplete (budget, crash, parse error, a checker's limit), else null
  stats            the checker's statistics; seconds; peak_rss_mb
  attempts, retries (the crash reasons of earlier attempts), worker, tool_version, finished_at
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..common.verdict import Verdict
from . import outputs
from .executors import make
from .journal import Journal
from .plan import Plan, from_dict, load
from .tasks import expand


class Results(Sequence):
    """The records of every task of the plan, in plan order (recorded now or by an earlier run)."""

    def __init__(self, records: list, ran: int, skipped: int, outputs: dict, results_path, executor: str,
                 journal: Journal):
        self.records = records
        self.ran = ran
        self.skipped = skipped
        self.outputs = outputs
        self.results_path = results_path
        self.executor = executor
        self._journal = journal

    def __getitem__(self, i):
        return self.records[i]

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        counts = ", ".join(f"{self.counts()[v]} {v}" for v in outputs.VERDICTS)
        return f"<batch Results: {len(self)} task(s), {counts}>"

    @property
    def verdict(self) -> Verdict:
        return outputs.worst(r["verdict"] for r in self.records)

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code()

    def counts(self) -> dict:
        return {v: sum(1 for r in self.records if r["verdict"] == v) for v in outputs.VERDICTS}

    def details(self, key: str) -> dict | None:
        """The task's text report and SARIF runs."""
        return self._journal.details(key)

    def summary(self) -> str:
        return outputs.summary_table(self.records)

    def to_dataframe(self):
        """One row per task: the record's scalar fields, one column per constant, finding kinds as a list."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Results.to_dataframe() needs pandas (pip install pandas); the records themselves "
                              "are plain dicts") from None
        rows = []
        for r in self.records:
            inputs = r.get("inputs") or {}
            row = {"key": r["key"], "kernel": r["kernel"], "check": r["check"], "verdict": r["verdict"],
                   "checker_verdict": r.get("checker_verdict"), "reason": r.get("reason"),
                   "findings": [f["kind"] for f in r.get("findings", [])], "seconds": r.get("seconds"),
                   "peak_rss_mb": r.get("peak_rss_mb"), "attempts": r.get("attempts"),
                   "builder": inputs.get("builder"), "seed": inputs.get("seed")}
            row.update({f"const.{k}": v for k, v in r.get("constants", {}).items()})
            rows.append(row)
        return pd.DataFrame(rows)


class Progress:
    """A one-line progress bar with ETA on a terminal's stderr (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool, stream=None):
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.done = 0
        self.bad = 0
        self.t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def advance(self, verdict: str) -> None:
        self.done += 1
        self.bad += verdict in (Verdict.ERROR, Verdict.INCOMPLETE)
        now = time.monotonic()
        if self.enabled and (now - self._last >= 0.2 or self.done == self.total):
            self._last = now
            self._render(now)

    def _render(self, now: float) -> None:
        elapsed = now - self.t0
        frac = self.done / self.total
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        bar = "#" * int(frac * 24)
        line = (f"\r[{bar:<24}] {self.done}/{self.total} {frac:4.0%}  {self.bad} failing  "
                f"{elapsed:5.0f}s elapsed, ETA {_fmt(eta)} ")
        self.stream.write(line)
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()


def _fmt(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def record_of(task, outcome, attempts: int, retries: list, version: str) -> tuple[dict, dict]:
    rec = {"key": task.key, **task.point(), "attempts": attempts, "worker": outcome.worker, "tool_version": version,
           "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if retries:
        rec["retries"] = list(retries)
    if outcome.kind == "done":
        rec.update(outcome.result)
        return rec, outcome.details
    if outcome.kind == "timeout":
        reason = outcome.reason
    else:
        reason = outcome.reason
        if retries:
            reason = f"the task crashed on each of {attempts} attempts: " + "; then ".join([*retries, reason])
    rec.update({"verdict": Verdict.INCOMPLETE, "checker_verdict": None, "findings": [], "reason": reason, "stats": {},
                "seconds": round(outcome.seconds, 4), "peak_rss_mb": None})
    return rec, {"text": reason + "\n", "sarif_runs": []}


def resolve_plan(plan) -> Plan:
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, dict):
        return from_dict(plan, Path.cwd())
    return load(plan)


def default_results(plan: Plan) -> Path | None:
    if plan.results is not None:
        return plan.results
    if plan.path == "<dict>":
        return None
    p = Path(plan.path).resolve()
    return p.with_name(p.stem + ".results.jsonl")


def run_batch(plan, executor=None, *, jobs: int | None = None, results=None, output=None, progress: bool = False,
              rerun_incomplete: bool = False, log=None) -> Results:
    """Check every task of `plan` that the results file does not hold yet; return all the plan's records.

    `plan`: a plan file (.toml, .yaml), a dict of the same structure (paths relative to the cwd), or a Plan.
    `executor`: None or "local" (a process pool of `jobs` workers, default the CPU count), a scheduler
    address "tcp://HOST:PORT", a dask.distributed Client, or a LocalExecutor/DaskExecutor.
    `results`: the JSONL file (default: the plan's `results`, else `<plan>.results.jsonl` beside a plan
    file; a dict plan without one keeps its records in memory).  `output`: a folder for summary.txt,
    findings.sarif and index.html (default: the plan's `output`, else none).  `log`: a stream for one-line
    notes (a torn last line cut off, how many tasks were already recorded)."""
    import modelcheck
    plan = resolve_plan(plan)
    tasks = expand(plan)
    results_path = Path(results).resolve() if results is not None else default_results(plan)
    out_dir = Path(output) if output is not None else plan.output
    ex = make(executor, jobs)
    with Journal(results_path) as journal:
        if log is not None and journal.torn:
            log.write(f"modelcheck batch: cut off an unfinished last line ({journal.torn} bytes) of {results_path}\n")
        if log is not None and journal.unreadable:
            log.write(f"modelcheck batch: skipped {journal.unreadable} unreadable line(s) of {results_path}\n")
        todo = [t for t in tasks if t.key not in journal.records
                or (rerun_incomplete and journal.records[t.key]["verdict"] == Verdict.INCOMPLETE)]
        if log is not None:
            log.write(f"modelcheck batch: {len(tasks)} task(s), {len(tasks) - len(todo)} already recorded"
                      f"{f' in {results_path}' if results_path else ''}; running {len(todo)} on {ex.describe()}\n")
        bar = Progress(len(todo), progress)
        version = modelcheck.__version__

        def emit(task, outcome, attempts, retries):
            rec, details = record_of(task, outcome, attempts, retries, version)
            journal.append(rec, details)
            bar.advance(rec["verdict"])

        try:
            ex.run(todo, emit)
        finally:
            bar.close()
        records = []
        for t in tasks:
            rec = dict(journal.records[t.key])
            rec.update(t.point())        # the point as this plan names it (a copied kernel file shares a key)
            records.append(rec)
        written = {}
        if out_dir is not None:
            title = Path(plan.path).name if plan.path != "<dict>" else "plan"
            written = outputs.write_all(records, journal.details, out_dir, title)
        return Results(records, len(todo), len(tasks) - len(todo), written, results_path, ex.describe(), journal)
