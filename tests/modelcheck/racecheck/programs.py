"""Random access/sync programs over a few warps, as TIRx kernels, and a brute-force race oracle.

A program is a global sequence of steps; each warp runs its projection in order, so the
global sequence is itself a schedule and every program terminates (a wait's arrive comes
earlier in the sequence; CTA barriers sit at the same position in every warp).  Steps:
stores and loads of shared words by a lane subset, full-warp `warp_sync`, mbarrier
handoffs (arrive by a lane subset of one warp, wait by a lane subset of another), and CTA
barriers.  Stores by several lanes of one instruction hit distinct words, so every
conflict is between two instructions.

The oracle builds the happens-before graph of the trace explicitly — one node per lane
and operation, program-order edges per lane, arrive -> wait edges per mbarrier
generation, contribution -> resumption edges per named-barrier generation, all-to-all
edges among the members of a warp_sync — and calls two conflicting lane accesses a race
when neither reaches the other (networkx reachability, no vector clocks).
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
from hypothesis import strategies as st

WORDS = 32

HEADER = '''from tvm_tirx.script import tirx as T


@T.function
def prog(out: T.Tensor(({nout},), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", {threads}) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor(({nbar},), T.uint64, scope="shared")])
                s = T.alloc_tensor(ty_args=[T.Tensor(({words},), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
'''


@dataclass(frozen=True)
class Lanes:
    """A lane subset: all lanes, lanes below `k`, or the one lane `k`."""

    form: str     # all | below | one
    k: int = 0

    def guard(self) -> str | None:
        return {"all": None, "below": f"lane < {self.k}", "one": f"lane == {self.k}"}[self.form]

    def count(self) -> int:
        return {"all": 32, "below": self.k, "one": 1}[self.form]


@dataclass(frozen=True)
class Step:
    kind: str            # store | load | warp_sync | handoff | cta_sync
    warp: int = 0
    lanes: Lanes = Lanes("all")
    word: int = 0        # first word (per-lane accesses add the lane number, modulo WORDS)
    per_lane: bool = True
    to_warp: int = 0     # handoff: the waiting warp
    wait_lanes: Lanes = Lanes("all")


# few distinct subsets, so that stores, arrives and waits of different steps often pick the same lanes
lane_sets = st.one_of(st.just(Lanes("all")), st.builds(Lanes, st.just("below"), st.sampled_from([1, 8, 16])),
                      st.builds(Lanes, st.just("one"), st.sampled_from([0, 1, 7])))


@st.composite
def programs(draw, max_steps: int = 10):
    nwarps = draw(st.sampled_from([2, 2, 3]))
    warp = st.integers(0, nwarps - 1)
    steps = []
    for _ in range(draw(st.integers(2, max_steps))):
        kind = draw(st.sampled_from(["store", "store", "load", "load", "warp_sync", "handoff", "handoff",
                                     "cta_sync"]))
        if kind in ("store", "load"):
            lanes = draw(lane_sets)
            per_lane = lanes.form != "one" if kind == "store" else draw(st.booleans())
            steps.append(Step(kind, draw(warp), lanes, draw(st.sampled_from([0, 1, 7, 8])), per_lane))
        elif kind == "warp_sync":
            steps.append(Step(kind, draw(warp)))
        elif kind == "handoff":
            a = draw(warp)
            b = draw(st.integers(0, nwarps - 2))
            b = b + 1 if b >= a else b
            steps.append(Step(kind, a, draw(lane_sets), to_warp=b, wait_lanes=draw(lane_sets)))
        else:
            steps.append(Step(kind))
    return nwarps, tuple(steps)


def render(nwarps: int, steps) -> str:
    """The program as a TIRx kernel."""
    handoffs = [s for s in steps if s.kind == "handoff"]
    nout = nwarps * 32 * max(1, len(steps))
    lines = [HEADER.format(nout=nout, threads=32 * nwarps, nbar=max(1, len(handoffs)), words=WORDS)]
    ind = " " * 16
    lines.append(f"{ind}if tx == 0:")
    for i, h in enumerate(handoffs):
        lines.append(f"{ind}    T.ptx.mbarrier.init.shared.b64(bar.ptr_to([{i}]), {h.lanes.count()})")
    lines.append(f"{ind}    T.ptx.fence.mbarrier_init.release.cluster()")
    lines.append(f"{ind}T.cuda.cta_sync()")
    # split at CTA barriers; within a segment each warp runs its own steps
    segment: list[tuple[int, Step]] = []
    hidx = 0

    def flush():
        for w in range(nwarps):
            body = []
            for t, s in segment:
                body.extend(_step_lines(s, w, t, nwarps, hid[t]))
            lines.append(f"{ind}if warp == {w}:")
            lines.extend(f"{ind}    {b}" for b in (body or ["pass"]))
        segment.clear()

    hid: dict[int, int] = {}
    for t, s in enumerate(steps):
        if s.kind == "handoff":
            hid[t] = hidx
            hidx += 1
        else:
            hid[t] = -1
        if s.kind == "cta_sync":
            flush()
            lines.append(f"{ind}T.cuda.cta_sync()")
        else:
            segment.append((t, s))
    flush()
    return "\n".join(lines) + "\n"


def _guarded(guard: str | None, stmt: str) -> list[str]:
    return [stmt] if guard is None else [f"if {guard}:", f"    {stmt}"]


def _step_lines(s: Step, w: int, t: int, nwarps: int, h: int) -> list[str]:
    addr = f"(lane + {s.word}) % {WORDS}" if s.per_lane else str(s.word)
    if s.kind == "store" and s.warp == w:
        return _guarded(s.lanes.guard(), f"s[{addr}] = {t + 1}")
    if s.kind == "load" and s.warp == w:
        # each (step, warp, lane) loads into its own output word: the outputs never conflict
        return _guarded(s.lanes.guard(), f"out[({t} * {nwarps} + warp) * 32 + lane] = s[{addr}]")
    if s.kind == "warp_sync" and s.warp == w:
        return ["T.cuda.warp_sync()"]
    if s.kind == "handoff":
        if s.warp == w:
            return _guarded(s.lanes.guard(), f"T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([{h}]))")
        if s.to_warp == w:
            return _guarded(s.wait_lanes.guard(), f"T.cuda.mbarrier_wait(bar.ptr_to([{h}]), 0)")
    return []


# ---------------------------------------------------------------------------------- the oracle
def _lanes(mask, details=None) -> list[int]:
    if details and details.get("lanes") is not None:
        return list(details["lanes"])
    return list(range(32)) if mask is None else [int(i) for i in np.flatnonzero(mask)]


def oracle_races(trace) -> set[tuple[int, int]]:
    """Record-index pairs (earlier, later) with at least one conflicting, unordered lane pair."""
    g = nx.DiGraph()
    last: dict[tuple, tuple] = {}            # (warp, lane) -> last node
    releases: dict[tuple, list] = {}         # (barrier, generation) -> release nodes
    acquires: dict[tuple, list] = {}
    syncs: list[list] = []
    accesses: list[tuple] = []               # (node, record index, lane, lo, hi, writes)

    def node(key, warp, lane):
        g.add_node(key)
        prev = last.get((warp, lane))
        if prev is not None:
            g.add_edge(prev, key)
        last[(warp, lane)] = key

    items = [(ev.seq, 0, ev) for ev in trace.sync] + [(r.seq, 1, (i, r)) for i, r in enumerate(trace.accesses)]
    for seq, is_access, item in sorted(items, key=lambda x: x[0]):
        if is_access:
            i, rec = item
            lanes = _lanes(rec.lanes)
            offs = rec.offsets
            for lane in lanes:
                key = ("a", seq, lane)
                node(key, rec.warp, lane)
                lo = int(offs[lane]) if isinstance(offs, np.ndarray) else int(offs)
                accesses.append((key, i, rec.warp, lane, lo, lo + rec.size, rec.kind != "read", rec.alloc))
            continue
        ev = item
        lanes = _lanes(ev.lanes, ev.details if ev.kind == "mbarrier.arrive" else None)
        keys = []
        for lane in lanes:
            key = ("s", seq, lane)
            node(key, ev.warp, lane)
            keys.append(key)
        if ev.kind == "mbarrier.arrive":
            releases.setdefault((ev.barrier, ev.generation), []).extend(keys)
        elif ev.kind == "mbarrier.wait" and ev.details.get("order", "acquire") != "relaxed":
            acquires.setdefault((ev.barrier, ev.generation), []).extend(keys)
        elif ev.kind == "bar.sync":
            releases.setdefault((ev.barrier, ev.generation), []).extend(keys)
        elif ev.kind == "bar.wait":
            acquires.setdefault((ev.barrier, ev.generation), []).extend(keys)
        elif ev.kind == "warp_sync":
            mm = ev.details.get("membermask", 0xFFFFFFFF)
            syncs.append([k for k, lane in zip(keys, lanes) if (mm >> lane) & 1])
    for key, rel in releases.items():
        for a in rel:
            for b in acquires.get(key, ()):
                g.add_edge(a, b)
    for members in syncs:
        for a in members:
            for b in members:
                if a != b:
                    g.add_edge(a, b)
    reach = {}
    races = set()
    for x in range(len(accesses)):
        ka, ia, wa, la, loa, hia, wra, alla = accesses[x]
        for y in range(x + 1, len(accesses)):
            kb, ib, wb, lb, lob, hib, wrb, allb = accesses[y]
            if ia == ib or (wa, la) == (wb, lb) or alla != allb or not (wra or wrb):
                continue
            if hia <= lob or hib <= loa:
                continue
            if ka not in reach:
                reach[ka] = nx.descendants(g, ka)
            if kb in reach[ka]:
                continue
            races.add((min(ia, ib), max(ia, ib)))
    return races
