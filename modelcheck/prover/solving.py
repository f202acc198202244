"""z3 for the prover, set up in one place: fixed seeds, resource budgets, the residue split.

Every solver the prover uses is made here (`Ledger.solver`), and every check runs here
(`Ledger.run`, `check`).  What makes z3 give up on a query is a resource limit -- `rlimit`,
z3's count of its own elementary steps -- never the clock: a query takes the same count on
a loaded machine as on an idle one, so it gets the same answer, and so does the proof.  With
wall-clock timeouts a proof flipped from proved to incomplete under load.  (z3 is
deterministic for a given history of its context: the same proof in a fresh process takes
the same counts; a second proof in the same process may take others.)

The clock is only a safety net: a check still running when its proof's `max_seconds` runs
out (or after SAFETY_S) is stopped, and the query is left unknown with that reason -- no
other attempt follows, so the net can make a proof incomplete but never decide it another
way.

A certificate query (`check`) runs whole first, within the QUICK budget.  If that runs out,
it is split by residues: the symbolic sizes and the iteration of the query's main event
modulo its family's ring size, then (if that leaves it open) the sizes modulo the kernel's
period (N = L * N' + rho): the floor quotients become linear in N' and the smaller queries
together are fast where the whole one is slow.  Each residue query goes through ATTEMPTS in
turn, a fresh solver each: solve times of these linear queries over floor quotients are
heavy-tailed, and where one arithmetic core or seed stalls another usually answers at once.
sat in any residue is sat; a residue no attempt settles leaves the query unknown.  Budgets
are per query kind, set well above what the corpus needs (see QUICK and BUDGETS).
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import z3
from z3 import z3core

MAX_PERIOD = 12
MAX_SPLIT = 64             # residue queries a split on an event's iteration may take
SAFETY_S = 30.0
# z3 rlimit units per attempt (the older arithmetic core behind simplify and solve-eqs counts about 45M a CPU
# second, the default core about 15M).  Measured over the manifest's prove stages, every query of every kind
# run whole: a median of 50-200 units, at most 3.2M (a happens-before query of the persistent GEMM); every query
# split by residues: at most 0.33M a residue query; the closed forms at most 65k, the ranking's program at most
# 0.25M a check.  QUICK only decides when a query is split, not its answer; the other
# budgets are 60x and more above what the corpus needs, the last attempt 600x.
QUICK = 5_000_000
ATTEMPTS = (("arith2", 0, 20_000_000), ("arith2", 4, 20_000_000), ("default", 0, 20_000_000),
            ("arith2", 10, 200_000_000))
BUDGETS = {
    "closed_form": (("arith2", 0, 20_000_000), ("default", 0, 20_000_000)),   # a cursor's closed form, per loop
    "ranking_lp": (("lp", 0, 100_000_000),),   # the ranking's linear program over the reals, incremental
}
CORES = {"arith2": {"smt.arith.solver": 2}, "default": {}, "lp": {}}


@dataclass
class Answer:
    result: object                 # z3.sat | z3.unsat | z3.unknown
    model: Any = None              # for sat: a z3.ModelRef (z3 has no type stubs)
    why: str = ""                  # for unknown: the budget ran out, or the safety net stopped it


@dataclass
class Ledger:
    """What z3 spent on one proof, per query kind: checks, rlimit count, CPU seconds; and the wall-clock
    deadline of the safety net."""

    deadline: float = math.inf     # time.monotonic() after which the safety net stops checks
    checks: dict = field(default_factory=dict)
    rlimit: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    stopped: int = 0               # checks the safety net stopped
    splits: int = 0                # queries split by residues (their whole check ran out of QUICK)
    tactic: object = None          # the pipeline of certificate queries, built once

    def solver(self, core: str, seed: int, budget: int) -> z3.Solver:
        """A fresh solver: the given arithmetic core, fixed seed, rlimit budget.  Certificate queries go through
        simplification and the elimination of solved equations before the SMT core (the queries are small and
        many: this halves z3's fixed cost per query, measured on the KDA kernel's 700); the ranking's program
        is an incremental plain solver."""
        s = z3.Solver() if core == "lp" else self._pipeline().solver()
        for k, v in CORES[core].items():
            s.set(k, v)
        s.set("random_seed", seed)
        s.set("rlimit", budget)
        return s

    def _pipeline(self):
        if self.tactic is None:
            self.tactic = z3.Then("simplify", "solve-eqs", "smt")
        return self.tactic

    def run(self, kind: str, s: z3.Solver, *assumptions) -> Answer:
        """s.check() with the safety net armed for the time left, counted under `kind`."""
        left = min(SAFETY_S, self.deadline - time.monotonic())
        if left <= 0:
            self.stopped += 1
            return Answer(z3.unknown, why="the wall-clock safety net (the proof's max_seconds ran out)")
        s.set("timeout", max(1, int(left * 1000)))
        before = _rlimit(s)
        c0 = time.process_time()
        r = s.check(*assumptions)
        self.seconds[kind] = self.seconds.get(kind, 0.0) + time.process_time() - c0
        self.rlimit[kind] = self.rlimit.get(kind, 0) + _rlimit(s) - before
        self.checks[kind] = self.checks.get(kind, 0) + 1
        if r == z3.sat:
            return Answer(r, s.model())
        if r == z3.unsat:
            return Answer(r)
        why = s.reason_unknown()
        if why == "timeout":
            self.stopped += 1
            return Answer(r, why=f"the wall-clock safety net stopped z3 after {left:.0f} s")
        return Answer(r, why=f"z3's rlimit budget ran out ({why})" if why == "canceled" else f"z3: {why}")

    def attempts(self, kind: str, constraints: list, attempts) -> Answer:
        """The attempts in turn on one query until one settles it (a safety-net stop ends the turn)."""
        answer = Answer(z3.unknown, why="no attempt")
        for core, seed, budget in attempts:
            s = self.solver(core, seed, budget)
            assert_all(s, constraints)
            answer = self.run(kind, s)
            if answer.result != z3.unknown or "safety net" in answer.why:
                return answer
        return answer

    def stats(self) -> dict:
        out = {"z3_rlimit": sum(self.rlimit.values()), "z3_checks": sum(self.checks.values()),
               "z3_rlimit_by_kind": dict(sorted(self.rlimit.items())),
               "z3_checks_by_kind": dict(sorted(self.checks.items()))}
        if self.splits:
            out["z3_split_queries"] = self.splits
        if self.stopped:
            out["z3_safety_net_stops"] = self.stopped
        return out


def assert_all(s: z3.Solver, constraints: list) -> None:
    """s.add(*constraints) without the bindings' per-argument coercion (the constraints are z3 Booleans already),
    each distinct constraint once."""
    ctx = s.ctx.ref()
    seen = set()
    for c in constraints:
        i = c.get_id()
        if i not in seen:
            seen.add(i)
            z3core.Z3_solver_assert(ctx, s.solver, c.as_ast())


def _rlimit(s: z3.Solver) -> int:
    """z3's rlimit count so far (of the whole context: checks are told apart by differences).  Read through the
    C API: the Statistics wrapper reads every key through Python on each lookup."""
    ctx = s.ctx.ref()
    st = z3core.Z3_solver_get_statistics(ctx, s.solver)
    z3core.Z3_stats_inc_ref(ctx, st)
    try:
        for i in range(z3core.Z3_stats_size(ctx, st)):
            if z3core.Z3_stats_get_key(ctx, st, i) == "rlimit count":
                return int(z3core.Z3_stats_get_uint_value(ctx, st, i))
        return 0
    finally:
        z3core.Z3_stats_dec_ref(ctx, st)


def period(m) -> int:
    """The least common multiple of the periods the skeleton's commands repeat with (1 if it exceeds MAX_PERIOD)."""
    L = 2
    for size in m.families.values():
        L = math.lcm(L, size)
    for gs, form in m.forms.values():
        if gs is not None:
            L = math.lcm(L, gs.period)
        if form.kind in ("rot", "table"):
            L = math.lcm(L, form.size)
    return L if L <= MAX_PERIOD else 1


