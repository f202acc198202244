"""Progress on stderr for runs longer than ~2 s, when stderr is a terminal (`--quiet` turns it off).

One status line, rewritten in place by a daemon thread four times a second: the phase (kernel
and stage), the seconds spent and the warp-instructions simulated so far (NumSim's budget meter
reports them as it checks its budgets).  The line is erased when the command prints or ends, so
piped output and logs never see it.
"""
from __future__ import annotations

import sys
import threading
import time

DELAY = 2.0
PERIOD = 0.25


class Progress:
    def __init__(self, enabled: bool, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.text = ""
        self.steps = 0
        self.shown = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_terminal(cls, quiet: bool) -> "Progress":
        stream = sys.stderr
        return cls(not quiet and hasattr(stream, "isatty") and stream.isatty(), stream)

    def start(self) -> "Progress":
        if self.enabled:
            from ..numsim import budget
            budget.PROGRESS = self._meter
            self._thread = threading.Thread(target=self._loop, name="modelcheck-progress", daemon=True)
            self._thread.start()
        return self

    def _meter(self, meter) -> None:
        self.steps = self.base + meter.steps

    base = 0

    def phase(self, text: str) -> None:
        """Name what runs now; "" (before a command prints its result) erases the line until the next phase."""
        self.base = self.steps
        self.text = text
        if not text:
            self.clear()

    def _loop(self) -> None:
        while not self._stop.wait(PERIOD):
            elapsed = time.monotonic() - self.t0
            if elapsed < DELAY or not self.text:
                continue
            line = f"modelcheck: {self.text} - {elapsed:5.1f} s"
            if self.steps:
                line += f", {self.steps:,} warp-instructions simulated"
            with self._lock:
                if not self.text:
                    continue
                self.stream.write("\r\x1b[K" + line[:200])
                self.stream.flush()
                self.shown = True

    def clear(self) -> None:
        with self._lock:
            if self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self.shown = False

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=1)
            from ..numsim import budget
            budget.PROGRESS = None
        self.clear()
