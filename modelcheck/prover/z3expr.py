"""IR expressions to z3 integer terms, with floor division lowered to explicit quotients.

z3's own `/` and `%` on compound terms have heavy-tailed solve times; a quotient and a
remainder variable per division by a constant (x = d*q + r, 0 <= r < d) keep every
query linear and fast (engineering-measurements §3).  For small divisors (ring sizes,
parities) the division goes atom by atom: each atom of x's affine form (a variable, a
quotient, an if-then-else) is divided once, a = d*Q + R, and x // d is stated through those
pairs and a small table over the remainders -- so the many counts of one ring slot at one
iteration share one pair instead of each bringing an unrelated quotient.  Terms over the
symbolic sizes alone are divided once for the whole model (`shared`).  Division by a
symbolic divisor falls back to z3's operators (Euclidean, equal to floor division for
positive divisors).  Booleans are z3 Bools; comparisons and `and`/`or`/`not` map directly.
"""
from __future__ import annotations

import itertools

import z3

import ir

from .exprs import SHARED_OPS

_fresh = itertools.count()
ATOM_SPLIT_MAX = 8          # divisors up to this are split atom by atom (`Terms._by_atoms`)


class _Definitions:
    """Quotient variables and their side constraints, shared by the Terms built over one state."""

    __slots__ = ("side", "fresh", "memo", "pulled", "fresh_ids", "bound")

    def __init__(self):
        self.side: list = []               # constraints the terms rely on
        self.fresh: list = []              # the quotient and remainder variables made here, in order
        self.memo: dict = {}               # (dividend id, divisor) -> (dividend, quotient, remainder)
        self.pulled = 0                    # how many of the shared side constraints `side` has taken
        self.fresh_ids: set = set()        # AST ids of `fresh`
        self.bound: dict = {}              # AST id of a remainder variable -> its divisor (0 <= r < divisor)


