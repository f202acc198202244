"""IR expressions as the prover evaluates them, and what falls outside its fragment.

The values of skeleton extraction: Python ints and bools (concrete), numpy lane vectors (a
value per lane of the warp), `Sym` (an IR expression in loop variables and symbolic
constants), `Opaque` (a value the skeleton cannot know).  `apply_op` is one operator on
any of the concrete ones; `evaluate`, `substitute` and `free_vars` work on IR expressions.
These helpers are shared by extraction (`skeleton`), the closed forms of loop-carried
cursors (`closed_forms`) and the layout (`program`); they import none of them.
"""
from __future__ import annotations

import operator

import numpy as np

import ir

# operators that mean the same on Python ints, numpy lane vectors and z3 terms
SHARED_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


class OutsideFragment(Exception):
    """The kernel leaves the prover's fragment; `construct` names what, `span` where."""

    def __init__(self, construct: str, span=None, hint: str = ""):
        super().__init__(construct)
        self.construct = construct
        self.span = span
        self.hint = hint


class Sym:
    """A lane-uniform value symbolic in loop variables / symbolic constants (an IR expression)."""

    __slots__ = ("e",)

    def __init__(self, e: ir.Expr):
        self.e = e


class Opaque:
    """A value the skeleton cannot know (memory, results of non-sync ops)."""

    __slots__ = ("why", "span")

    def __init__(self, why: str, span=None):
        self.why, self.span = why, span


def is_lanes(v) -> bool:
    return isinstance(v, np.ndarray)


def to_expr(v, dtype: str = "int32") -> ir.Expr:
    if isinstance(v, Sym):
        return v.e
    if isinstance(v, (bool, np.bool_)):
        return ir.Const(bool(v), "bool")
    return ir.Const(int(v), dtype)


def _floordiv(a, b):
    return np.floor_divide(a, b) if is_lanes(a) or is_lanes(b) else a // b


def apply_op(op: str, a, b):
    if op in SHARED_OPS:
        return SHARED_OPS[op](a, b)
    if op in ("//", "floordiv"):
        return _floordiv(a, b)
    if op in ("%", "floormod"):
        return np.mod(a, b) if is_lanes(a) or is_lanes(b) else a % b
    if op in ("tdiv", "tmod"):
        if is_lanes(a) or is_lanes(b):
            q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))
        else:
            q = (abs(a) // abs(b)) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "tdiv" else a - b * q
    if op in ("and", "&&"):
        return np.logical_and(a, b) if is_lanes(a) or is_lanes(b) else bool(a) and bool(b)
    if op in ("or", "||"):
        return np.logical_or(a, b) if is_lanes(a) or is_lanes(b) else bool(a) or bool(b)
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "<<":
        return a << b
    if op == ">>":
        return a >> b
    if op == "min":
        return np.minimum(a, b) if is_lanes(a) or is_lanes(b) else min(a, b)
    if op == "max":
        return np.maximum(a, b) if is_lanes(a) or is_lanes(b) else max(a, b)
    raise OutsideFragment(f"operator {op}")


def collapse(v):
    """Lane vectors that agree on every lane collapse to a scalar."""
    if is_lanes(v) and v.size and (v == v.flat[0]).all():
        x = v.flat[0]
        return bool(x) if v.dtype == np.bool_ else int(x)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def evaluate(e: ir.Expr, env: dict):
    """The value of `e` with the variables (and constants) named in `env` bound to Python ints; KeyError for an
    unbound name.  Compiled to a Python function on first use (the prover evaluates the same slots and guards
    at thousands of iterations); `walk_evaluate` is the readable form, and the tests hold the two to agree."""
    hit = _COMPILED.get(id(e))
    if hit is None or hit[0] is not e:
        if len(_COMPILED) > _COMPILED_LIMIT:
            _COMPILED.clear()
        hit = _COMPILED[id(e)] = (e, _compile(e))
    return hit[1](env)


def walk_evaluate(e: ir.Expr, env: dict):
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, (ir.Var, ir.ConstRef)):
        if e.name not in env:
            raise KeyError(e.name)
        return env[e.name]
    if isinstance(e, ir.Cast):
        return walk_evaluate(e.value, env)
    if isinstance(e, ir.BinOp):
        return apply_op(e.op, walk_evaluate(e.a, env), walk_evaluate(e.b, env))
    if isinstance(e, ir.UnaryOp):
        a = walk_evaluate(e.a, env)
        return (not a) if e.op in ("not", "!") else -a if e.op == "-" else ~a
    if isinstance(e, ir.Select):
        return walk_evaluate(e.true_value, env) if walk_evaluate(e.cond, env) else walk_evaluate(e.false_value, env)
    raise KeyError(type(e).__name__)


