"""The task process: runs tasks one at a time under their memory budget and reports each result.

Started by `sandbox.Sandbox` as `python -m modelcheck.portfolio.worker IN_FD OUT_FD` (a fresh
interpreter, never a fork).  It imports modelcheck once, says it is ready, then loops:
receive a task, run it, send back `(result, details)`.  It exits when the pipe closes or
when its parent dies (a watchdog thread notices the new parent id), so a killed Dask worker
or driver leaves no task process behind.

Budgets inside the process: the checkers get the budget as their own limits (`max_seconds`
of Synccheck, Racecheck and the prover, `max_memory_mb` of Synccheck and Racecheck, which
end in an incomplete verdict with the reason); behind them, the address space is limited
with RLIMIT_AS to what the process had when the task started plus the budget and a margin
(`Budget.address_space_mb`), so an allocation that gets past the checkers' accounting fails
with MemoryError, the task is recorded incomplete, and the process goes on with the next
task.  The parent's kill at `Budget.kill_after` is the hard time limit.
Peak memory is the process's peak resident set during the task (VmHWM, reset per task
through /proc/self/clear_refs; where that is unavailable, the process's lifetime peak).

`execute(task)` never raises for a bad task: a kernel that does not parse, a failing inputs
builder, invalid inputs and an exception inside a checker each give an incomplete result
with the reason (the traceback goes to the details' text).
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import traceback
import types

from ..common.verdict import Proof, Verdict

_BUILDERS: dict = {}


def load_builder(path: str, function: str, source: str):
    """The builder function from its module source (run as a module named after the hash of its path and
    source, with __file__ set to `path`), cached per process."""
    digest = hashlib.sha256(f"{path}\0{source}".encode("utf-8")).hexdigest()[:16]
    name = f"_modelcheck_inputs_{digest}"
    module = _BUILDERS.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        try:
            exec(compile(source, path, "exec"), module.__dict__)
        except BaseException:
            del sys.modules[name]
            raise
        _BUILDERS[name] = module
    fn = getattr(module, function, None)
    if not callable(fn):
        raise AttributeError(f"{os.path.basename(path)} has no function {function!r}")
    return fn


class _Incomplete(Exception):
    def __init__(self, reason: str, text: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.text = text


def _builder_overrides(task, consts: dict) -> dict:
    """The inputs recipe at given constants: the builder's dict, the specs on top, the scalar values."""
    overrides: dict = {}
    if task.builder_function:
        fn = load_builder(task.builder_path, task.builder_function, task.builder_source)
        try:
            built = fn(dict(consts)) if task.seed is None else fn(dict(consts), seed=task.seed)
        except MemoryError:
            raise
        except Exception as err:     # noqa: BLE001 -- user code
            raise _Incomplete(f"inputs_builder {task.builder} failed: {type(err).__name__}: {err}",
                              traceback.format_exc()) from None
        if not isinstance(built, dict):
            raise _Incomplete(f"inputs_builder {task.builder} returned {type(built).__name__}, not a dict of inputs")
        overrides.update(built)
    overrides.update(task.inputs)
    overrides.update(task.scalars)
    return overrides


def execute(task) -> tuple[dict, dict]:
    """Run one task: (result fields, details {text, sarif_runs}).  Raises only MemoryError."""
    try:
        return _execute(task)
    except _Incomplete as inc:
        return ({"verdict": Verdict.INCOMPLETE, "checker_verdict": Verdict.INCOMPLETE, "reason": inc.reason,
                 "findings": [], "stats": {}}, {"text": inc.text or inc.reason + "\n", "sarif_runs": []})


def _execute(task) -> tuple[dict, dict]:
    import ir
    from modelcheck import numsim
    try:
        func = ir.parse(task.kernel_text, task.kernel, **task.constants)
    except ir.ParseError as err:
        text = str(err)
        raise _Incomplete(f"parse error: {text.splitlines()[0] if text else type(err).__name__}", text) from None
    except MemoryError:
        raise
    except Exception as err:         # noqa: BLE001 -- the front end's own errors (unsupported constructs, ...)
        raise _Incomplete(f"cannot build the kernel: {type(err).__name__}: {err}", traceback.format_exc()) from None
    try:
        if task.check == "prove":
            return _prove(task, func)
        inputs = numsim.default_inputs(func, _builder_overrides(task, func.constant_values),
                                       max_memory_mb=_memory_mb(task))
        return _check(task, func, inputs)
    except (_Incomplete, MemoryError):
        raise
    except numsim.InputError as err:
        raise _Incomplete(f"invalid inputs: {err}") from None
    except numsim.UnsupportedTIRxError as err:
        raise _Incomplete(f"unsupported: {err}") from None
    except numsim.ResourceLimit as err:
        raise _Incomplete(f"budget: {err}") from None
    except Exception as err:         # noqa: BLE001 -- an internal error: recorded with its traceback
        raise _Incomplete(f"internal error in {task.check}: {type(err).__name__}: {err}",
                          traceback.format_exc()) from None


def _stats(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("kernel", "checker")}


def _memory_mb(task) -> float:
    return task.budget.memory_mb or 1e9       # 0: no memory budget of the checkers' own


