"""Which pairs of `fence.sc` operations the run orders, and so synchronize (PTX ISA §8.9.3, §8.9.4, §8.10).

PTX: the Fence-SC order "is an acyclic partial order, determined at runtime, that relates every
pair of morally strong fence.sc operations" (§8.9.3), and "a fence.sc operation X synchronizes
with a fence.sc operation Y if X precedes Y in the Fence-SC order" (§8.9.4, item 1).  Which of
two fences comes first is not given by the program: in one execution F1 precedes F2, in another
F2 precedes F1.  Taking the order in which the simulator happened to execute them (what this
checker did before issue 21, like the reference harness's "runtime linearisation") orders a
flagless `data = 42; fence.sc` | `fence.sc; read data` handoff that races whenever the reader's
fence comes first.

An order is *forced* — it holds in every execution with the values this run observed, which is
what a verdict covers — when the other order contradicts the axioms.  If a morally strong access
`a` after F1 (program order of F1's thread) precedes a morally strong access `b` before F2
(program order of F2's thread) in communication order (§8.9.7), then F2 before F1 would make `b`
precede `a` in causality order, which the Causality axiom forbids (§8.10.6).  Two cases are
observed by values, so they hold in every such execution:

- read-from: `a` is a write and `b` read the value `a` wrote (exactly: `a` last wrote all of
  `b`'s bytes);
- from-read (the store-buffering case of the §8.10.6 "SB" litmus test): `a` is a read and `b` a
  later write, and the write `a` read from precedes `b` in coherence order: `a` read the initial
  value (no write of those bytes in the run), or the write it read is the last write of `b`'s
  bytes before `b` and happens before `b` (Coherence axiom, §8.10.1).  That last condition is a
  happens-before question, so a candidate carries it (`needs`) and the checker answers it with
  its own knowledge at `b` — which never includes the edge being decided (`b` precedes F2).

Coherence order between two writes is not observed by values unless something reads it, so a
write-write pair forces nothing here.  Modeled subset (conservative: a missing edge can only add a
race report): `a` and `b` are ordered after / before the fences by program order of the fences'
own threads; the latest such access of each thread is used.

Assumes: one trace's sync events and access records, in one `seq` order.  Guarantees:
`candidates` maps each fence.sc lane instance (event seq, lane) to the earlier instances it
synchronizes with, each with the happens-before condition (or None) that must hold; it is empty
when fewer than two threads fence.sc.  `Tracker` finds the same as the run goes (what a
streaming checker needs): a fence's candidates depend only on what came before it, because
of each pair of accesses the fence after `b` is the earliest one of its thread that is strong
enough for the two threads' CTAs, whatever comes later; `candidates` is the tracker fed a
whole trace.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from .ordering import SCOPE_LEVEL, strength


@dataclass(frozen=True)
class Candidate:
    """F1 (event seq, lane) synchronizes with the fence this candidate is listed under, if `needs` holds:
    None, or ((write record, lane), (write record, lane)) — the first write must happen before the second."""

    f1: tuple
    needs: tuple | None


def _need(cta_a: int, cta_b: int) -> int:
    """The scope level that covers both threads (CTA, else GPU: clusters are not modeled)."""
    return 1 if cta_a == cta_b else SCOPE_LEVEL["gpu"]


class _Access:
    __slots__ = ("seq", "ident", "thread", "cta", "level", "kind", "source")

    def __init__(self, seq, ident, thread, cta, level, kind):
        self.seq, self.ident, self.thread, self.cta, self.level, self.kind = seq, ident, thread, cta, level, kind
        self.source = None


class Tracker:
    """`candidates` incrementally: feed fence.sc events (`fence`) and strong accesses (`access`, with the write each
    lane read from) in seq order; after a fence.sc event, `at(seq, lane)` gives that instance's candidates."""

    def __init__(self):
        self.fences: dict = {}       # (warp, lane) -> [(seq, cta, scope level)] of its fence.sc so far
        self.locs: dict = {}         # (space, allocation, offset, size) -> (by id, {thread: accesses}), in seq order
        self.pending: dict = {}      # thread -> [(need, Candidate)] waiting for the thread's next strong fence
        self.found: dict = {}        # (F2 seq, F2 lane) -> {Candidate}

    def fence(self, ev) -> None:
        level = SCOPE_LEVEL.get(ev.details.get("scope", "gpu"), SCOPE_LEVEL["gpu"])
        for lane in ev.lane_list():
            thread = (ev.warp, lane)
            self.fences.setdefault(thread, []).append((ev.seq, ev.cta, level))
            waiting = self.pending.get(thread)
            if waiting:
                self.found.setdefault((ev.seq, lane), set()).update(c for need, c in waiting if level >= need)
                self.pending[thread] = [(need, c) for need, c in waiting if level < need]

    def access(self, seq, ident, thread, cta, level, kind, loc, source) -> None:
        """A morally strong lane access (not an async operation's): `ident` (record, lane); `source`: the (record,
        lane) of the one write that last wrote all its bytes before it, None if no write did, "mixed" if several."""
        b = _Access(seq, ident, thread, cta, level, kind)
        b.source = source
        by_id, earlier = self.locs.setdefault(loc, ({}, {}))
        for a, needs in _communicating(b, earlier.get(b.source if b.kind in ("write", "rmw") else (), {}), by_id):
            need = _need(a.cta, b.cta)
            f1 = next((f for f in _before(self.fences.get(a.thread, []), a.seq) if f[2] >= need), None)
            if f1 is not None:
                self.pending.setdefault(b.thread, []).append((need, Candidate((f1[0], a.thread[1]), needs)))
        by_id[ident] = b
        # grouped by the write each access read from: a write only looks at the accesses that read its own prior
        # write (one list per source, not every access of the location: many atomics on one word stay linear)
        earlier.setdefault(source, {}).setdefault(thread, []).append(b)

    def at(self, seq, lane) -> list:
        return sorted(self.found.get((seq, lane), ()), key=lambda c: (c.f1, c.needs or ()))

    def result(self) -> dict:
        return {k: self.at(*k) for k in self.found if self.found[k]}


