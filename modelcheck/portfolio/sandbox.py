"""The parent side of a task process: start it, hand it a task, kill it when its time is up.

A `Sandbox` owns one task process (`worker.py`), started with subprocess as a fresh
interpreter (`python -m modelcheck.portfolio.worker`), never forked: Dask workers are
multithreaded and run daemonic, and neither may fork or own multiprocessing children; a
fresh interpreter also never re-imports the caller's `__main__`.  The process is reused for
task after task (it imports modelcheck once), and replaced only after it was killed or died.

Every task ends in one `Outcome`:
  done     the task process sent its result (whatever the verdict);
  timeout  it was still running `budget.kill_after` seconds after it got the task, and was killed;
  crashed  it died (a signal, os._exit, the kernel's OOM killer) or closed its pipe; the reason
           gives the exit status and the last lines the process wrote to stderr.
The local process pool waits on many sandboxes at once (`conn`, `submit`, `collect`,
`expire`); a Dask task calls `run(task)`, which does the same for one.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from .tasks import Task

START_TIMEOUT = 120.0


class WorkerStartError(RuntimeError):
    """A task process could not be started (its interpreter failed to import modelcheck)."""


@dataclass
class Outcome:
    kind: str                        # done | timeout | crashed
    result: dict | None = None
    details: dict | None = None
    reason: str | None = None
    seconds: float = 0.0
    worker: str = ""
    notes: list = field(default_factory=list)


def _describe_exit(rc: int | None) -> str:
    if rc is None:
        return "stopped answering"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"was killed by {name}"
    return f"exited with code {rc}"


class Sandbox:
    def __init__(self, label: str):
        self.label = label
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None       # results from the task process
        self._send: Connection | None = None
        self._stderr: IO[bytes] | None = None
        self.task: Task | None = None
        self.started_at = 0.0
        self.deadline = float("inf")

    # --- life cycle --------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self) -> None:
        """Start the task process; `ready()` waits for it to have imported modelcheck."""
        import importlib.util       # where modelcheck is, without importing it (a Dask worker may not have yet)
        spec = importlib.util.find_spec("modelcheck")
        assert spec is not None and spec.origin is not None     # this module is part of the package
        root = str(Path(spec.origin).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "modelcheck.portfolio.worker", str(to_child_r), str(from_child_w),
                 str(os.getpid())],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=self._stderr,
                stderr=self._stderr, env=env, start_new_session=True)
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._send = Connection(to_child_w, readable=False)
        self.conn = Connection(from_child_r, writable=False)

    def ready(self, timeout: float = START_TIMEOUT) -> None:
        assert self.conn is not None                # after spawn()
        if self.conn.poll(timeout):
            try:
                kind, _ = self.conn.recv()
                if kind == "ready":
                    return
            except (EOFError, OSError):
                pass
        self.kill()
        raise WorkerStartError(f"the task process did not start: {self._tail() or 'no output'}")

    def start(self) -> None:
        self.spawn()
        self.ready()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._close_pipes()

    def close(self) -> None:
        """Ask an idle process to exit (kill it if it does not within 2 s); kill a busy one."""
        if self.proc is None:
            return
        if self.proc.poll() is None and self._send is not None and self.task is None:
            try:
                self._send.send(None)
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        self.proc = None

    def _close_pipes(self) -> None:
        for c in (self._send, self.conn):
            if c is not None:
                try:
                    c.close()
                except OSError:
                    pass
        self._send = self.conn = None

    def _tail(self, lines: int = 6) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 4000))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        tail = [t for t in text.splitlines() if t.strip()][-lines:]
        return " | ".join(t.strip() for t in tail)

    # --- one task ----------------------------------------------------------------------------

    def submit(self, task) -> None:
        if not self.alive or self.conn is None:
            self.start()
        self.task = task
        self.started_at = time.monotonic()
        self.deadline = self.started_at + task.budget.kill_after
        assert self._send is not None               # started just above if it was not
        try:
            self._send.send(task)
        except OSError:
            pass        # the process died between tasks: collect() reports it

    def collect(self) -> Outcome:
        """The outcome once `conn` is readable (a result, or EOF because the process died)."""
        elapsed = time.monotonic() - self.started_at
        assert self.conn is not None                # a task was submitted
        try:
            kind, payload = self.conn.recv()
        except (EOFError, OSError):
            return self._died(elapsed)
        self.task, self.deadline = None, float("inf")
        result, details = payload
        return Outcome("done", result, details, seconds=result.get("seconds", elapsed), worker=self.label)

    def expire(self) -> Outcome:
        """Kill the process whose task overran its budget."""
        task, elapsed = self.task, time.monotonic() - self.started_at
        assert task is not None                     # only a running task overruns
        self.kill()
        self.proc = None
        self.task, self.deadline = None, float("inf")
        return Outcome("timeout", reason=f"time budget exceeded: killed after {elapsed:.1f} s (budget.seconds = "
                                         f"{task.budget.seconds:g}; the checkers stop at it where they can, the "
                                         f"process is killed at {task.budget.kill_after:g} s)",
                       seconds=elapsed, worker=self.label)

    def _died(self, elapsed: float) -> Outcome:
        rc = None
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        tail = self._tail()
        self._close_pipes()
        self.proc = None
        self.task, self.deadline = None, float("inf")
        reason = f"the task process {_describe_exit(rc)}" + (f" (stderr: {tail})" if tail else "")
        return Outcome("crashed", reason=reason, seconds=elapsed, worker=self.label)

    def run(self, task) -> Outcome:
        """Blocking: the task's outcome in this sandbox (used by a Dask task)."""
        self.submit(task)
        remaining = self.deadline - time.monotonic()
        assert self.conn is not None                # submit() started the process
        if wait([self.conn], timeout=max(0.0, remaining)):
            return self.collect()
        return self.expire()
