"""Budgets for one NumSim run: steps, time and memory.

Steps are the simulator's warp-instruction steps over every warp of the launch (the
per-loop iteration limit stays as well).  A step budget bounds what a run costs us, so a
CTA cohort's instruction (numsim.cohort: warp j of k CTAs executed at once as one step) is
one step, not k: it is one pass of the compiled closure, whose numpy work the time budget
bounds.  The run's stats still count the warp-instructions simulated (k per cohort step).

Memory is what the run may add to the process: every large allocation
(global buffer copies, the CTAs' shared pools and warps) is charged before it is made,
and the resident size the run grows by is sampled as it goes (`/proc/self/statm`; the
peak from `getrusage` elsewhere).  Exceeding any budget raises `ResourceLimit` naming it,
which the engine turns into `incomplete` -- never a pass, never a crash.  The defaults
finish in about a minute and stay under ~2 GB on a 2-core machine.

Time is wall-clock by default: what the user waits for (the command line's --max-seconds is always
the command's wall time).  `set_clock("cpu")` (`modelcheck.set_budget_clock`) measures every time
budget of a check from Python -- the run's, phase B's, the answer sequences' -- in CPU seconds of the
check instead, so a verdict does not depend on what else the machine runs (a shared CI machine, a
benchmark's parallel jobs).  The CPU
clock follows the check across the forks of Synccheck's snapshots: a forked child starts where its
parent's clock stood, and a process that waits for another's work moves its clock to the other's.
"""
from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Callable

from .errors import ResourceLimit

DEFAULT_MAX_STEPS = 50_000_000
DEFAULT_MAX_SECONDS = 60.0
DEFAULT_MAX_MEMORY_MB = 2048
CHECK_EVERY = 16_384           # warp-instructions between two looks at the clock and the resident size

# simulator memory per warp and per CTA beyond its shared pool (lane vectors, registers, barriers)
WARP_BYTES = 4096
CTA_BYTES = 16384

# a callback (the command line's progress line) told of each meter's counts as it checks its budgets
PROGRESS: Callable[[Meter], None] | None = None

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

CLOCKS = ("wall", "cpu")
_clock = "wall"
_cpu_offset = 0.0       # CPU seconds of this check spent before this process's own counter began (forks), or by others
_cpu_at_fork = 0.0


def set_clock(name: str) -> None:
    """Measure time budgets in wall-clock ("wall") or CPU ("cpu") seconds, process-wide."""
    global _clock
    if name not in CLOCKS:
        raise ValueError(f"unknown budget clock {name!r}: expected one of {', '.join(CLOCKS)}")
    _clock = name


def clock_name() -> str:
    return _clock


def now() -> float:
    """The budget clock's reading (seconds; only differences mean anything)."""
    if _clock == "cpu":
        return time.process_time() + _cpu_offset
    return time.monotonic()


def advance_to(reading: float) -> None:
    """Another process did this check's work up to `reading` on the CPU clock while this one waited: count it."""
    global _cpu_offset
    if _clock == "cpu":
        _cpu_offset = max(_cpu_offset, reading - time.process_time())


def _before_fork() -> None:
    global _cpu_at_fork
    _cpu_at_fork = now() if _clock == "cpu" else 0.0


def _after_fork_in_child() -> None:
    # a child's CPU counter starts at zero: its clock goes on from the parent's
    global _cpu_offset
    if _clock == "cpu":
        _cpu_offset = _cpu_at_fork - time.process_time()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def seconds_unit() -> str:
    """How a time budget's seconds are named in messages."""
    return "s of CPU" if clock_name() == "cpu" else "s"


def resident_bytes() -> int:
    """The process's resident size now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def megabytes(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB" if n >= (1 << 20) else f"{n:,} bytes"


class Meter:
    """A run's budgets and what it has used of them."""

    __slots__ = ("max_steps", "max_seconds", "max_bytes", "steps", "allocated", "t0", "rss0", "next_check")

    def __init__(self, max_steps: int = DEFAULT_MAX_STEPS, max_seconds: float = DEFAULT_MAX_SECONDS,
                 max_memory_mb: float = DEFAULT_MAX_MEMORY_MB):
        self.max_steps = int(max_steps)
        self.max_seconds = float(max_seconds)
        self.max_bytes = int(max_memory_mb * (1 << 20))
        self.steps = 0
        self.allocated = 0
        self.t0 = now()
        self.rss0 = resident_bytes()
        self.next_check = CHECK_EVERY

    def allocate(self, nbytes: int, what: str) -> None:
        """Charge an allocation before it is made."""
        self.allocated += int(nbytes)
        if self.allocated > self.max_bytes:
            raise ResourceLimit("memory", f"{what} needs {megabytes(int(nbytes))}, which takes the run past its "
                                          f"memory budget of {megabytes(self.max_bytes)} (raise it with "
                                          f"--max-memory MB / max_memory_mb=, or shrink the problem with --const)",
                                budget_mb=self.max_bytes >> 20, requested_bytes=int(nbytes))

    def headroom(self, nbytes: int, what: str) -> None:
        """Refuse an allocation of `nbytes` that would take the process's growth since the run began past the
        budget (measured now, so memory given back is not counted twice)."""
        grown = resident_bytes() - self.rss0
        if grown + nbytes > self.max_bytes:
            raise ResourceLimit("memory", f"{what} needs {megabytes(int(nbytes))} more, and the run has grown the "
                                          f"process by {megabytes(grown)}: past its memory budget of "
                                          f"{megabytes(self.max_bytes)} (raise it with --max-memory MB / "
                                          f"max_memory_mb=, or shrink the problem with --const)",
                                budget_mb=self.max_bytes >> 20, requested_bytes=int(nbytes))

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps >= self.next_check:
            self.check()

    def check(self) -> None:
        self.next_check = self.steps + CHECK_EVERY
        if PROGRESS is not None:
            PROGRESS(self)
        if self.steps > self.max_steps:
            raise ResourceLimit("steps", f"the run executed more than {self.max_steps:,} warp-instruction steps (its "
                                         f"step budget, a CTA cohort's step counted once; raise it with --max-steps /"
                                         f" max_steps=)", budget=self.max_steps)
        elapsed = now() - self.t0
        if elapsed > self.max_seconds:
            raise ResourceLimit("seconds", f"the run took more than {self.max_seconds:g} {seconds_unit()} (its time "
                                           f"budget; raise it "
                                           f"with --max-seconds / max_seconds=)", budget=self.max_seconds)
        grown = resident_bytes() - self.rss0
        if grown > self.max_bytes:
            raise ResourceLimit("memory", f"the run grew the process by {megabytes(grown)}, past its memory budget "
                                          f"of {megabytes(self.max_bytes)} (raise it with --max-memory MB / "
                                          f"max_memory_mb=)", budget_mb=self.max_bytes >> 20)

    def remaining_seconds(self) -> float:
        return max(self.max_seconds - (now() - self.t0), 0.0)
