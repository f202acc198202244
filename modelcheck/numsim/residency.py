"""CTA residency: a grid larger than what the GPU holds at once runs in waves.

An SM holds as many CTAs as its blocks, warps and shared memory allow (`targets.resident_ctas`); the
rest of the grid waits, and a CTA starts when a resident one exits.  When the grid has more clusters
than fit at once, the engine gives the run a `Residency`: clusters launch in cluster-id order, all CTAs
of a cluster together, at most `resident` clusters at a time.  A CTA's shared memory (pool, written
flags and buffer views) is made when its cluster launches and released when the cluster's last warp
exits, so a run holds shared memory for the resident CTAs only.

What it does not change: a launch is no synchronization.  The PTX memory model orders nothing between
one CTA's exit and another CTA's start, so no sync event is raised and the checkers keep the CTAs of
different waves unordered.  A warp of a CTA not yet launched waits on its launch (a `Wait` that is no
barrier): when every unfinished warp is blocked and some wait for a launch, the resident CTAs wait for
something only a later CTA would do, a hang on hardware, reported as `deadlock` naming both.  A
resident CTA that spins on memory only a later CTA writes polls until a budget runs out (NumSim's rule
for spinning: `incomplete`, never a deadlock claim); the budget message then says that CTAs were still
waiting for a free SM (see docs/semantics.md#cta-residency).
"""
from __future__ import annotations

from .errors import UnsupportedTIRxError
from .runtime import Wait


class LaunchToken:
    """What the warps of one cluster wait on until it launches (woken by `eng.touch(token)`)."""

    __slots__ = ("cluster", "launched")

    def __init__(self, cluster: int):
        self.cluster = cluster
        self.launched = False


class ReleasedShared:
    """The shared memory of a CTA that exited under residency: its bytes are gone (the next CTA of the wave
    has them on hardware).  Bookkeeping kept on the pool object (the wgmma sequences `at_exit` inspects)
    survives; reaching the bytes is an unmodeled operation, not a silent read of stale memory."""

    def __init__(self, cta: int, kept: dict):
        self.__dict__.update(kept)
        self.__dict__["cta"] = cta

    def __getattr__(self, name):
        raise UnsupportedTIRxError("shared memory after the CTA exited", None,
                                   f"an operation reaches CTA {self.__dict__['cta']}'s shared memory after every "
                                   f"warp of its cluster exited, when the next CTA of the wave may hold it")


_MEMORY = ("pool", "written", "allocs", "_bases", "_ordered")


def release_shared(eng, ctas) -> None:
    """The shared memory of `ctas` (a cluster whose last warp exited) is gone: its bytes are released, its
    bookkeeping kept (ReleasedShared)."""
    if eng.columns is not None:
        eng.columns.flush()             # buffered records still name the allocations about to go
    for rt in ctas:
        shared = rt.shared
        if eng.columns is not None:
            eng.columns.release(shared.allocs.values())
        kept = {k: v for k, v in shared.__dict__.items() if k not in _MEMORY}
        rt.shared = ReleasedShared(rt.index, kept)
        rt.views = []


class Residency:
    """Which clusters are resident; launches the next when one exits (see the module docstring)."""

    def __init__(self, eng, clusters: list[list], resident: int, per_sm: str, make_shared):
        self.eng = eng
        self.clusters = clusters                    # cluster id -> its CTAs by rank
        self.resident = max(int(resident), 1)       # clusters at once
        self.make_shared = make_shared              # rt -> None: give the CTA its shared memory
        self.tokens = [LaunchToken(c) for c in range(len(clusters))]
        self.warps = [sum(len(rt.warps) for rt in cl) for cl in clusters]
        self.exits = [0] * len(clusters)
        self.next = 0
        self.running = 0
        self.peak = 0
        self.finished = 0                           # clusters exited
        self.last_exit = 0                          # the meter's step count at the last exit (or the start)
        self.what = (f"await a free SM: launches when a resident CTA exits ({per_sm}; the CTAs before it in "
                     f"launch order hold them)")

    def start(self) -> None:
        while self.running < self.resident and self.next < len(self.clusters):
            self._launch()

    def pending(self) -> int:
        """CTAs not launched yet."""
        return sum(len(cl) for cl in self.clusters[self.next:])

    def _launch(self) -> None:
        cid = self.next
        self.next += 1
        for rt in self.clusters[cid]:
            self.make_shared(rt)
        self.running += 1
        self.peak = max(self.peak, self.running)
        tok = self.tokens[cid]
        tok.launched = True
        self.eng.touch(tok)

    def _exit(self, cid: int) -> None:
        eng = self.eng
        release_shared(eng, self.clusters[cid])
        self.running -= 1
        self.finished += 1
        self.last_exit = eng.meter.steps if eng.meter is not None else 0
        self.start()

    def stalled_note(self, steps: int) -> str:
        """For a run stopped by a budget with CTAs not started yet: what residency says about it."""
        waiting = self.pending()
        note = f"; {waiting:,} CTA(s) had not started (waiting for a free SM), {self.finished:,} cluster(s) had exited"
        since = steps - self.last_exit
        if since * 2 > steps:        # most of the run went by without an exit: maybe waiting on a later CTA
            note += (f", none in the last {since:,} warp-instructions (if a resident CTA waits for one that has "
                     f"not started, the kernel hangs on hardware)")
        return note

    def gate(self, program):
        """The per-warp program behind the launch: wait for the cluster's launch, run, count the exit."""
        def gated(w):
            cid = w.rt.cluster_id
            tok = self.tokens[cid]
            if not tok.launched:
                yield Wait(tok, lambda: tok.launched, self.what)
            yield from program(w)
            self.exits[cid] += 1
            if self.exits[cid] == self.warps[cid]:
                self._exit(cid)
        return gated
