"""Queries of the certificate: a quick try, then one query per residue of the sizes.

The certificate's facts are small, but their floor quotients of the symbolic sizes (a slot
`(K % 3 + k) % 3` of a ring crossing tiles) make some of them slow for z3 as one query.
Fixing each size's residue modulo the kernel's period (the least common multiple of its ring
sizes, guard periods and the parity's 2), N = L * N' + rho, makes those quotients linear in N'
and the L queries together fast (measured: 2.1 s as one query, 0.16 s as six).
"""
from __future__ import annotations

import itertools
import math

import z3

QUICK_MS = 300
MAX_PERIOD = 12


def _solvers():
    """A portfolio of configurations, tried in turn with growing timeouts: linear integer queries over
    floor quotients have heavy-tailed solve times, and a different arithmetic core or seed usually
    answers at once where another stalls."""
    for seed, timeout in ((0, 1000), (4, 2000), (10, 3000)):
        s = z3.Solver()
        s.set("smt.arith.solver", 2)
        s.set("random_seed", seed)
        yield s, timeout
    yield z3.Solver(), 2000
    s = z3.Solver()
    s.set("smt.arith.solver", 2)
    s.set("random_seed", 6)
    yield s, 5000
    yield z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver(), 5000


def _check(constraints):
    """sat | unsat | unknown (only when every configuration of the portfolio timed out)."""
    for s, timeout in _solvers():
        s.set("timeout", timeout)
        s.add(*constraints)
        r = s.check()
        if r != z3.unknown:
            return r, (s.model() if r == z3.sat else None)
    return z3.unknown, None


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


def check(m, constraints: list):
    """(sat | unsat | unknown, model or None).  The shared quotients of the sizes are added here, after every
    term of the query was built."""
    constraints = list(constraints) + list(m.size_terms.side)
    s = z3.Solver()
    s.set("smt.arith.solver", 2)
    s.set("timeout", QUICK_MS)
    s.add(*constraints)
    r = s.check()
    if r != z3.unknown:
        return r, (s.model() if r == z3.sat else None)
    if m.query_period is None:
        m.query_period = period(m)
    L = m.query_period
    if L == 1 or not m.syms:
        return _check(constraints)
    names = sorted(m.syms)[:2]
    verdict = z3.unsat
    for residues in itertools.product(range(L), repeat=len(names)):
        split = []
        for n, rho in zip(names, residues):
            k = z3.Int(f"{n}_div{L}")
            split += [m.syms[n] == L * k + rho, k >= 0]
        r, model = _check(constraints + split)
        if r == z3.sat:
            return r, model
        if r == z3.unknown:
            verdict = z3.unknown
    return verdict, None