class Terms:
    """Builds terms over a variable map and collects the side constraints of their divisions."""

    def __init__(self, names: dict, shared: "Terms | None" = None, _defs: _Definitions | None = None):
        self.names = names                 # variable / constant name -> z3 term
        self._defs = _Definitions() if _defs is None else _defs
        # terms over the symbolic sizes alone are divided once for the whole model: every event of a query then
        # shares the quotient of `K % 3` instead of each bringing its own for z3 to prove equal
        self.shared = shared
        # read only when `shared` is set
        self._shared_atoms: set[int] = set() if shared is None else {v.get_id() for v in shared.names.values()}

    @property
    def side(self) -> list:
        """The definitions of the quotient variables the terms use (shared ones included)."""
        return self._defs.side

    @property
    def fresh(self) -> list:
        """The quotient and remainder variables these terms introduced (the shared ones not)."""
        return self._defs.fresh

    def over(self, names: dict) -> "Terms":
        """Terms over other names that share this one's quotient variables and side constraints."""
        return Terms(names, self.shared, self._defs)

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
        defs = self._defs
        key = (x.get_id(), d)
        hit = defs.memo.get(key)
        if hit is not None and hit[0].eq(x):
            return hit[1], hit[2]
        # x = d*y + z with y the part of x's affine form whose coefficients d divides: x // d = y + z // d
        # exactly, so only z (often a constant: a size's residue, 2*j + 1) needs a quotient variable
        form = affine(x)
        if form is not None and self.shared is not None and form[0] and \
                all(i in self._shared_atoms or i in self.shared.fresh_ids() for i in form[0]):
            q, r = self.shared.divmod(x, d)
            # every shared definition made so far, the nested ones (x's rest after its whole multiples) included,
            # so queries built from this side alone stay whole
            defs.side += self.shared.side[defs.pulled:]
            defs.pulled = len(self.shared.side)
            defs.memo[key] = (x, q, r)
            return q, r
        if form is not None and d <= ATOM_SPLIT_MAX and form[0]:
            q, r = self._by_atoms(form, d)
            defs.memo[key] = (x, q, r)
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
                defs.memo[key] = (x, q, r)
                return q, r
        return self._fresh_divmod(x, d, key)

    def _fresh_divmod(self, x, d: int, key):
        defs = self._defs
        n = next(_fresh)
        q, r = z3.Int(f"q{n}"), z3.Int(f"r{n}")
        defs.side += [x == d * q + r, r >= 0, r < d]
        defs.fresh += [q, r]
        defs.bound[r.get_id()] = d
        defs.memo[key] = (x, q, r)
        return q, r

    def _atom_divmod(self, a, d: int):
        """(Q, R) with a = d*Q + R, 0 <= R < d, for an atom: one pair per atom and divisor, so every quotient of
        an affine term in that atom is stated through the same two variables.  A table (if-then-else over
        constants) is divided leaf by leaf."""
        leaves = _ite_leaves(a)
        if leaves is not None:
            return _map_ite(a, lambda v: v // d), _map_ite(a, lambda v: v % d)
        below = self._bound(a)            # a remainder: 0 <= a < below
        if below is not None and below <= d:
            return z3.IntVal(0), a
        if below is not None and below <= 4 * d:
            return _table(a, [v // d for v in range(below)]), _table(a, [v % d for v in range(below)])
        if self.shared is not None and (a.get_id() in self._shared_atoms or a.get_id() in self.shared.fresh_ids()):
            q, r = self.shared.divmod(a, d)
            defs = self._defs
            defs.side += self.shared.side[defs.pulled:]
            defs.pulled = len(self.shared.side)
            return q, r
        key = ("atom", a.get_id(), d)
        hit = self._defs.memo.get(key)
        if hit is not None and hit[0].eq(a):
            return hit[1], hit[2]
        return self._fresh_divmod(a, d, key)

    def _bound(self, a) -> int | None:
        i = a.get_id()
        hit = self._defs.bound.get(i)
        if hit is None and self.shared is not None:
            hit = self.shared._bound(a)
        return hit

    def fresh_ids(self) -> set:
        ids = self._defs.fresh_ids
        if len(ids) != len(self._defs.fresh):
            ids.clear()
            ids.update(v.get_id() for v in self._defs.fresh)
        return ids

    def _by_atoms(self, form, d: int):
        """x // d and x % d of x = sum(c * a) + k: with c = d*c1 + c2 and every atom a = d*Q + R,
        x // d = sum(c1 * a) + sum(c2 * Q) + k // d + (sum(c2 * R) + k % d) // d, the last a small bounded term:
        a table over R for one atom, a quotient variable for several (measured on the persistent GEMM: the
        floor counts of one ring slot at one iteration, each with its own unrelated quotient before, made its
        happens-before queries 10-100x harder than these)."""
        coeffs, k = form
        q = z3.IntVal(k // d)
        rest = []
        for a, c in coeffs.values():
            c1, c2 = divmod(c, d)
            if c1:
                q = q + c1 * a
            if c2:
                qa, ra = self._atom_divmod(a, d)
                q = q + c2 * qa
                rest.append((ra, c2))
        k2 = k % d
        if not rest:
            return q, z3.IntVal(k2)
        if len(rest) == 1:
            ra, c2 = rest[0]
            quot = [(c2 * v + k2) // d for v in range(d)]
            rem = [(c2 * v + k2) % d for v in range(d)]
            return q + _table(ra, quot), _table(ra, rem)
        z = sum((c2 * ra for ra, c2 in rest), z3.IntVal(k2))
        qz, rz = self._fresh_divmod(z, d, ("bounded", z.get_id(), d))
        return q + qz, rz

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


def known(x) -> int | None:
    """x's value when it is an integer literal (a Python int or a z3 numeral), else None."""
    if isinstance(x, int):
        return x
    return x.as_long() if z3.is_int_value(x) else None


def if_(c, a, b):
    """if-then-else, decided at once when the condition is a literal (events place their warp at constant
    positions, so most position tests are)."""
    if isinstance(c, bool):
        return a if c else b
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    return z3.If(c, a, b)


def gt(a, b):
    ka, kb = known(a), known(b)
    return ka > kb if ka is not None and kb is not None else a > b


def eq(a, b):
    ka, kb = known(a), known(b)
    return ka == kb if ka is not None and kb is not None else a == b


def max_(a, b):
    ka, kb = known(a), known(b)
    return z3.IntVal(max(ka, kb)) if ka is not None and kb is not None else z3.If(a >= b, a, b)


def min_(a, b):
    ka, kb = known(a), known(b)
    return z3.IntVal(min(ka, kb)) if ka is not None and kb is not None else z3.If(a <= b, a, b)


def _ite_leaves(t) -> list | None:
    """The integer constants at the leaves of an if-then-else tree, or None when a leaf is not one."""
    if z3.is_int_value(t):
        return [t.as_long()]
    if z3.is_app_of(t, z3.Z3_OP_ITE):
        _, a, b = t.children()
        la = _ite_leaves(a)
        lb = None if la is None else _ite_leaves(b)
        return None if la is None or lb is None else la + lb
    return None


def _map_ite(t, f):
    """The if-then-else tree t with f applied to its (integer constant) leaves."""
    if z3.is_int_value(t):
        return z3.IntVal(f(t.as_long()))
    c, a, b = t.children()
    a2, b2 = _map_ite(a, f), _map_ite(b, f)
    if z3.is_int_value(a2) and z3.is_int_value(b2) and a2.as_long() == b2.as_long():
        return a2
    return z3.If(c, a2, b2)


def _table(ra, values: list):
    """values[ra] for ra in [0, len(values)): a constant, ra itself, or a chain of if-then-else."""
    if all(v == values[0] for v in values):
        return z3.IntVal(values[0])
    if values == list(range(len(values))):
        return ra
    out = z3.IntVal(values[-1])
    for v in range(len(values) - 2, -1, -1):
        out = z3.If(ra == v, values[v], out)
    return out


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


def affine(x):
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