def check(m, constraints: list, kind: str, split_on=None) -> Answer:
    """A certificate query: sat (with a model), unsat, or unknown (with why).  The shared quotients of the sizes
    are added here, after every term of the query was built.

    `split_on`: (iteration term, ring size) of the query's main event, when it has one: if the whole query runs
    out of its budget, the sizes and that iteration are first fixed modulo the ring size (its slot, and with it
    every count over the ring, is then linear: measured on the persistent GEMM's hardest happens-before query
    under an earlier encoding, 0.06 s as nine queries, 0.3-0.4 s split over the sizes' residues alone, 0.4-5 s
    whole); if that leaves it open (or would take more than MAX_SPLIT queries), the sizes alone modulo the
    kernel's period."""
    ledger = m.ledger
    constraints = list(constraints) + list(m.size_terms.side)
    s = ledger.solver("arith2", 0, QUICK)
    assert_all(s, constraints)
    answer = ledger.run(kind, s)
    if answer.result != z3.unknown or "safety net" in answer.why:
        return answer
    if not m.syms:
        return ledger.attempts(kind, constraints, ATTEMPTS)
    ledger.splits += 1
    names = sorted(m.syms)[:2]
    if split_on is not None and split_on[0] is not None and 1 < split_on[1] ** (len(names) + 1) <= MAX_SPLIT:
        r, D = split_on
        answer = _by_residues(m, kind, constraints, [m.syms[n] for n in names] + [r], D)
        if answer.result != z3.unknown or "safety net" in answer.why:
            return answer
    if m.query_period is None:
        m.query_period = period(m)
    if m.query_period == 1:
        return ledger.attempts(kind, constraints, ATTEMPTS)
    return _by_residues(m, kind, constraints, [m.syms[n] for n in names], m.query_period)


def _by_residues(m, kind: str, constraints: list, terms: list, L: int) -> Answer:
    """The query once per residue of each term modulo L (t = L * t' + rho): sat in any is sat; unknown in any
    (and sat in none) is unknown."""
    out = Answer(z3.unsat)
    for residues in itertools.product(range(L), repeat=len(terms)):
        split = []
        for i, (t, rho) in enumerate(zip(terms, residues)):
            k = z3.Int(f"split{i}_div{L}")
            split += [t == L * k + rho]
        answer = m.ledger.attempts(kind, constraints + split, ATTEMPTS)
        if answer.result == z3.sat or "safety net" in answer.why:
            return answer
        if answer.result == z3.unknown:
            out = answer
    return out
