"""The intended happens-before is acyclic for every size: a ranking that grows along every edge.

rank(event) = a[warp, loop block] * r + b[warp, step] + sum_k c[warp, step, k] * N_k, with
r the loop variable (0 in a straight block), N_k the symbolic sizes, and a completion ranked
by its command's own b and c.  Warps of one role share the coefficients (by symmetry, a
ranking exists iff a symmetric one does: the average of a ranking's images is one).

The coefficients solve a linear program whose constraints are edges of concrete intended
executions (rank(target) >= rank(source) + 1).  z3 then checks every edge template for every
size: consecutive positions of a warp (within a block, around a loop, across blocks, across
empty loops), issue -> completion, and contribution -> wait of one generation.  An edge a
check finds that breaks the ranking becomes one more constraint (counterexample-guided), until
the checks pass, the program becomes infeasible (a concrete cycle is then looked for), or the
rounds run out.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction

import z3

from . import solving
from .execution import ARRIVALS, ASYNC
from .exprs import evaluate
from .program import block_index
from .symbolic import SymEvent, event, event_at, split_of

MAX_ROUNDS = 40


class Ranking:
    def __init__(self, m, role: dict, domain: list, stats: dict):
        self.m = m
        self.role = role
        self.domain = domain
        self.stats = stats
        self.names = list(m.syms)
        self.reps = sorted(set(role.values()))
        self.rows: set = set()
        # incremental: rows only ever get added
        self.lp = m.ledger.solver(*solving.BUDGETS["ranking_lp"][0])
        self.var: dict = {}
        self.pending: list = []         # rows not yet given to the solver, as SMT-LIB text
        self.solution: dict = {}
        self.scale = 1

    # ------------------------------------------------------------------ the linear program
    def _coeffs(self, ev: tuple, rates: dict | None = None) -> dict:
        """rank of an event (warp, step, r, env, delivered) as {variable: coefficient}; with `rates` (size ->
        d r / d size) its derivative along the sizes instead."""
        warp, step, r, env, delivered = ev
        w = self.role[warp]
        blk = block_index(self.m.proc(warp), step.block)
        tag = "d" if delivered else "s"
        if rates is not None:
            per_size: dict[str, dict[str, Fraction]] = {}
            for k, rate in rates.items():
                per_size.setdefault(k, {})
                if r is not None and rate:
                    per_size[k][f"a_{w}_{blk}"] = Fraction(rate)
                per_size[k][f"c{tag}_{w}_{step.index}_{k}"] = Fraction(1)
            return per_size
        out = {f"b{tag}_{w}_{step.index}": Fraction(1)}
        if r is not None:
            out[f"a_{w}_{blk}"] = Fraction(r)
        for k in self.names:
            out[f"c{tag}_{w}_{step.index}_{k}"] = Fraction(env[k])
        return out

    def _row(self, hi: dict, lo: dict, rhs: int) -> None:
        """rank(hi) - rank(lo) >= rhs, as a row of the program (written as SMT-LIB text, asserted in batches by
        `solve`: thousands of rows through the Python bindings cost more than the program's solution)."""
        row = dict(hi)
        for k, v in lo.items():
            row[k] = row.get(k, 0) - v
        key = (tuple(sorted((k, v) for k, v in row.items() if v)), rhs)
        if key in self.rows or not key[0]:
            return
        self.rows.add(key)
        terms = []
        for k, v in key[0]:
            if k not in self.var:
                self.var[k] = z3.Real(k)
                self.pending.append(f"(declare-const {k} Real)")
                if k.startswith("a_"):
                    self.pending.append(f"(assert (>= {k} 0.0))")
            terms.append(f"(* {_real(v)} {k})")
        self.pending.append(f"(assert (>= (+ 0.0 {' '.join(terms)}) {_real(Fraction(rhs))}))")

    def add(self, lo: tuple, hi: tuple) -> None:
        """rank(hi) >= rank(lo) + 1 at this instance, and -- where both events clearly sit near a loop bound or
        in a straight block -- the gap must not shrink as the sizes grow with the events kept at those bounds
        (a linear gap that shrinks along a family of instances fails at a large enough size)."""
        self._row(self._coeffs(hi), self._coeffs(lo), 1)
        rl, rh = self._rates(lo), self._rates(hi)
        if rl is None or rh is None:
            return
        dl, dh = self._coeffs(lo, rl), self._coeffs(hi, rh)
        for k in self.names:
            self._row(dh.get(k, {}), dl.get(k, {}), 0)

    def _rates(self, ev: tuple) -> dict | None:
        """size -> how fast the event's iteration moves with it when it stays at its nearer loop bound (None: it is
        not clearly nearer one)."""
        warp, step, r, env, _ = ev
        if r is None:
            return {k: 0 for k in self.names}
        b = step.block
        start, stop = int(evaluate(b.start, env)), int(evaluate(b.stop, env))
        near_start, near_stop = r - start, stop - 1 - r
        L = self.m.query_period or 2
        if abs(near_start - near_stop) <= L:
            return None
        bound = b.start if near_start < near_stop else b.stop
        base = int(evaluate(bound, env))
        return {k: int(evaluate(bound, {**env, k: env[k] + 1})) - base for k in self.names}

    def seed(self, ex) -> None:
        """The edges of one concrete intended execution, and its positions' program order."""
        env = ex.env
        for p in self.m.procs:
            if self.role[p.warp] != p.warp:
                continue
            prev = None
            for b in p.blocks:
                its = [None] if b.kind == "straight" else range(int(evaluate(b.start, env)),
                                                                int(evaluate(b.stop, env)))
                for r in its:
                    for st in b.steps:
                        cur = (p.warp, st, r, env, False)
                        if prev is not None:
                            self.add(prev, cur)
                        prev = cur
                        if st.cmd.kind in ASYNC:
                            self.add(cur, (p.warp, st, r, env, True))
        for entry in ex.gens.values():
            for c in entry["contrib"]:
                ce = ex.events[c]
                for wn in entry["waits"]:
                    we = ex.events[wn]
                    self.add((ce.warp, ce.step, ce.r, env, ce.delivery), (we.warp, we.step, we.r, env, False))

    def meetings(self, ex) -> set:
        """The labels of the barrier edge templates with an instance in the concrete execution `ex`."""
        out = set()
        for (fam, _, _), entry in ex.gens.items():
            for c in entry["contrib"]:
                ce = ex.events[c]
                for wn in entry["waits"]:
                    we = ex.events[wn]
                    out.add(_barrier_label(fam, self.role[ce.warp], ce.step.index, self.role[we.warp],
                                           we.step.index))
        return out

    def solve(self) -> solving.Answer:
        """The linear program's answer; when sat, its solution is the current ranking."""
        t0 = time.process_time()
        if self.pending:
            self.lp.from_string(" ".join(self.pending))
            self.pending.clear()
        answer = self.m.ledger.run("ranking_lp", self.lp)
        self.stats["ranking_lp_seconds"] = self.stats.get("ranking_lp_seconds", 0.0) + time.process_time() - t0
        if answer.result == z3.sat:
            model = self.lp.model()
            self.solution = {k: _frac(model.eval(v, model_completion=True)) for k, v in self.var.items()}
            d = 1
            for v in self.solution.values():
                d = math.lcm(d, v.denominator)
            self.scale = d
        return answer

    # ------------------------------------------------------------------ symbolic terms
    def rank(self, e: SymEvent, delivered: bool = False):
        """The event's rank as an integer term (the rational coefficients scaled by their common denominator)."""
        w = self.role[e.warp]
        blk = block_index(e.proc, e.step.block)
        tag = "d" if delivered else "s"
        get = self.solution.get
        terms = [z3.IntVal(self._scaled(get(f"b{tag}_{w}_{e.step.index}", Fraction(0))))]
        if e.r is not None:
            terms.append(self._scaled(get(f"a_{w}_{blk}", Fraction(0))) * e.r)
        for k, sym in self.m.syms.items():
            terms.append(self._scaled(get(f"c{tag}_{w}_{e.step.index}_{k}", Fraction(0))) * sym)
        return z3.Sum(terms)

    def _has_instances(self, spec: tuple, spent: dict, fam: str) -> bool:
        cons, _, _, sides = spec
        t0 = time.process_time()
        answer = solving.check(self.m, self.domain + cons + sides, "ranking", split_of(self.m, spec[1][0]))
        spent[fam] = spent.get(fam, 0.0) + time.process_time() - t0
        self.stats["ranking_queries"] = self.stats.get("ranking_queries", 0) + 1
        return answer.result != z3.unsat

    def _used(self, ev: tuple) -> frozenset:
        """The coefficients an event's rank is built from."""
        e, delivered = ev
        w = self.role[e.warp]
        tag = "d" if delivered else "s"
        names = {f"b{tag}_{w}_{e.step.index}"} | {f"c{tag}_{w}_{e.step.index}_{k}" for k in self.names}
        if e.r is not None:
            names.add(f"a_{w}_{block_index(e.proc, e.step.block)}")
        return frozenset(names)

    def _values(self, names: frozenset) -> tuple:
        """Those coefficients in the current solution, as integers at its scale (scale-independent comparisons
        would miss a change of scale: the rank terms are scaled integers)."""
        get = self.solution.get
        return tuple(sorted((k, get(k, Fraction(0))) for k in names))

    def _scaled(self, v: Fraction) -> int:
        return int(v * self.scale)

    def edge_checks(self) -> list:
        """[(label, family, builder)]: builder() -> (constraints of an edge instance, (lo event, delivered),
        (hi event, delivered), side constraints), or None when the template has no instances."""
        out = []
        m = self.m
        for w in self.reps:
            p = m.proc(w)
            for i, b in enumerate(p.blocks):
                for k in range(len(b.steps) - 1):
                    out.append((f"w{w} b{i} s{k}", "", _po_within(m, p, b, k)))
                if b.kind == "loop":
                    out.append((f"w{w} b{i} loop", "", _po_loop(m, p, b)))
                for j in range(i + 1, len(p.blocks)):
                    out.append((f"w{w} b{i}->b{j}", "", _po_across(m, p, i, j)))
            for st in p.steps:
                if st.cmd.kind in ASYNC:
                    out.append((f"w{w} s{st.index} completion", "", _async(m, p, st)))
        for fam in m.params:
            contrib = [(w, st) for w in self.reps for st in m.proc(w).steps
                       if st.cmd.family == fam and (st.cmd.kind in ARRIVALS or st.cmd.kind == "tma")]
            waits = [(w, st) for w in self.reps for st in m.proc(w).steps
                     if st.cmd.family == fam and st.cmd.kind in ("wait", "bar_wait")]
            for cw, cs in contrib:
                for ww, ws in waits:
                    out.append((_barrier_label(fam, cw, cs.index, ww, ws.index), fam, _barrier(m, cw, cs, ww, ws)))
        return out

    def prove(self, executions: list, deadline: float, spent: dict, witnesses: Sequence = ()) -> tuple:
        """("proved", None) | ("infeasible", None) | ("unknown", why).  `spent`: family -> seconds.  The ranking's
        program starts from the edges of `executions`; `witnesses` (concrete executions too) show which
        contribution and wait steps meet, so only the others are asked whether they ever do.

        Passes over every edge template; a template found broken adds its instance's rows and the program is
        solved again at once, so the rest of the pass checks the new ranking.  Done after a pass finds nothing."""
        for ex in executions:
            self.seed(ex)
        met = set()
        for ex in list(executions) + list(witnesses):
            met |= self.meetings(ex)
        checks = self.edge_checks()
        built: dict = {}
        verified: dict = {}             # label -> the coefficients its last passing check used
        lp = self.solve()
        if lp.result != z3.sat:
            return ("infeasible", None) if lp.result == z3.unsat else ("unknown", f"the ranking's program: {lp.why}")
        for _ in range(MAX_ROUNDS):
            broken = False
            for label, fam, builder in checks:
                if time.monotonic() > deadline:
                    return "unknown", "the wall-clock safety net stopped it (the proof's max_seconds ran out)"
                if label not in built:
                    built[label] = builder()
                    if built[label] is not None and fam and label not in met and \
                            not self._has_instances(built[label], spent, fam):
                        built[label] = None      # a contribution and a wait that never meet: no edge to order
                if built[label] is None:
                    continue
                cons, lo, hi, sides = built[label]
                used = self._used(lo) | self._used(hi)
                if verified.get(label) == self._values(used):
                    continue            # the ranking on its two events has not changed since it passed
                for _attempt in range(MAX_ROUNDS):
                    t0 = time.process_time()
                    gap = self.rank(hi[0], hi[1]) - self.rank(lo[0], lo[1])
                    answer = solving.check(self.m, self.domain + cons + sides + [gap < self.scale], "ranking",
                                           split_of(self.m, lo[0]))
                    spent[fam] = spent.get(fam, 0.0) + time.process_time() - t0
                    self.stats["ranking_queries"] = self.stats.get("ranking_queries", 0) + 1
                    if answer.result == z3.unsat:
                        verified[label] = self._values(used)
                        break
                    if answer.result == z3.unknown:
                        return "unknown", f"z3 did not settle the ranking on {label}: {answer.why}"
                    model = answer.model
                    env = {n: model.eval(v, model_completion=True).as_long() for n, v in self.m.syms.items()}
                    at = lambda e: None if e.r is None else model.eval(e.r, model_completion=True).as_long()  # noqa
                    self.add((lo[0].warp, lo[0].step, at(lo[0]), env, lo[1]),
                             (hi[0].warp, hi[0].step, at(hi[0]), env, hi[1]))
                    self.stats["ranking_refinements"] = self.stats.get("ranking_refinements", 0) + 1
                    broken = True
                    lp = self.solve()
                    if lp.result != z3.sat:
                        return (("infeasible", None) if lp.result == z3.unsat else
                                ("unknown", f"the ranking's program: {lp.why}"))
                else:
                    return "unknown", f"no ranking orders {label} after {MAX_ROUNDS} refinements"
            if not broken:
                return "proved", None
        return "unknown", f"no ranking after {MAX_ROUNDS} passes"


# ---------------------------------------------------------------------------------- edge templates
def _po_within(m, p, b, k):
    def build():
        a = event(m, p, b.steps[k])
        c = event_at(m, p, b.steps[k + 1], a.r)
        # positions, not events: a guard that skips a step leaves its position in the order
        cons = [] if a.r is None else [a.r >= a.state.terms.int_of(b.start), a.r < a.state.terms.int_of(b.stop)]
        return cons, (a, False), (c, False), a.side + c.side
    return build


def _po_loop(m, p, b):
    def build():
        a = event(m, p, b.steps[-1])
        c = event_at(m, p, b.steps[0], a.r + 1)
        start, stop = a.state.terms.int_of(b.start), a.state.terms.int_of(b.stop)
        return [a.r >= start, a.r + 1 < stop], (a, False), (c, False), a.side + c.side
    return build


def _po_across(m, p, i, j):
    """The last position of block i to the first of block j, when every block between them is an empty loop."""
    def build():
        bi, bj = p.blocks[i], p.blocks[j]
        probe = m.state(f"across{p.warp}_{i}_{j}", ())
        T = probe.terms
        cons = []
        for mid in p.blocks[i + 1:j]:
            if mid.kind == "straight":
                return None
            cons.append(T.int_of(mid.stop) <= T.int_of(mid.start))
        last = bi.steps[-1]
        if bi.kind == "loop":
            a = event_at(m, p, last, T.int_of(bi.stop) - 1)
            cons.append(T.int_of(bi.stop) > T.int_of(bi.start))
        else:
            a = event(m, p, last)
        if bj.kind == "loop":
            c = event_at(m, p, bj.steps[0], T.int_of(bj.start))
            cons.append(T.int_of(bj.stop) > T.int_of(bj.start))
        else:
            c = event(m, p, bj.steps[0])
        return cons, (a, False), (c, False), a.side + c.side + probe.side
    return build


def _async(m, p, st):
    def build():
        a = event(m, p, st)
        return [a.exists], (a, False), (a, True), a.side
    return build


def _barrier_label(fam: str, cw: int, cs: int, ww: int, ws: int) -> str:
    return f"{fam} w{cw}.s{cs} -> w{ww}.s{ws}"


def _barrier(m, cw, cs, ww, ws):
    def build():
        a = event(m, m.proc(cw), cs)
        b = event(m, m.proc(ww), ws)
        cons = [a.exists, b.exists, a.slot == b.slot, a.gen() == b.gen(), b.gen() >= 0]
        return cons, (a, cs.cmd.kind in ASYNC), (b, False), a.side + b.side
    return build


def _real(v: Fraction) -> str:
    """A rational as an SMT-LIB real literal."""
    mag = f"{abs(v.numerator)}.0" if v.denominator == 1 else f"(/ {abs(v.numerator)}.0 {v.denominator}.0)"
    return f"(- {mag})" if v < 0 else mag


def _frac(v) -> Fraction:
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    raise ValueError(f"not a rational: {v}")


