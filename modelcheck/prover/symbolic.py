"""One event of a warp's program at a symbolic iteration, as z3 terms.

An event is a step of a warp's layout (`program.Step`) at an iteration `r` of its loop
(no iteration in a straight block).  Its terms are built on a `model.State` whose only
constrained warp is the event's own, placed at that step: the counts of the warp's earlier
commands there are the closed forms `State.count` gives, so the generation an event intends
is a term in `r` and the symbolic sizes.  The generation rules are those of
`execution.Execution` (tested against it at sampled sizes).
"""
from __future__ import annotations

import itertools

import z3

from .execution import ARRIVALS
from .model import Model, lookup
from .program import block_index

_tags = itertools.count()


class SymEvent:
    def __init__(self, m: Model, proc, step, r=None, tag: str | None = None):
        """`r`: the iteration term (a fresh variable when None, for a loop step)."""
        self.m, self.proc, self.step = m, proc, step
        tag = tag or f"e{next(_tags)}"
        self.tag = tag
        b = step.block
        i = block_index(proc, b)
        w = proc.warp
        st = self.state = m.state(tag, (proc.warp,))
        names = dict(m.syms)
        if b.kind == "loop":
            self.r = z3.Int(f"r_{tag}") if r is None else r
            start = st.terms.int_of(b.start)
            stop = st.terms.int_of(b.stop)
            st.blk[w], st.q[w], st.pos[w] = z3.IntVal(i), self.r - start, z3.IntVal(step.offset)
            names[b.var] = self.r
            in_range = z3.And(self.r >= start, self.r < stop)
        else:
            self.r = None
            st.blk[w], st.q[w], st.pos[w] = z3.IntVal(i), z3.IntVal(0), z3.IntVal(step.offset)
            in_range = z3.BoolVal(True)
        self.T = st.terms_for(names)
        guard = self.T.bool_of(step.guard) if step.guard is not None else z3.BoolVal(True)
        self.exists = z3.And(in_range, guard)
        self.slot = self.T.int_of(step.cmd.slot)
        self._gen = None

    @property
    def warp(self) -> int:
        return self.proc.warp

    @property
    def cmd(self):
        return self.step.cmd

    @property
    def side(self) -> list:
        return self.state.side

    def units_before(self, fam: str | None = None):
        """Arrival units of this warp on fam[slot] before the event (commits counted at issue)."""
        fam = fam or self.cmd.family
        return sum((st.cmd.units * self.state.count(st, self.slot) for st in self.proc.steps
                    if st.cmd.family == fam and st.cmd.kind in ARRIVALS), z3.IntVal(0))

    def expects_before(self):
        return sum((self.state.count(st, self.slot) for st in self.proc.steps
                    if st.cmd.family == self.cmd.family and st.cmd.kind == "expect_tx"), z3.IntVal(0))

    def gen(self):
        """The generation the event intends (see execution.Execution)."""
        if self._gen is not None:
            return self._gen
        c, st, w = self.cmd, self.state, self.warp
        fam = c.family
        if c.kind in ARRIVALS or c.kind == "expect_tx":
            g = st.share_gens(w, fam, self.slot, self.units_before())
        elif c.kind == "wait":
            g = st.waits(w, fam, self.slot) + st.k0(w, fam, self.slot)
        elif c.kind == "bar_wait":
            g = st.share_gens(w, fam, self.slot, self.units_before()) - 1
        elif c.kind == "tma":
            # the generation of the warp's latest expect_tx on that slot: its expects come in runs of
            # `expects_per_gen` per generation (a lemma the certificate proves)
            per = self.m.tx_runs.get((w, fam), 0)
            g = self.T.floordiv(self.expects_before() - 1, per) if per else z3.IntVal(-2)
        else:
            raise ValueError(f"no generation for {c.kind}")
        self._gen = g
        return g

    def share(self):
        prm = self.m.params[self.cmd.family]
        return lookup(self.slot, prm.share.get(self.warp, (0,) * prm.size))

    # ------------------------------------------------------------------ order within the warp
    def key(self):
        """(block index, iteration term or None, offset): program order is lexicographic on it."""
        return block_index(self.proc, self.step.block), self.r, self.step.offset


def po_le(a: SymEvent, b: SymEvent, strict: bool = False):
    """a comes no later than b in their (common) warp's program order (strictly before with `strict`)."""
    ba, ra, oa = a.key()
    bb, rb, ob = b.key()
    if ba != bb:
        return z3.BoolVal(ba < bb)
    if ra is None:
        return z3.BoolVal(oa < ob if strict else oa <= ob)
    within = (oa < ob) if strict else (oa <= ob)
    return z3.Or(ra < rb, z3.And(ra == rb, z3.BoolVal(within)))


class Ends:
    """Per warp: what it does over the whole run (counts at its end), for one symbolic slot."""

    def __init__(self, m: Model, tag: str = "end"):
        self.m = m
        self.state = m.state(tag, ())          # counts at the end need no positions

    @property
    def side(self) -> list:
        return self.state.side

    def units(self, warp: int, fam: str, slot):
        st = self.state
        return sum((s.cmd.units * st.count(s, slot, at_end=True) for s in self.m.proc(warp).steps
                    if s.cmd.family == fam and s.cmd.kind in ARRIVALS), z3.IntVal(0))

    def waits(self, warp: int, fam: str, slot):
        return self.state.waits(warp, fam, slot, at_end=True)

    def executions(self, warp: int, fam: str, slot, kind: str):
        return sum((self.state.count(s, slot, at_end=True) for s in self.m.proc(warp).steps
                    if s.cmd.family == fam and s.cmd.kind == kind), z3.IntVal(0))

    def tx_bytes(self, warp: int, fam: str, slot, kind: str):
        """expect_tx units, or the bytes of the warp's TMA completions, on fam[slot] over the run."""
        st = self.state
        if kind == "expect_tx":
            return sum((s.cmd.units * st.count(s, slot, at_end=True) for s in self.m.proc(warp).steps
                        if s.cmd.family == fam and s.cmd.kind == "expect_tx"), z3.IntVal(0))
        return sum((self.m.tma_bytes[s.cmd.site] * st.count(s, slot, at_end=True) for s in self.m.proc(warp).steps
                    if s.cmd.family == fam and s.cmd.kind == "tma"), z3.IntVal(0))
