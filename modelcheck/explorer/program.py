"""Fixed sync programs: each warp's sequence of sync commands, taken from one run.

Everything the run decided stays fixed (paths, loop counts, elected lanes, counts,
parities, barrier addresses); what stays free is the interleaving of warps and when
async completions land.  Each command keeps the vector clocks phase A recorded
around it (`before`, `after`), which the projections use to keep the order that
other resources impose.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Command:
    warp: int
    index: int                     # position in the warp's program
    # init inval arrive expect_tx complete_tx wait issue_tx issue_arrive contribute resume
    kind: str
    resource: tuple                # ("mbarrier", cta, addr) | ("named", cta, id)
    count: int = 0
    tx: int = 0
    parity: int | None = None
    threads: int = 0
    flavor: str = ""
    aligned: bool = False
    noinc: bool = True
    lanes: int = 0xFFFFFFFF        # the contributing lanes (a divergent path contributes its own)
    generation: int | None = None  # what the run assigned (for certificates and messages)
    site: int | None = field(default=None, compare=False)
    iters: tuple = field(default=(), compare=False)
    before: np.ndarray | None = field(default=None, compare=False, repr=False)   # clock before
    after: np.ndarray | None = field(default=None, compare=False, repr=False)    # clock after

    def label(self) -> str:
        if self.kind in ("arrive", "expect_tx", "complete_tx", "issue_tx"):
            return f"{self.kind}(count={self.count}, tx={self.tx})"
        if self.kind == "wait":
            return f"wait(parity={self.parity})"
        if self.kind == "contribute":
            return f"bar.{self.flavor}({self.threads} threads of {self.count})"
        return self.kind


@dataclass
class Programs:
    """The per-warp programs of one run, plus what names resources for messages."""

    warps: dict[int, list[Command]]
    resource_names: dict[tuple, str]

    def commands(self):
        for prog in self.warps.values():
            yield from prog

    def resources(self) -> list[tuple]:
        seen = dict.fromkeys(c.resource for c in self.commands())      # (a set: one pass, not per resource)
        return sorted(seen, key=lambda r: (r[0], r[1], r[2]))

    def by_resource(self) -> dict[tuple, dict[int, list[Command]]]:
        """Each resource's commands per warp (warps in program order): all projections in one pass over the
        commands, not one pass per resource (a launch of thousands of CTAs has thousands of barriers)."""
        out: dict[tuple, dict[int, list[Command]]] = {}
        for w, prog in self.warps.items():
            for c in prog:
                out.setdefault(c.resource, {}).setdefault(w, []).append(c)
        return out

    def size(self) -> int:
        return sum(len(p) for p in self.warps.values())


_COMMAND_KINDS = frozenset({"mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.expect_tx",
                            "mbarrier.complete_tx", "mbarrier.wait", "bar.sync", "bar.red", "bar.arrive", "bar.wait"})


def is_command(ev) -> bool:
    """Whether `build` makes a command of sync event `ev` (the events whose clocks phase A keeps)."""
    if ev.details.get("async"):
        return False
    if ev.kind == "async.issue":
        return ev.barrier is not None and ev.barrier[0] == "mbarrier"
    return ev.kind in _COMMAND_KINDS


def is_read(ev) -> bool:
    """Whether `build` reads sync event `ev`: a command, or an event naming a resource (the events phase A keeps)."""
    return not ev.details.get("async") and (ev.barrier is not None or ev.kind in _COMMAND_KINDS)


def build(events, clocks: dict, name_of) -> Programs:
    """Commands from a trace's sync events (in execution order) and their phase-A clocks."""
    warps: dict[int, list[Command]] = {}
    names: dict[tuple, str] = {}

    def add(ev, kind, resource, **kw):
        prog = warps.setdefault(ev.warp, [])
        before, after = clocks.get(ev.seq, (None, None))
        prog.append(Command(ev.warp, len(prog), kind, resource, site=ev.site, iters=tuple(ev.iters), before=before,
                            after=after, **kw))

    for ev in events:
        d = ev.details
        if d.get("async"):
            continue            # completions are transitions of the model, not warp commands
        b = ev.barrier
        resource = (b[0], b[1], b[2]) if b is not None else None
        if resource is not None and resource not in names:
            names[resource] = name_of(b[2]) if b[0] == "mbarrier" else f"named barrier {b[2]}"
        k = ev.kind
        if k == "mbarrier.init":
            add(ev, "init", resource, count=ev.count, generation=0)
        elif k == "mbarrier.inval":
            add(ev, "inval", resource)
        elif k == "mbarrier.arrive":
            add(ev, "arrive", resource, count=ev.count, tx=ev.tx, generation=ev.generation)
        elif k == "mbarrier.expect_tx":
            add(ev, "expect_tx", resource, tx=ev.tx, generation=ev.generation)
        elif k == "mbarrier.complete_tx":
            add(ev, "complete_tx", resource, tx=ev.tx, generation=ev.generation)
        elif k == "mbarrier.wait":
            add(ev, "wait", resource, parity=ev.parity, generation=ev.generation)
        elif k == "async.issue" and resource is not None and resource[0] == "mbarrier":
            if d.get("kind") in ("cp.async.mbarrier.arrive", "tcgen05.commit"):
                add(ev, "issue_arrive", resource, count=1, noinc=bool(d.get("noinc", True)),
                    generation=ev.generation)
            else:
                add(ev, "issue_tx", resource, tx=ev.tx, generation=ev.generation)
        elif k in ("bar.sync", "bar.red", "bar.arrive"):
            add(ev, "contribute", resource, count=ev.count, threads=d.get("threads", 32),
                flavor="arrive" if k == "bar.arrive" else "sync", aligned=bool(d.get("aligned")),
                generation=ev.generation, lanes=d.get("lanes", 0xFFFFFFFF))
        elif k == "bar.wait":
            add(ev, "resume", resource, generation=ev.generation)
    return Programs(warps, names)


def gating(programs: dict[int, list[Command]]) -> dict[tuple, tuple]:
    """For each command, how many commands of every other warp (in these programs) must be done first.

    d happens-before c iff d's clock component for its own warp is <= c's clock component for
    that warp (vector-clock property), and along one warp that component only grows, so the
    commands of warp w' that must precede c form a prefix; its length is found by bisection."""
    own = {}
    for w, prog in programs.items():
        own[w] = np.array([c.after[w] if c.after is not None else 0 for c in prog], dtype=np.int64)
    out: dict[tuple, tuple] = {}
    for w, prog in programs.items():
        for c in prog:
            req = []
            for w2, arr in own.items():
                if w2 == w or c.before is None or arr.size == 0:
                    req.append((w2, 0))
                    continue
                req.append((w2, int(np.searchsorted(arr, c.before[w2], side="right"))))
            out[(w, c.index)] = tuple(req)
    return out
