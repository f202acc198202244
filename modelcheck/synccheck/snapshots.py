"""Snapshots of a run at its cluster launch control choice points, so an answer sequence resumes there.

Synccheck checks a kernel with CLC requests once per answer sequence (explorer/choices.py).  Two sequences that
share a prefix of answers share the run up to the choice point where they differ, so rerunning the kernel from
the start for each one repeats that prefix (on a production kernel, most of a ~1M warp-instruction run per
sequence).  Instead, at each choice point past its forced answers, a run forks (`os.fork`): the parent goes on
with the policy's answer, the child is the snapshot -- the whole process at that instant: NumSim's state, the
phase-A observers' state, the trace -- parked until the search asks for the other answer.  Resumed, it takes the
other answer, finishes the run, runs phase B and sends what `_one_path` would have returned for a whole rerun
with that prefix forced.  The run is deterministic, so the resumed run is the rerun's run step for step: the
same trace, findings, programs and budgets (the meter, forked with the rest, keeps counting steps and time from
the check's start, as a rerun given what is left would).

Why fork rather than a deep copy: the compiled kernel is closures and generators (warps are suspended
generators), which `copy.deepcopy` cannot copy, and fork copies a process lazily (copy on write), so a parked
snapshot costs almost nothing until it runs.  Linux only (`available()`); elsewhere, or when a snapshot fails,
the caller reruns the kernel from the start, as before.

Plumbing: the check's process (the root) listens on a Unix socket; a parked snapshot connects, names its answer
prefix and its pid, and waits.  The root resumes the snapshot the search asks for ("go"), reads its result, and
at the end closes everything: a snapshot never resumed sees its connection close and exits.  A resumed
snapshot's own choice points fork snapshots in turn, which connect to the root directly; the resumed snapshot
exits once it has sent its result (its memory goes at once), and its parked children are re-parented to the
root (`PR_SET_CHILD_SUBREAPER`), which reaps every process it started, so their CPU time is counted with it.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import sys
import tempfile
import traceback
from multiprocessing.connection import Connection

from ..numsim import budget

_PR_SET_CHILD_SUBREAPER = 36
ACCEPT_SECONDS = 30.0        # a forked snapshot connects at once; past this, it is taken as lost
# a choice point this early in the run is not snapshotted: rerunning the prefix costs less than a fork, a connection
# and the copy-on-write faults of the resumed snapshot (~50 ms on a 100 MB process)
MIN_SNAPSHOT_STEPS = 50_000


def available() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def every(key: tuple) -> bool:
    return True


class SnapshotLost(Exception):
    """The snapshot of an answer prefix did not answer (it crashed, or never connected): rerun the prefix."""


class Snapshots:
    """The root's side (the check's process) and, after a fork, the snapshot's side of the snapshots."""

    def __init__(self, deadline_seconds: float):
        self.deadline_seconds = deadline_seconds  # how long a resumed snapshot may take, at most
        self.enabled = available()
        self.dir: str | None = None
        self.listener: socket.socket | None = None
        self.parked: dict[tuple, tuple] = {}        # answer prefix -> (its snapshot's connection, pid): accepted
        self.pids: set[int] = set()                 # every snapshot process, to reap
        self.subreaper = False
        self.resumed: Connection | None = None      # in a resumed snapshot: its connection to the root
        self.resumed_steps = 0                      # warp-instructions the run had executed at the fork
        self.forks = 0                              # snapshots this process forked (since it was resumed)
        self.keys: list[tuple] = []                 # and their answer prefixes
        self.known: set[tuple] = set()              # in the root: every answer prefix with a snapshot
        self.expected = 0                           # in the root: snapshots forked by any process of the check
        self.accepted = 0                           # in the root: snapshot connections taken
        self.address = ""
        # the answers this process's run takes at its choice points, from the first, before the policy's: the
        # segment search forces whole sequences (segments.py); resumed, a snapshot gets its sequence's rest
        self.forced: tuple = ()
        self.skip_at: int | None = None     # the choice point past which the run ends (ops/clc.py skip_rest)
        self.wanted = every       # (answer prefix) -> whether a snapshot there may be resumed later

    # -- in the run (any process): the engine's CLC choice hook

    def choice(self, taken: tuple, default: bool, steps: int) -> bool | tuple[bool, bool]:
        """Fork a snapshot that will take the other answer; this process takes the policy's answer (or the one
        `forced` names for this choice point)."""
        if len(taken) < len(self.forced):
            default = self.forced[len(taken)]
        # the last choice point the segment search needs: the clusters pending after it never run
        mine = (default, True) if self.skip_at == len(taken) else default
        key = taken + (not default,)
        if not self.enabled or steps < MIN_SNAPSHOT_STEPS or not self.wanted(key) or not self._listen():
            return mine
        address = self.address
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            self.forks += 1
            self.expected += 1
            self.keys.append(key)
            self.pids.add(pid)
            return mine
        # the snapshot: it must never return into the caller's code unless resumed (a Ctrl-C to the process group
        # included), so everything until the root's answer ends the process on any exception
        try:
            conn = self._park(key, address)
        except BaseException:       # noqa: BLE001 -- a parked snapshot has nothing to report to
            os._exit(0)
        if conn is None:
            os._exit(0)
        self.resumed, self.resumed_steps = conn, steps
        return (not default, True) if self.skip_at == len(taken) else not default

    def _park(self, key: tuple, address: str) -> Connection | None:
        """In a new snapshot: drop the forking process's sockets (a parked snapshot must not keep another's
        connection open), connect to the root and wait; the connection when the root says "go", else None."""
        try:
            if self.listener is not None:
                self.listener.close()
            for conn, _ in self.parked.values():
                conn.close()
            if self.resumed is not None:
                self.resumed.close()
        except OSError:
            pass
        self.listener, self.parked, self.resumed, self.pids, self.forks, self.keys = None, {}, None, set(), 0, []
        budget.PROGRESS = None        # the command line's progress line holds a lock of a thread not forked
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(address)
            conn = Connection(sock.detach())
            conn.send((key, os.getpid()))
            go = conn.recv()
        except (OSError, EOFError):
            return None
        if not (isinstance(go, tuple) and go[0] == "go"):
            return None
        budget.advance_to(go[1])      # the root's budget clock when it resumed this snapshot (CPU clock: its work)
        self.forced = key + tuple(go[2])
        self.wanted = every if go[3] is None else go[3].__contains__
        self.skip_at = go[4]
        return conn

    def _listen(self) -> bool:
        if self.listener is not None or self.resumed is not None:
            return True
        try:
            self.dir = tempfile.mkdtemp(prefix="modelcheck-clc-")
            self.address = os.path.join(self.dir, "snapshots")
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(self.address)
            self.listener.listen(256)
            self.listener.settimeout(ACCEPT_SECONDS)
        except OSError:
            self.enabled = False
            return False
        try:   # orphaned snapshots (their resumed parent exited) come back to this process, which reaps them
            self.subreaper = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            self.subreaper = False
        return True

    # -- in a resumed snapshot: the end of its run

    def finish(self, result) -> None:
        """Send the result to the root and exit (never returns)."""
        assert self.resumed is not None
        code = 0
        try:
            self.resumed.send(("ok", result, self.keys, budget.now()))
        except Exception:        # noqa: BLE001 -- an unpicklable result: the root reruns the prefix
            code = 1
        self._exit(code)

    def fail(self, err: BaseException) -> None:
        """The resumed run raised: tell the root (it reruns the prefix in its own process) and exit."""
        assert self.resumed is not None
        try:
            self.resumed.send(("raised", "".join(traceback.format_exception(err))[-4000:], self.keys, budget.now()))
        except Exception:        # noqa: BLE001 -- the root sees the connection close: the same outcome
            pass
        self._exit(1)

    def _exit(self, code: int) -> None:
        try:
            self.resumed.close()   # type: ignore[union-attr]
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if not self.subreaper:
                # the root is no subreaper: wait for the snapshots this one forked, so they are reaped
                for pid in list(self.pids):
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:
                        pass
            os._exit(code)       # the snapshot is a copy of the caller's process: it must not return into it

    # -- in the root

    def has(self, prefix: tuple) -> bool:
        """A snapshot of `prefix` was taken (not when its choice point came early in the run, or forking is off)."""
        self.known.update(self.keys)        # the root's own snapshots
        self.keys = []
        return self.listener is not None and prefix in self.known

    def longest(self, answers: tuple) -> tuple | None:
        """The longest prefix of `answers` with a snapshot (`has`), or None."""
        self.has(())
        best = None
        for key in self.known:
            if len(key) <= len(answers) and answers[:len(key)] == key and (best is None or len(key) > len(best)):
                best = key
        return best if self.listener is not None else None

    def resume(self, prefix: tuple, then: tuple = (), wanted: frozenset | None = None, skip_at: int | None = None):
        """Resume the snapshot of `prefix` (`has(prefix)`) and return its result; SnapshotLost when it does not
        answer.  `then`: the answers its run takes at the next choice points (then the policy's); `wanted`: the
        answer prefixes where its run may fork snapshots (None: every one); `skip_at`: the choice point past which
        its run ends (the pending clusters never run)."""
        assert self.listener is not None
        self.known.discard(prefix)
        while prefix not in self.parked:
            if not self._accept():
                raise SnapshotLost(f"no snapshot of {prefix} connected")
        conn, pid = self.parked.pop(prefix)
        try:
            conn.send(("go", budget.now(), tuple(then), wanted, skip_at))
            if not conn.poll(self.deadline_seconds):
                try:
                    os.kill(pid, signal.SIGKILL)    # past every budget of its run: stuck
                except OSError:
                    pass
                raise SnapshotLost(f"the snapshot of {prefix} did not finish")
            status, payload, keys, reading = conn.recv()
            budget.advance_to(reading)          # the resumed run's CPU is this check's (CPU budget clock)
        except (EOFError, OSError) as err:
            raise SnapshotLost(f"the snapshot of {prefix} ended without a result ({err})") from None
        finally:
            conn.close()
        self.expected += len(keys)
        self.known.update(tuple(k) for k in keys)
        if status != "ok":
            last = payload.strip().splitlines()[-1] if payload.strip() else "?"
            raise SnapshotLost(f"the resumed run of {prefix} raised {last}")
        return payload

    def _accept(self) -> bool:
        """Take one parked snapshot's connection; False when none connects in time."""
        assert self.listener is not None
        try:
            sock, _ = self.listener.accept()
        except OSError:                 # socket.timeout included
            return False
        sock.settimeout(None)
        conn = Connection(sock.detach())
        self.accepted += 1
        try:
            key, pid = conn.recv()
        except (EOFError, OSError):
            conn.close()
            return True
        self.pids.add(pid)
        self.parked[tuple(key)] = (conn, pid)
        return True

    def close(self) -> None:
        """End the snapshots never resumed and reap every process this check started."""
        if self.listener is not None:
            # every snapshot forked has connected or is connecting: take them all, to know their pids
            self.listener.settimeout(5.0)
            while self.accepted < self.expected and self._accept():
                pass
        for conn, _ in self.parked.values():
            conn.close()
        self.parked.clear()
        if self.listener is not None:
            self.listener.close()       # a snapshot not yet accepted sees its connection reset and exits
            self.listener = None
        # a snapshot's own snapshots become this process's children when it exits (subreaper): reap in rounds
        left = set(self.pids)
        while left:
            done = set()
            for pid in sorted(left):
                try:
                    os.waitpid(pid, 0)
                    done.add(pid)
                except ChildProcessError:   # not (yet) this process's child
                    pass
            if not done:
                break
            left -= done
        self.pids.clear()
        if self.subreaper:
            try:
                ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            except (OSError, AttributeError):
                pass
            self.subreaper = False
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