def candidates(events, records) -> dict:
    """{(F2 seq, F2 lane): [Candidate, ...]}: the earlier fence.sc instances the run may force before F2."""
    if len({(ev.warp, lane) for ev in events if ev.kind == "fence.sc" for lane in ev.lane_list()}) < 2:
        return {}
    strong = [(i, rec) for i, rec in enumerate(records) if rec.actor < 0 and strength(rec) > 0]
    if not strong:
        return {}
    source = _sources(records, {(rec.space, rec.alloc) for _, rec in strong})
    tracker = Tracker()
    fences = [ev for ev in events if ev.kind == "fence.sc"]
    k = 0
    for i, rec in strong:
        while k < len(fences) and fences[k].seq < rec.seq:
            tracker.fence(fences[k])
            k += 1
        for lane, off in rec.lane_offsets().items():
            src = source.get((i, lane)) if rec.kind in ("read", "rmw") else source.get(("before", (i, lane)))
            tracker.access(rec.seq, (i, lane), (rec.warp, lane), rec.cta, strength(rec), rec.kind,
                           (rec.space, rec.alloc, off, rec.size), src)
    for ev in fences[k:]:
        tracker.fence(ev)
    return tracker.result()


def _communicating(b, earlier, by_id) -> list:
    """(a, needs) for the latest access `a` of each other thread that precedes `b` in communication order and
    is morally strong with it (see the module docstring); `earlier`: thread -> the accesses of `b`'s location
    that read from the write `b` overwrites, in order."""
    found: list[tuple[object, tuple[object, object] | None]] = []
    if b.kind in ("read", "rmw"):
        a = by_id.get(b.source)
        if a is not None and a.thread != b.thread and a.kind in ("write", "rmw") and _morally_strong(a, b):
            found.append((a, None))
    if b.kind in ("write", "rmw"):
        prior = b.source                              # the last write of b's bytes before b, or None
        if prior == "mixed":
            return found
        for thread, accs in earlier.items():
            if thread == b.thread:
                continue
            for a in reversed(accs):
                if a.kind in ("read", "rmw") and _morally_strong(a, b) and a.source == prior:
                    found.append((a, None if prior is None else (prior, b.ident)))
                    break
    return found


def _morally_strong(a, b) -> bool:
    """Both strong with scopes that include each other's thread (same proxy and same bytes by construction)."""
    need = _need(a.cta, b.cta)
    return a.level >= need and b.level >= need


def _before(fs, seq) -> list:
    """The thread's fence.sc instances before `seq`, latest first."""
    return fs[:bisect_left([f[0] for f in fs], seq)][::-1]


def _sources(records, spaces) -> dict:
    """For each lane access of a read: (record, lane) of the one write that last wrote all its bytes, None if no
    write did, "mixed" if several; under ("before", id) the same for the bytes of each write, before it."""
    last: dict = {}
    out: dict = {}

    def writer(space, alloc, off, size):
        ws = {last.get((space, alloc, x)) for x in range(off, off + size)}
        return ws.pop() if len(ws) == 1 else "mixed"

    for i, rec in enumerate(records):
        if (rec.space, rec.alloc) not in spaces:
            continue
        offs = rec.lane_offsets()
        if rec.kind in ("read", "rmw"):
            for lane, off in offs.items():
                out[(i, lane)] = writer(rec.space, rec.alloc, off, rec.size)
        if rec.kind in ("write", "rmw"):
            for lane, off in offs.items():
                out[("before", (i, lane))] = writer(rec.space, rec.alloc, off, rec.size)
            for lane, off in offs.items():
                for x in range(off, off + rec.size):
                    last[(rec.space, rec.alloc, x)] = (i, lane)
    return out
