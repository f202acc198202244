"""One event of a warp's program at a symbolic iteration, as z3 terms.

An event is a step of a warp's layout (`program.Step`) at an iteration `r` of its loop
(no iteration in a straight block).  Its terms are built on a `model.State` whose only
constrained warp is the event's own, placed at that step: the counts of the warp's earlier
commands there are the closed forms `State.count` gives, so the generation an event intends
is a term in `r` and the symbolic sizes.  The generation rules are those of
`execution.Execution` (tested against it at sampled sizes).

Terms are built once per step (`event`: the step at a free iteration, cached on the model)
and reused by every query.  The same step at another iteration (`event_at`: a path's hop at
X's iteration plus one, the next iteration of a loop) is a copy: the step's terms with its
iteration variable replaced and its quotient variables renamed, by `z3.substitute`, so no
term is built again through the Python bindings.
"""
from __future__ import annotations

import itertools

import z3

from .execution import ARRIVALS
from .model import Model, lookup
from .program import block_index

_tags = itertools.count()


def event(m: Model, proc, step) -> "SymEvent":
    """The step's event at a free iteration, built once per model."""
    key = (proc.warp, step.index)
    e = m.events.get(key)
    if e is None:
        e = m.events[key] = SymEvent(m, proc, step, tag=f"w{proc.warp}s{step.index}")
    return e


def event_at(m: Model, proc, step, r):
    """The step's event at iteration `r` (a term; None in a straight block): a copy of `event`'s terms."""
    base = event(m, proc, step)
    return base if base.r is None else EventCopy(base, r)


def event_fresh(m: Model, proc, step):
    """The step's event at an iteration of its own (a copy with a fresh iteration variable), for a query that
    needs two events of one step."""
    base = event(m, proc, step)
    return base if base.r is None else EventCopy(base, z3.Int(f"r_{base.tag}_{next(_tags)}"))


class SymEvent:
    def __init__(self, m: Model, proc, step, r=None, tag: str | None = None):
        """`r`: the iteration term (a fresh variable when None, for a loop step).  Use `event` and `event_at`,
        which build each step's terms once."""
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
        self._units = None
        self._expects = None
        self._side_conj = (0, None)

    @property
    def warp(self) -> int:
        return self.proc.warp

    @property
    def cmd(self):
        return self.step.cmd

    @property
    def side(self) -> list:
        return self.state.side

    def side_conj(self):
        """The side constraints as one conjunction (rebuilt when terms built since added some)."""
        n, conj = self._side_conj
        if n != len(self.side) or conj is None:
            conj = z3.And(*self.side) if self.side else z3.BoolVal(True)
            self._side_conj = (len(self.side), conj)
        return conj

    def units_before(self):
        """Arrival units of this warp on the event's family and slot before it (commits counted at issue)."""
        if self._units is None:
            fam = self.cmd.family
            self._units = sum((st.cmd.units * self.state.count(st, self.slot) for st in self.proc.steps
                               if st.cmd.family == fam and st.cmd.kind in ARRIVALS), z3.IntVal(0))
        return self._units

    def expects_before(self):
        if self._expects is None:
            self._expects = sum((self.state.count(st, self.slot) for st in self.proc.steps
                                 if st.cmd.family == self.cmd.family and st.cmd.kind == "expect_tx"), z3.IntVal(0))
        return self._expects

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


_copies = itertools.count()


class EventCopy:
    """The event of `base`'s step at iteration `r`: base's terms with its iteration variable replaced by r and its
    own quotient variables by fresh ones (shared quotients of the sizes stay).  Terms are substituted when first
    asked for; its side constraints are one conjunction, read last (after the query's terms are built)."""

    def __init__(self, base: SymEvent, r):
        self.base, self.m, self.proc, self.step, self.r = base, base.m, base.proc, base.step, r
        self._tag = next(_copies)
        self._pairs = [(base.r, r)]
        self._renamed = 0
        self._memo: dict = {}

    @property
    def warp(self) -> int:
        return self.proc.warp

    @property
    def cmd(self):
        return self.step.cmd

    def _copy(self, name: str, term):
        hit = self._memo.get(name)
        if hit is None or hit[0] is not term:
            fresh = self.base.T.fresh
            for i in range(self._renamed, len(fresh)):
                self._pairs.append((fresh[i], z3.Int(f"c{self._tag}_{i}")))
            self._renamed = len(fresh)
            hit = self._memo[name] = (term, z3.substitute(term, *self._pairs))
        return hit[1]

    @property
    def exists(self):
        return self._copy("exists", self.base.exists)

    @property
    def slot(self):
        return self._copy("slot", self.base.slot)

    def gen(self):
        return self._copy("gen", self.base.gen())

    @property
    def side(self) -> list:
        return [self._copy("side", self.base.side_conj())]

    def key(self):
        return block_index(self.proc, self.step.block), self.r, self.step.offset


def split_of(m: Model, e) -> tuple | None:
    """(iteration term, ring size of its family) of an event, for splitting a hard query on (`solving.check`)."""
    if e is None or e.r is None:
        return None
    return e.r, m.params[e.cmd.family].size


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