def _check(task, func, inputs) -> tuple[dict, dict]:
    import modelcheck
    check = modelcheck.synccheck if task.check == "sync" else modelcheck.racecheck
    report = check(func, inputs, max_seconds=task.budget.seconds, max_memory_mb=_memory_mb(task))
    d = report.to_dict()
    incomplete = [f for f in report.findings if f.status is Verdict.INCOMPLETE]
    result = {"verdict": report.verdict, "checker_verdict": report.verdict,
              "findings": [{"kind": f.kind, "id": f.id, "status": f.status} for f in report.findings],
              "reason": incomplete[0].message if report.verdict is Verdict.INCOMPLETE and incomplete else None,
              "stats": _stats(d["stats"])}
    return result, {"text": report.format(), "sarif_runs": report.to_sarif()["runs"]}


def _prove(task, func) -> tuple[dict, dict]:
    from modelcheck.prover import prove

    from ..report.proof import ProofReport
    failures: list = []

    def inputs_at(consts: dict) -> dict:
        """The inputs at one size of the proof; a builder failure is remembered, since the prover may
        take an exception in its concrete runs as "no error at this size"."""
        try:
            return _builder_overrides(task, consts)
        except _Incomplete as inc:
            failures.append(inc)
            raise

    inputs = inputs_at if task.builder_function or task.inputs or task.scalars else None
    report = ProofReport(prove(func, symbolic=list(task.symbolic), ranges=dict(task.symbolic), inputs=inputs,
                               max_seconds=task.budget.seconds))
    if failures:
        raise failures[0]
    findings = []
    for p in report.properties:
        if p.status is not Proof.REFUTED:
            continue
        f = p.finding
        findings.append({"kind": f.kind if f is not None else "prove_refuted", "id": f.id if f is not None else None,
                         "status": Verdict.ERROR, "family": p.family, "property": p.prop, "sizes": dict(p.sizes)})
    reason = None
    if report.verdict is Proof.INCOMPLETE:
        reason = "; ".join(report.reasons) or "some properties stay open: " + ", ".join(
            sorted({f"{p.family} {p.prop}" for p in report.properties if p.status is Proof.INCOMPLETE}))
    result = {"verdict": report.verdict.verdict, "checker_verdict": report.verdict, "findings": findings,
              "reason": reason, "stats": _stats(report.to_dict()["stats"])}
    if report.counterexample is not None:
        result["counterexample"] = {"sizes": report.counterexample.get("sizes"),
                                    "family": report.counterexample.get("family"),
                                    "property": report.counterexample.get("property")}
    return result, {"text": report.format(), "sarif_runs": report.to_sarif()["runs"]}


# --- the process's own budget and memory bookkeeping -------------------------------------------


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")          # resets VmHWM to the current resident set (Linux >= 4.0)
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    kb = _status_kb("VmHWM")
    if kb is None:
        import resource
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # kB on Linux, bytes on macOS
        if sys.platform == "darwin":
            kb //= 1024
    return round(kb / 1024, 1)


class _AddressSpace:
    """RLIMIT_AS at the current address-space size plus `memory_mb` for the duration of a task (0: none)."""

    def __init__(self, memory_mb: int):
        self.memory_mb = memory_mb
        self.saved = None

    def __enter__(self):
        if not self.memory_mb:
            return self
        try:
            import resource
        except ImportError:
            return self
        size_kb = _status_kb("VmSize")
        if size_kb is None:
            return self
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size_kb * 1024 + self.memory_mb * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        self.saved = (soft, hard)
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, self.saved)
        return False


def run_task(task) -> tuple[dict, dict]:
    """`execute` under the task's memory budget, with its time and peak memory."""
    t0 = time.perf_counter()
    exact = _reset_peak()
    try:
        with _AddressSpace(task.budget.address_space_mb):
            result, details = execute(task)
    except MemoryError:
        reason = (f"memory budget exceeded: an allocation failed at the address-space limit of "
                  f"{task.budget.address_space_mb} MB above the process's size (budget.memory_mb = "
                  f"{task.budget.memory_mb} plus a margin for reserved memory)")
        result, details = ({"verdict": Verdict.INCOMPLETE, "checker_verdict": Verdict.INCOMPLETE, "reason": reason,
                            "findings": [], "stats": {}}, {"text": reason + "\n", "sarif_runs": []})
    result["seconds"] = round(time.perf_counter() - t0, 4)
    result["peak_rss_mb"] = _peak_mb()
    if not exact:
        result["peak_rss_note"] = "process lifetime peak (per-task reset unavailable)"
    return result, details


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def main(argv: list[str]) -> int:
    from multiprocessing.connection import Connection
    conn_in = Connection(int(argv[0]), writable=False)
    conn_out = Connection(int(argv[1]), readable=False)
    parent = int(argv[2]) if len(argv) > 2 else os.getppid()
    if os.getppid() != parent:
        return 3
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watch").start()
    import modelcheck  # noqa: F401 -- loaded before "ready", so task times do not include the import
    import modelcheck.prover  # noqa: F401 -- and z3 too
    conn_out.send(("ready", os.getpid()))
    while True:
        try:
            task = conn_in.recv()
        except (EOFError, OSError):
            return 0
        if task is None:
            return 0
        result, details = run_task(task)
        try:
            conn_out.send(("done", (result, details)))
        except (BrokenPipeError, OSError):
            return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
