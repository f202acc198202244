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
when fewer than two threads fence.sc.
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


def _fences(events) -> dict:
    """(warp, lane) -> [(seq, cta, scope level)] of its fence.sc, in execution order."""
    out: dict = {}
    for ev in events:
        if ev.kind != "fence.sc":
            continue
        level = SCOPE_LEVEL.get(ev.details.get("scope", "gpu"), SCOPE_LEVEL["gpu"])
        for lane in ev.lane_list():
            out.setdefault((ev.warp, lane), []).append((ev.seq, ev.cta, level))
    return out


class _Access:
    __slots__ = ("seq", "id", "thread", "cta", "level", "kind")

    def __init__(self, seq, ident, thread, cta, level, kind):
        self.seq, self.id, self.thread, self.cta, self.level, self.kind = seq, ident, thread, cta, level, kind


def candidates(events, records) -> dict:
    """{(F2 seq, F2 lane): [Candidate, ...]}: the earlier fence.sc instances the run may force before F2."""
    fences = _fences(events)
    if len(fences) < 2:
        return {}
    # the strong accesses of fencing threads, per location (space, allocation, offset, size), in seq order
    locs: dict = {}
    spaces = set()
    for i, rec in enumerate(records):
        if rec.actor >= 0 or strength(rec) == 0:
            continue
        for lane, off in rec.lane_offsets().items():
            if (rec.warp, lane) in fences:
                acc = _Access(rec.seq, (i, lane), (rec.warp, lane), rec.cta, strength(rec), rec.kind)
                locs.setdefault((rec.space, rec.alloc, off, rec.size), []).append(acc)
                spaces.add((rec.space, rec.alloc))
    if not locs:
        return {}
    source = _sources(records, spaces)
    seqs = {t: [f[0] for f in fs] for t, fs in fences.items()}
    out: dict = {}
    for accs in locs.values():
        by_id = {acc.id: acc for acc in accs}
        earlier: dict = {}              # thread -> its accesses so far
        for b in accs:
            for a, needs in _communicating(b, earlier, by_id, source):
                pair = _strong_pair(_before(fences[a.thread], seqs[a.thread], a.seq),
                                    _after(fences[b.thread], seqs[b.thread], b.seq))
                if pair is not None:
                    (s1, _, _), (s2, _, _) = pair
                    out.setdefault((s2, b.thread[1]), set()).add(Candidate((s1, a.thread[1]), needs))
            earlier.setdefault(b.thread, []).append(b)
    return {k: sorted(v, key=lambda c: (c.f1, c.needs or ())) for k, v in out.items()}


def _communicating(b, earlier, by_id, source) -> list:
    """(a, needs) for the latest access `a` of each other thread that precedes `b` in communication order and
    is morally strong with it (see the module docstring)."""
    found = []
    if b.kind in ("read", "rmw"):
        a = by_id.get(source.get(b.id))
        if a is not None and a.thread != b.thread and a.kind in ("write", "rmw") and _morally_strong(a, b):
            found.append((a, None))
    if b.kind in ("write", "rmw"):
        prior = source.get(("before", b.id))          # the last write of b's bytes before b, or None
        if prior == "mixed":
            return found
        for thread, accs in earlier.items():
            if thread == b.thread:
                continue
            for a in reversed(accs):
                if a.kind in ("read", "rmw") and _morally_strong(a, b) and source.get(a.id, "?") == prior:
                    found.append((a, None if prior is None else (prior, b.id)))
                    break
    return found


def _morally_strong(a, b) -> bool:
    """Both strong with scopes that include each other's thread (same proxy and same bytes by construction)."""
    need = _need(a.cta, b.cta)
    return a.level >= need and b.level >= need


def _before(fs, seqs, seq) -> list:
    """The thread's fence.sc instances before `seq`, latest first."""
    return fs[:bisect_left(seqs, seq)][::-1]


def _after(fs, seqs, seq) -> list:
    """The thread's fence.sc instances after `seq`, earliest first."""
    return fs[bisect_left(seqs, seq):]


def _strong_pair(f1s, f2s):
    """The latest fence before `a` and the earliest after `b` that are morally strong with each other."""
    for f1 in f1s:
        for f2 in f2s:
            need = _need(f1[1], f2[1])
            if f1[2] >= need and f2[2] >= need:
                return f1, f2
    return None


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
