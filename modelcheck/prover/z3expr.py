"""IR expressions to z3 integer terms, with floor division lowered to explicit quotients.

z3's own `/` and `%` on compound terms have heavy-tailed solve times; a quotient and a
remainder variable per division by a constant (x = d*q + r, 0 <= r < d) keep every
query linear and fast (engineering-measurements §3).  Division by a symbolic divisor
falls back to z3's operators (Euclidean, equal to floor division for positive divisors).
Booleans are z3 Bools; comparisons and `and`/`or`/`not` map directly.
"""
from __future__ import annotations

import itertools

import z3

import ir

from .exprs import SHARED_OPS

_fresh = itertools.count()

class Terms:
    """Builds terms over a variable map and collects the side constraints of their divisions."""

    def __init__(self, names: dict, shared: "Terms | None" = None):
        self.names = names                 # variable / constant name -> z3 term
        self.side: list = []               # constraints the terms rely on
        self._memo: dict = {}
        self._pulled = 0                   # how many of the shared side constraints this side has taken
        # terms over the symbolic sizes alone are divided once for the whole model: every event of a query then
        # shares the quotient of `K % 3` instead of each bringing its own for z3 to prove equal
        self.shared = shared
        self._shared_atoms = None if shared is None else {v.get_id() for v in shared.names.values()}

    def over(self, names: dict) -> "Terms":
        """Terms over other names that share this one's quotient variables and side constraints."""
        t = Terms(names, self.shared)
        t._memo = self._memo
        t.side = self.side
        return t

    def floordiv(self, x, d: int):
        q, _ = self.divmod(x, d)
        return q

    def floormod(self, x, d: int):
        _, r = self.divmod(x, d)
        return r

    def divmod(self, x, d: int):
        if isinstance(x, int):
            return x // d, x % d
        if z3.is_int_value(x):
            v = x.as_long()
            return z3.IntVal(v // d), z3.IntVal(v % d)
        if d == 1:
            return x, z3.IntVal(0)
        # the memo holds x itself, so its AST id cannot be recycled for another term while the entry lives
        key = (x.get_id(), d)
        hit = self._memo.get(key)
        if hit is not None and hit[0].eq(x):
            return hit[1], hit[2]
        # x = d*y + z with y the part of x's affine form whose coefficients d divides: x // d = y + z // d
        # exactly, so only z (often a constant: a size's residue, 2*j + 1) needs a quotient variable
        form = _affine(x)
        if form is not None and self.shared is not None and form[0] and \
                all(i in self._shared_atoms for i in form[0]):
            q, r = self.shared.divmod(x, d)
            # every shared definition made so far, the nested ones (x's rest after its whole multiples) included,
            # so queries built from this side alone stay whole
            self.side += self.shared.side[self._pulled:]
            self._pulled = len(self.shared.side)
            self._memo[key] = (x, q, r)
            return q, r
        if form is not None:
            coeffs, const = form
            whole = [(a, c // d) for a, c in coeffs.values() if c % d == 0]
            if whole or not 0 <= const < d:
                y = sum((c * a for a, c in whole), z3.IntVal(const // d))
                rest = [(a, c) for a, c in coeffs.values() if c % d]
                if not rest:
                    q, r = y, z3.IntVal(const % d)
                else:
                    qz, r = self.divmod(sum((c * a for a, c in rest), z3.IntVal(const % d)), d)
                    q = y + qz
                self._memo[key] = (x, q, r)
                return q, r
        n = next(_fresh)
        q, r = z3.Int(f"q{n}"), z3.Int(f"r{n}")
        self.side += [x == d * q + r, r >= 0, r < d]
        self._memo[key] = (x, q, r)
        return q, r

    def int_of(self, e: ir.Expr):
        t = self.term(e)
        if z3.is_bool(t):
            return z3.If(t, 1, 0)
        return t

    def bool_of(self, e: ir.Expr):
        t = self.term(e)
        if z3.is_bool(t):
            return t
        return t != 0

    def term(self, e: ir.Expr):
        if isinstance(e, ir.Const):
            if isinstance(e.value, bool) or e.dtype == "bool":
                return z3.BoolVal(bool(e.value))
            return z3.IntVal(int(e.value))
        if isinstance(e, (ir.Var, ir.ConstRef)):
            t = self.names.get(e.name)
            if t is None:
                raise KeyError(e.name)
            return t
        if isinstance(e, ir.Cast):
            return self.term(e.value)
        if isinstance(e, ir.UnaryOp):
            a = self.term(e.a)
            if e.op in ("not", "!"):
                return z3.Not(a if z3.is_bool(a) else a != 0)
            if e.op == "-":
                return -a
            raise ValueError(f"operator {e.op} outside the prover's arithmetic")
        if isinstance(e, ir.Select):
            return z3.If(self.bool_of(e.cond), self.int_of(e.true_value), self.int_of(e.false_value))
        if isinstance(e, ir.BinOp):
            return self._binop(e)
        raise ValueError(f"{type(e).__name__} outside the prover's arithmetic")

    def _binop(self, e: ir.BinOp):
        op = e.op
        if op in ("and", "&&", "or", "||"):
            a, b = self.bool_of(e.a), self.bool_of(e.b)
            return z3.And(a, b) if op in ("and", "&&") else z3.Or(a, b)
        a, b = self.int_of(e.a), self.int_of(e.b)
        if op in SHARED_OPS:
            return SHARED_OPS[op](a, b)
        if op in ("//", "floordiv", "%", "floormod"):
            d = _const(e.b)
            if d is not None and d > 0:
                return self.floordiv(a, d) if op in ("//", "floordiv") else self.floormod(a, d)
            return a / b if op in ("//", "floordiv") else a % b
        if op in ("tdiv", "tmod"):
            # C division truncates toward zero
            d = _const(e.b)
            if d is None or d <= 0:
                raise ValueError("truncating division by a non-constant or non-positive divisor")
            q = z3.If(a >= 0, self.floordiv(a, d), -self.floordiv(-a, d))
            return q if op == "tdiv" else a - d * q
        if op == "^":
            # xor on the values the fragment uses it for: phase bits (0/1)
            return z3.If(a == b, 0, 1) if _is_bit(e.a) or _is_bit(e.b) else _xor_fail(e)
        if op == "min":
            return z3.If(a <= b, a, b)
        if op == "max":
            return z3.If(a >= b, a, b)
        raise ValueError(f"operator {op} outside the prover's arithmetic")


def _const(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const) and not isinstance(e.value, bool):
        return int(e.value)
    return None


def _is_bit(e: ir.Expr) -> bool:
    c = _const(e)
    return c in (0, 1)


def _xor_fail(e):
    raise ValueError("xor of values other than a phase bit and 0/1")


_AFFINE: dict = {}           # term id -> (term, form): z3 hash-conses terms, and the term kept alive keeps its id
_AFFINE_LIMIT = 200_000


def _affine(x):
    """({atom id: (atom, coefficient)}, constant) with x = sum(coefficient * atom) + constant, or None.
    Atoms are the non-arithmetic leaves (variables, quotient variables, if-then-else terms)."""
    hit = _AFFINE.get(x.get_id())
    if hit is not None and hit[0].eq(x):
        return hit[1]
    form = _affine_walk(x)
    if len(_AFFINE) > _AFFINE_LIMIT:
        _AFFINE.clear()
    _AFFINE[x.get_id()] = (x, form)
    return form


def _affine_walk(x):
    coeffs: dict = {}
    const = 0

    def walk(t, k) -> bool:
        nonlocal const
        if z3.is_int_value(t):
            const += k * t.as_long()
            return True
        if z3.is_add(t):
            return all(walk(c, k) for c in t.children())
        if z3.is_sub(t):
            first, *others = t.children()
            return walk(first, k) and all(walk(c, -k) for c in others)
        if z3.is_app_of(t, z3.Z3_OP_UMINUS):
            return walk(t.children()[0], -k)
        if z3.is_mul(t):
            factor, other = 1, []
            for c in t.children():
                if z3.is_int_value(c):
                    factor *= c.as_long()
                else:
                    other.append(c)
            if len(other) > 1:
                return False
            return walk(other[0], k * factor) if other else walk(z3.IntVal(factor), k)
        if not z3.is_int(t):
            return False
        i = t.get_id()
        atom, c = coeffs.get(i, (t, 0))
        coeffs[i] = (atom, c + k)
        return True
    if not walk(x, 1):
        return None
    return {i: v for i, v in coeffs.items() if v[1]}, const
