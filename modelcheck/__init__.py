"""modelcheck: a static-plus-symbolic model checker for TIRx GPU kernels.

Pipeline: text -> IR (`ir`) -> NumSim trace (`modelcheck.numsim`) -> checkers -> report.
See ARCHITECTURE.md for the stages and their entry points.
"""
from __future__ import annotations

import sys as _sys
import types as _types
from importlib import import_module as _import

from ir import ParseError, PrimFunc

_NAMED_LIKE_PACKAGES = ("synccheck", "racecheck", "replay")


class _Facade(_types.ModuleType):
    """This package's module: the functions synccheck, racecheck and replay keep their names when the packages of
    the same names load (on first use, so `import modelcheck` stays light; loading a subpackage would otherwise
    bind it as an attribute of its parent)."""

    def __setattr__(self, name, value):
        if name in _NAMED_LIKE_PACKAGES and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Facade

from .kernel import Kernel, as_func, load, parse  # noqa: E402  (after the facade guard)
from .report import CheckFailed, CheckReport, RaceReport, SyncCheckReport  # noqa: E402


def _version() -> str:
    """The installed distribution's version (setup.cfg is the one place it is written); a source checkout
    that was never installed says so instead of guessing.  Looked up on first use of `__version__`:
    importlib.metadata and the search of sys.path cost every process that never asks."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("modelcheck")
    except PackageNotFoundError:
        return "0+unknown"


__all__ = ["Kernel", "ParseError", "PrimFunc", "as_func", "load", "parse", "check", "synccheck", "racecheck", "prove",
           "replay", "batch", "CheckFailed", "CheckReport", "SyncCheckReport", "RaceReport", "ProofReport",
           "ReplayReport", "set_budget_clock", "__version__"]


def set_budget_clock(name: str) -> None:
    """Measure the checkers' time budgets (`max_seconds`) in "wall" seconds (the default: what you wait for) or in
    "cpu" seconds of the check, so a verdict does not depend on the machine's load (shared CI, parallel jobs).
    Process-wide; the command line's --max-seconds is always the command's wall time."""
    _import("modelcheck.numsim.budget").set_clock(name)


def synccheck(kernel, inputs=None, *, max_polls: int = 1_000_000, max_loop_iterations: int = 1_000_000,
              max_states: int = 200_000, max_transitions: int = 2_000_000, max_seconds: float = 60.0,
              max_steps: int = 50_000_000, max_memory_mb: float = 2048, target: str | None = None,
              max_clc_paths: int = 64, clc_snapshots: bool = True) -> SyncCheckReport:
    """Can the kernel hang or misuse a barrier for these inputs, in any schedule?

    `kernel`: an ir.PrimFunc, a Kernel, or an object with .script(); `inputs`: parameter name ->
    NumPy array or scalar (None: zero-filled buffers).  Limits are keyword-only: `max_seconds` bounds the
    whole check, `max_steps` the warp-instructions simulated, `max_memory_mb` what the check may add to the
    process, `target` the hardware whose launch limits apply (default sm_100a).  Exceeding a limit gives
    verdict incomplete, never clean.  `max_clc_paths` bounds the answer sequences of cluster launch control
    requests checked (one run each; more left unexplored is incomplete); with `clc_snapshots` each answer
    sequence resumes from a snapshot of the run where its answers first differ (Linux), else runs from the start."""
    return SyncCheckReport(_import("modelcheck.synccheck").check(as_func(kernel), inputs, max_polls=max_polls,
                                            max_loop_iterations=max_loop_iterations, max_states=max_states,
                                            max_transitions=max_transitions, max_seconds=max_seconds,
                                            max_steps=max_steps, max_memory_mb=max_memory_mb, target=target,
                                            max_clc_paths=max_clc_paths, clc_snapshots=clc_snapshots))


def racecheck(kernel, inputs=None, *, max_polls: int = 1_000_000, max_loop_iterations: int = 1_000_000,
              max_seconds: float = 60.0, max_steps: int = 50_000_000, max_memory_mb: float = 2048,
              target: str | None = None) -> RaceReport:
    """Are conflicting memory accesses (global, shared, TMEM) unordered for these inputs?

    Same arguments as `synccheck`; Synccheck's phase-A findings are embedded as errors."""
    return RaceReport(_import("modelcheck.racecheck").check(as_func(kernel), inputs, max_polls=max_polls,
                                       max_loop_iterations=max_loop_iterations, max_seconds=max_seconds,
                                       max_steps=max_steps, max_memory_mb=max_memory_mb, target=target))


