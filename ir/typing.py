"""Typed expression constructors with TIR's implicit conversions and constant folding.

Assumes operands are IR expressions with dtypes.  Guarantees the same shape the
TVM front end builds for the same source: literals adapt to the other operand's
type in bitwise operators and selects (arithmetic and comparisons promote them like
any operand), mixed types meet at `dtypes.promote` through explicit `Cast`s, a cast of a
constant folds when the value fits (a float one by truncation), an operator whose
operands are all constants folds (with fixed-width wraparound and float32 rounding),
and so do the identities TVM folds with one constant operand (x + 0, x * 1, x // 1 ...).
"""
from __future__ import annotations

import math
import struct

from . import dtypes as dt
from .errors import Span
from .nodes import BinOp, Cast, Const, Expr, Select, UnaryOp

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
LOGICAL = ("and", "or")
INT_ONLY = ("//", "%", "tdiv", "tmod", "&", "|", "^", "<<", ">>")
BITWISE = ("&", "|", "^")

_STRUCT = {"float32": "f", "float16": "e"}


# The one NaN object of the IR: `Const(NAN, ...) == Const(NAN, ...)` holds because dataclass equality
# compares field tuples, and tuples compare identical elements as equal (nan != nan otherwise).
NAN = float("nan")


def round_float(value: float, dtype: str) -> float:
    """`value` rounded to the precision of float `dtype` (round to nearest even, overflow to inf).
    Every NaN comes back as the one object `NAN`, so IR constants holding NaN compare equal."""
    value = float(value)
    if math.isnan(value):
        return NAN
    if dtype == "float64" or math.isinf(value):
        return value
    code = _STRUCT.get(dtype)
    if code is not None:
        try:
            return struct.unpack(code, struct.pack(code, value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    # bfloat16 / fp8: rare in constants, so numpy and ml_dtypes load only when needed
    import ml_dtypes
    import numpy as np
    np_type = {"bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
               "float8_e5m2": ml_dtypes.float8_e5m2, "float8_e4m3": ml_dtypes.float8_e4m3fn,
               "float8_e8m0fnu": getattr(ml_dtypes, "float8_e8m0fnu", ml_dtypes.float8_e5m2)}.get(dtype)
    if np_type is None:
        return value
    with np.errstate(over="ignore", invalid="ignore"):
        out = float(np.asarray(value, dtype=np.float64).astype(np_type))
    return NAN if math.isnan(out) else out   # e4m3fn has no inf: it overflows to NaN


def const(value, dtype: str, span: Span | None = None) -> Const:
    """A constant of `dtype` (ints wrap, floats round, bools are 0/1)."""
    if dt.is_float(dtype):
        return Const(round_float(float(value), dtype), dtype, span=span)
    if dtype == "bool":
        return Const(bool(value), "bool", span=span)
    return Const(dt.wrap(int(value), dtype), dtype, span=span)


def cast(dtype: str, value: Expr, span: Span | None = None) -> Expr:
    """TIR's `cast()`: no-op for the same type; folds a constant whose value fits."""
    if value.dtype == dtype:
        return value
    if isinstance(value, Const):
        v = value.value
        if dt.is_float(dtype):
            return const(float(v), dtype, span or value.span)
        if dtype == "bool":
            if isinstance(v, float) and math.isfinite(v):
                v = int(v)   # TVM makes the bool from the truncated integer: T.bool(0.5) is False
            return Const(bool(v), "bool", span=span or value.span)
        if dt.is_integral(dtype) and not isinstance(v, float) and dt.fits(int(v), dtype):
            return Const(int(v), dtype, span=span or value.span)
        if dt.is_integral(dtype) and isinstance(v, float) and math.isfinite(v) and dt.fits(int(v), dtype):
            # a float constant converts by truncation, as C and TVM's cast() do: T.int32(2.7) is 2
            return Const(int(v), dtype, span=span or value.span)
    return Cast(dtype, value, span=span)


def match(a: Expr, b: Expr, a_literal: bool = False, b_literal: bool = False) -> tuple[Expr, Expr, str]:
    """Bring two operands to a common type, as TIR's BinaryOpMatchTypes does.

    A Python literal (`a_literal`/`b_literal`) takes the other side's type when it can
    represent it; typed constants such as `T.int64(5)` promote like any expression."""
    if a.dtype == b.dtype:
        return a, b, a.dtype
    if b_literal and not a_literal and _representable(b, a.dtype):
        return a, cast(a.dtype, b), a.dtype
    if a_literal and not b_literal and _representable(a, b.dtype):
        return cast(b.dtype, a), b, b.dtype
    target = dt.promote(a.dtype, b.dtype)
    return cast(target, a), cast(target, b), target


def _representable(c: Expr, dtype: str) -> bool:
    if dtype in ("handle", "void", "string"):
        return False
    if not isinstance(c, Const):
        # a literal that is not a Const is arithmetic over module constants (`N * 2`): a Python int
        # to TVM, converted like any literal (the Cast folds once the constants are substituted)
        return dt.is_integral(dtype) and dtype != "bool" and dt.is_integral(c.dtype)
    if dt.is_float(dtype):
        return True
    if isinstance(c.value, float) or c.dtype == "bool":
        return False
    return dt.is_integral(dtype) and dtype != "bool" and dt.fits(int(c.value), dtype)


def binop(op: str, a: Expr, b: Expr, span: Span | None = None, a_literal: bool = False,
          b_literal: bool = False) -> Expr:
    """Typed binary operation (result bool for comparisons and logic)."""
    if op in LOGICAL:
        a, b = to_bool(a), to_bool(b)
        result = "bool"
    elif op in ("<<", ">>"):
        # shifts keep the left operand's type (TVM casts the shift amount to it)
        if a.dtype != b.dtype:
            a, b, _ = match(a, b, a_literal, b_literal)
        result = a.dtype
    else:
        if op not in BITWISE:
            # TVM gives a Python literal its own type (int32/int64/float32) for arithmetic and
            # comparisons and then promotes (`i8 + 1` -> `T.Cast("int32", i8) + 1`, `u + 1` -> `u + T.uint32(1)`
            # by folding the cast); only bitwise operators (and selects) make the literal take the other side's type
            a_literal = b_literal = False
        a, b, common = match(a, b, a_literal, b_literal)
        result = "bool" if op in COMPARISONS else common
    folded = fold_binop(op, a, b, result)
    if folded is not None:
        return Const(folded.value, folded.dtype, span=span)
    same = simplify_binop(op, a, b, result)
    if same is not None:
        return same
    return BinOp(op, a, b, result, span=span)


def to_bool(e: Expr) -> Expr:
    return e if e.dtype == "bool" else cast("bool", e)


def neg(a: Expr, span: Span | None = None) -> Expr:
    """Unary minus as TIR builds it: a negative literal, else `a * -1`."""
    if isinstance(a, Const):
        return const(-a.value, a.dtype, span)
    minus_one = const(-1.0 if dt.is_float(a.dtype) else -1, a.dtype)
    return BinOp("*", a, minus_one, a.dtype, span=span)


def unary(op: str, a: Expr, span: Span | None = None) -> Expr:
    if op == "not":
        a = to_bool(a)
        if isinstance(a, Const):
            return Const(not a.value, "bool", span=span)
        return UnaryOp("not", a, "bool", span=span)
    if op == "~":
        if isinstance(a, Const) and dt.is_integral(a.dtype):
            return const(~int(a.value), a.dtype, span)
        return UnaryOp("~", a, a.dtype, span=span)
    raise ValueError(op)


def select(cond: Expr, t: Expr, f: Expr, lazy: bool, span: Span | None = None, t_literal: bool = False,
           f_literal: bool = False) -> Expr:
    t, f, common = match(t, f, t_literal, f_literal)
    return Select(cond, t, f, common, lazy, span=span)


# --------------------------------------------------------------------------- folding

def _int_div_floor(x: int, y: int) -> int:
    return x // y


def _int_div_trunc(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def eval_binop(op: str, x, y, operand_dtype: str, result: str):
    """Evaluate one operator on Python scalars with TIR semantics (None if undefined)."""
    if op in COMPARISONS:
        return {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
    if op == "and":
        return bool(x) and bool(y)
    if op == "or":
        return bool(x) or bool(y)
    if dt.is_float(result):
        x, y = float(x), float(y)
        if op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        elif op == "/":
            if y == 0.0:
                return None
            r = x / y
        elif op == "min":
            r = min(x, y)
        elif op == "max":
            r = max(x, y)
        elif op in ("//",):
            if y == 0.0 or not math.isfinite(x / y):  # floor of inf/nan has no value: leave it unfolded
                return None
            r = math.floor(x / y)
        elif op == "%":
            if y == 0.0 or not math.isfinite(x / y):
                return None
            r = x - math.floor(x / y) * y
        else:
            return None
        return round_float(r, result)
    x, y = int(x), int(y)
    if op == "+":
        r = x + y
    elif op == "-":
        r = x - y
    elif op == "*":
        r = x * y
    elif op in ("//", "%", "tdiv", "tmod"):
        if y == 0:
            return None
        if op == "//":
            r = _int_div_floor(x, y)
        elif op == "%":
            r = x - _int_div_floor(x, y) * y
        elif op == "tdiv":
            r = _int_div_trunc(x, y)
        else:
            r = x - _int_div_trunc(x, y) * y
    elif op == "min":
        r = min(x, y)
    elif op == "max":
        r = max(x, y)
    elif op == "&":
        r = x & y
    elif op == "|":
        r = x | y
    elif op == "^":
        r = x ^ y
    elif op == "<<":
        if y < 0 or y >= dt.bits(result):
            return None
        r = x << y
    elif op == ">>":
        if y < 0 or y >= dt.bits(result):
            return None
        r = x >> y
    else:
        return None
    return dt.wrap(r, result)


def _is_number(e: Expr, value: int) -> bool:
    return isinstance(e, Const) and e.dtype != "bool" and e.value == value


def simplify_binop(op: str, a: Expr, b: Expr, result: str) -> Expr | None:
    """The identities TVM folds as it builds an operator with one constant operand
    (`arith::TryConstFold`): x + 0, x - 0, x * 1, x << 0 are x; x * 0 is 0; x // 1 and
    truncdiv(x, 1) are x; x % 1 is 0; 0 // x and 0 % x are 0 (ints and floats alike).
    `a` and `b` already have the result's operand type.  None if no identity applies."""
    if op == "+":
        return b if _is_number(a, 0) else a if _is_number(b, 0) else None
    if op == "-":
        return a if _is_number(b, 0) else None
    if op == "*":
        if _is_number(a, 1) or _is_number(b, 0):
            return b
        if _is_number(b, 1) or _is_number(a, 0):
            return a
        return None
    if op in ("/", "//", "tdiv"):
        return a if _is_number(a, 0) or _is_number(b, 1) else None
    if op in ("%", "tmod"):
        if _is_number(a, 0):
            return a
        return const(0, result) if _is_number(b, 1) else None
    if op in ("<<", ">>"):
        return a if _is_number(b, 0) else None
    return None


def fold_binop(op: str, a: Expr, b: Expr, result: str) -> Const | None:
    if not (isinstance(a, Const) and isinstance(b, Const)):
        return None
    if result in ("handle", "void", "string"):
        return None
    value = eval_binop(op, a.value, b.value, a.dtype, result)
    if value is None:
        return None
    if result == "bool":
        return Const(bool(value), "bool")
    return Const(value, result)