_COMPILED: dict = {}        # id(expr) -> (expr, function): the entry keeps expr alive, so its id is not reused
_COMPILED_LIMIT = 50_000
# operators that mean the same in Python source on ints as in apply_op; the others call apply_op
_INFIX = {"+", "-", "*", "<", "<=", ">", ">=", "==", "!=", "//", "%", "&", "|", "^", "<<", ">>"}
_SPELLED = {"floordiv": "//", "floormod": "%"}


def _compile(e: ir.Expr):
    consts: list = []

    def src(x) -> str:
        if isinstance(x, ir.Const):
            consts.append(x.value)
            return f"_c[{len(consts) - 1}]"
        if isinstance(x, (ir.Var, ir.ConstRef)):
            return f"env[{x.name!r}]"
        if isinstance(x, ir.Cast):
            return src(x.value)
        if isinstance(x, ir.BinOp):
            a, b = src(x.a), src(x.b)
            op = _SPELLED.get(x.op, x.op)
            if op in _INFIX:
                return f"({a} {op} {b})"
            return f"_apply({x.op!r}, {a}, {b})"
        if isinstance(x, ir.UnaryOp):
            a = src(x.a)
            return f"(not {a})" if x.op in ("not", "!") else f"(-{a})" if x.op == "-" else f"(~{a})"
        if isinstance(x, ir.Select):
            return f"({src(x.true_value)} if {src(x.cond)} else {src(x.false_value)})"
        return f"_unknown({type(x).__name__!r})"
    try:
        body = src(e)
        fn = eval(f"lambda env: {body}", {"_c": consts, "_apply": apply_op, "_unknown": _unknown})  # noqa: S307
    except (RecursionError, SyntaxError, MemoryError):
        return lambda env: walk_evaluate(e, env)
    return fn


def _unknown(name: str):
    raise KeyError(name)


def substitute(e: ir.Expr, table: dict) -> ir.Expr:
    """e with the variables named in `table` replaced by its expressions (ints become constants)."""
    if isinstance(e, ir.Var):
        v = table.get(e.name, e)
        return v if isinstance(v, ir.Expr) else ir.Const(int(v), "int32")
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, substitute(e.a, table), substitute(e.b, table), e.dtype, span=e.span)
    if isinstance(e, ir.UnaryOp):
        return ir.UnaryOp(e.op, substitute(e.a, table), e.dtype, span=e.span)
    if isinstance(e, ir.Select):
        return ir.Select(substitute(e.cond, table), substitute(e.true_value, table),
                         substitute(e.false_value, table), e.dtype, e.lazy, span=e.span)
    if isinstance(e, ir.Cast):
        return ir.Cast(e.dtype, substitute(e.value, table), span=e.span)
    return e


def free_vars(e: ir.Expr) -> set[str]:
    if isinstance(e, (ir.Var, ir.ConstRef)):
        return {e.name}
    out: set[str] = set()
    for attr in ("a", "b", "cond", "true_value", "false_value", "value"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr):
            out |= free_vars(sub)
    return out


def conj(a: ir.Expr | None, b: ir.Expr | None) -> ir.Expr | None:
    if a is None:
        return b
    if b is None:
        return a
    return ir.BinOp("and", a, b, "bool")