def check(kernel, inputs=None, *, max_seconds: float = 60.0, **limits) -> CheckReport:
    """Synccheck then Racecheck (what `modelcheck check` runs): one CheckReport whose findings list each bug
    once (a Synccheck finding Racecheck repeats is merged into it).  `max_seconds` bounds both together;
    other keyword limits as for `synccheck`."""
    from .numsim.budget import now     # the budget clock: wall or CPU seconds (numsim/budget.py)
    deadline = now() + max_seconds
    sync = synccheck(kernel, inputs, max_seconds=max_seconds, **limits)
    race_limits = {k: v for k, v in limits.items() if k not in ("max_states", "max_transitions")}
    race = racecheck(kernel, inputs, max_seconds=max(deadline - now(), 0.01), **race_limits)
    return CheckReport([sync, race])


def prove(kernel, symbolic, ranges: dict | None = None, inputs=None, *, max_seconds: float = 60.0):
    """Prove each mbarrier family's ring protocol (P1-P4, docs/architecture.md#prover) for every value of the `symbolic`
    module constants in `ranges` (name -> (lo, hi or None); default 1..).  Returns a ProofReport:
    proved, refuted (with the smallest failing sizes, confirmed on NumSim), or incomplete (with why)."""
    from .prover import prove as _prove      # imported on first use: loading z3 takes a noticeable time
    from .report.proof import ProofReport
    return ProofReport(_prove(as_func(kernel), symbolic, ranges, inputs, max_seconds=max_seconds))


def replay(kernel, inputs=None, finding_or_witness=None, *, max_polls: int = 1_000_000,
           max_loop_iterations: int = 1_000_000, max_steps: int = 50_000_000, max_seconds: float = 60.0,
           max_memory_mb: float = 2048, target: str | None = None):
    """Run a finding's schedule on NumSim next to the default schedule
    (docs/architecture.md#happens-before-graph-and-replay): a ReplayReport with the output elements that differ,
    the reads that observed another write (from which iteration), the blocked warps if the forced schedule
    deadlocks.  `finding_or_witness`: a Synccheck/Racecheck Finding (or its
    to_dict()), or an explorer witness (list of transitions); `inputs`: the ones the finding came from."""
    from .report.replay import ReplayReport
    return ReplayReport(_import("modelcheck.replay").replay(
        as_func(kernel), inputs, finding_or_witness, max_polls=max_polls, max_loop_iterations=max_loop_iterations,
        max_steps=max_steps, max_seconds=max_seconds, max_memory_mb=max_memory_mb, target=target))


def batch(plan, executor=None, *, jobs: int | None = None, results=None, output=None, progress: bool = False,
          rerun_incomplete: bool = False):
    """Check a portfolio (docs/batch.md): every task of `plan` (a .toml/.yaml plan file or a dict of the same
    structure) that the results file does not hold yet, on `executor` (None/"local": a process pool of `jobs`
    workers; "tcp://HOST:PORT", a dask.distributed Client or a DaskExecutor: Dask).  Returns the records of
    every task of the plan (`.summary()`, `.verdict`, `.exit_code`, `.to_dataframe()` with pandas)."""
    from .portfolio.driver import run_batch     # imported on first use: `import modelcheck` stays light
    return run_batch(plan, executor, jobs=jobs, results=results, output=output, progress=progress,
                     rerun_incomplete=rerun_incomplete)


def __getattr__(name):
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    if name in ("numsim", "hb", "report"):      # subpackages load on first use: `modelcheck.numsim.run(...)` works
        return _import(f"modelcheck.{name}")
    if name == "ReplayReport":
        from .report.replay import ReplayReport
        return ReplayReport
    if name == "ProofReport":
        from .report.proof import ProofReport
        return ProofReport
    raise AttributeError(f"module 'modelcheck' has no attribute {name!r}")
