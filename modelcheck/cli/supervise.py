"""Keeping --max-seconds for the `modelcheck` program, whatever the work is doing.

A deadline inside the process (the checkers' own, and an interrupt of the main thread) is
kept only when Python gets to run: a long native call, or a machine so loaded that a timer
thread never gets the interpreter, can carry a command past its budget.  So the program
runs its commands in a child process (fork) and the parent -- which only waits -- ends the
child at the budget plus 4 %, prints one `incomplete` line naming the budget, and exits 2.
The child tells the parent through a pipe when each kernel's command starts (the budget is
per kernel).  The child has its own process group, so a Ctrl-C at the terminal reaches the
parent, which passes it on once; the child prints its one `interrupted` line and exits 130.
Without fork (Windows) the in-process deadlines are all there is.
"""
from __future__ import annotations

import os
import select
import signal
import sys
import time

HARD = 1.04
EXIT_INTERRUPTED = 130
_PIPE_W: int | None = None


def started(where: str, seconds: float | None) -> None:
    """Tell the supervising parent (if any) that a kernel's command starts, with its budget."""
    if _PIPE_W is None:
        return
    try:
        os.write(_PIPE_W, f"{seconds if seconds is not None else -1}\t{where}\n".encode())
    except OSError:
        pass


def run(body, process_start: float) -> int:
    """`body()` in a supervised child; returns the exit code to leave with."""
    global _PIPE_W
    if not hasattr(os, "fork"):
        return body()
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: do the work
        os.close(r)
        _PIPE_W = w
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        code = 70
        try:
            code = body()
        except KeyboardInterrupt:   # Ctrl-C before body() installed its own handling (start-up, argument parsing)
            print("modelcheck: interrupted", file=sys.stderr)
            code = EXIT_INTERRUPTED
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(w)
    return _watch(pid, r, process_start)


def _watch(pid: int, r: int, start: float) -> int:
    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, forward)
    deadline, what, seconds, buf, first, reading = None, "", "0", b"", True, True
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if status else 0
        timeout = 0.05 if deadline is None else max(min(deadline - time.monotonic(), 0.05), 0.0)
        try:
            ready, _, _ = select.select([r] if reading else [], [], [], timeout)
        except InterruptedError:
            continue
        if ready:
            chunk = os.read(r, 4096)
            reading = bool(chunk)          # the child closed its end: it is exiting
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                seconds, _, what = line.decode(errors="replace").partition("\t")
                budget = float(seconds)
                begin = start if first else time.monotonic()      # the first kernel counts the start-up
                first = False
                deadline = begin + budget * HARD if budget >= 0 else None
        if deadline is not None and time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            erase = "\r\x1b[K" if sys.stderr.isatty() else ""
            print(f"{erase}modelcheck: incomplete: {what}: --max-seconds {float(seconds):g} ran out (the command was "
                  f"stopped; raise the budget to finish)", file=sys.stderr, flush=True)
            return 2
