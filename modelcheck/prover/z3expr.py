"""IR expressions to z3 integer terms, with floor division lowered to explicit quotients.

z3's own `/` and `%` on compound terms have heavy-tailed solve times; a quotient and a
remainder variable per division by a constant (x = d*q + r, 0 <= r < d) keep every
query linear and fast (engineering-measurements §3).  Division by a symbolic divisor
falls back to z3's operators (Euclidean, equal to floor division for positive divisors).
Booleans are z3 Bools; comparisons and `and`/`or`/`not` map directly.
"""
from __future__ import annotations

import itertools
import operator

import z3

import ir

_fresh = itertools.count()

# operators that mean the same on Python ints, numpy lane vectors and z3 terms
SHARED_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


class Terms:
    """Builds terms over a variable map and collects the side constraints of their divisions."""

    def __init__(self, names: dict):
        self.names = names                 # variable / constant name -> z3 term
        self.side: list = []               # constraints the terms rely on
        self._memo: dict = {}

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
