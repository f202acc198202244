"""Canonical form of a PrimFunc, for comparing IR built from different spellings.

`canonical(func)` substitutes module constants by their values, folds every
operator and cast whose operands are constants (TIR semantics: wraparound, float
rounding, a cast folds only when the value fits) and the identities TVM folds with one
constant operand (x + 0, x * 1, ...) and selects on a constant condition, drops the
constant table, and
renames let/loop variables v0, v1, ... in binding order.  Two texts denote the same
kernel when their canonical forms are equal; this is what "same IR" means in the
conformance tests (the TVM printer folds constants and renames loop variables).
"""
from __future__ import annotations

import math
from dataclasses import fields, replace

from . import dtypes as dt
from . import typing as ty
from .nodes import BinOp, Cast, Const, ConstRef, For, Let, LetExpr, Node, OpCall, PrimFunc, Select, UnaryOp, Var


class _Canon:
    def __init__(self, func: PrimFunc):
        self.values = {c.name: c.value for c in func.constants}
        self.renames: dict[str, str] = {}
        self.counter = 0

    def fresh(self, name: str) -> str:
        new = f"v{self.counter}"
        self.counter += 1
        self.renames[name] = new
        return new

    def node(self, n):
        if isinstance(n, tuple):
            return tuple(self.node(x) for x in n)
        if not isinstance(n, Node):
            return n
        if isinstance(n, ConstRef):
            return ty.const(self.values[n.name], n.dtype) if n.name in self.values else n
        if isinstance(n, Var):
            return Var(self.renames.get(n.name, n.name), n.dtype)
        if isinstance(n, Let):
            value = self.node(n.value)
            return Let(Var(self.fresh(n.var.name), n.var.dtype), value)
        if isinstance(n, LetExpr):
            value = self.node(n.value)
            var = Var(self.fresh(n.var.name), n.var.dtype)
            return LetExpr(var, value, self.node(n.body), n.dtype)
        if isinstance(n, For):
            start, stop, step = self.node(n.start), self.node(n.stop), self.node(n.step)
            var = Var(self.fresh(n.var.name), n.var.dtype)
            return For(var, start, stop, step, n.kind, self.node(n.body))
        changes = {}
        for f in fields(n):
            if f.name == "span" or not f.compare:
                continue
            old = getattr(n, f.name)
            new = self.node(old)
            if new is not old:
                changes[f.name] = new
        out = replace(n, span=None, **changes) if changes or n.span is not None else n
        return fold(out)


def fold(e):
    """Fold one node whose operands are constants."""
    if isinstance(e, BinOp):
        folded = ty.fold_binop(e.op, e.a, e.b, e.dtype)
        if folded is not None:
            return folded
        if e.op in ("<<", ">>") and isinstance(e.a, Const) and isinstance(e.b, Const) and e.b.value >= 0:
            # a shift past the width survives only where Python evaluated it (module constants): its value
            v = int(e.a.value) << int(e.b.value) if e.op == "<<" else int(e.a.value) >> int(e.b.value)
            if dt.fits(v, e.dtype):
                return Const(v, e.dtype)
        if e.op in ("and", "or"):
            return _fold_logical(e)
        same = ty.simplify_binop(e.op, e.a, e.b, e.dtype)   # `x * C` with C = 1 is x, as TVM builds it
        return same if same is not None else e
    if isinstance(e, OpCall) and e.op in _FLOAT_TESTS and len(e.operands) == 1 and isinstance(e.operands[0], Const):
        # the halves of TVM's isinf/isfinite expansion: its C++ abs() and isnan() fold a FloatImm as they build
        return Const(_FLOAT_TESTS[e.op](float(e.operands[0].value)), e.dtype) if e.dtype == "bool" else \
            ty.const(_FLOAT_TESTS[e.op](float(e.operands[0].value)), e.dtype)
    if isinstance(e, Select) and isinstance(e.cond, Const):   # a select on a constant is its branch
        return e.true_value if e.cond.value else e.false_value
    if isinstance(e, Cast) and isinstance(e.value, Const):
        return ty.cast(e.dtype, e.value)
    if isinstance(e, UnaryOp) and isinstance(e.a, Const):
        return ty.unary(e.op, e.a)
    return e


_FLOAT_TESTS = {"tir.fabs": abs, "tir.isnan": math.isnan}


def _fold_logical(e: BinOp):
    """`a && b` / `a || b` with one constant operand, as TVM's TryConstFold<And/Or> decides it."""
    a, b = e.a, e.b
    decides = e.op == "or"              # the operand value that decides the whole expression
    for const, other in ((a, b), (b, a)):
        if isinstance(const, Const):
            return const if bool(const.value) == decides else other
    return e


def fold_expr(e, values: dict):
    """`e` with module constants substituted (`values`: name -> value) and folded."""
    c = _Canon.__new__(_Canon)
    c.values, c.renames, c.counter = values, {}, 0
    return c.node(e)


def canonical(func: PrimFunc) -> PrimFunc:
    """The one entry point: `func` with constants substituted, folded, and variables alpha-renamed."""
    c = _Canon(func)
    params = c.node(func.params)
    launch = c.node(func.launch)
    body = c.node(func.body)
    return PrimFunc(func.name, params, (), launch, body)


def same_ir(a: PrimFunc, b: PrimFunc) -> bool:
    return canonical(a) == canonical(b)

