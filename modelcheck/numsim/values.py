"""Values in NumSim: warp-uniform scalars and length-32 lane vectors, with TIR arithmetic.

A value is uniform (a Python int or bool, or a numpy float scalar) when every lane
has it, and a numpy array of 32 elements when lanes differ.  Integer scalars are
Python ints kept in their dtype's range by `wrap`; arrays carry their numpy dtype,
whose arithmetic already wraps.  Division by zero is reported, never a Python
exception.
"""
from __future__ import annotations

import math

import numpy as np

from ir import dtypes as dt

try:
    # the C function np.count_nonzero calls for a whole-array count: the public wrapper's dispatch costs more than
    # the count on a 32- or 64-element array, and the hot mask tests of the ops run it once or twice per op
    from numpy._core.multiarray import count_nonzero as nnz
except ImportError:             # pragma: no cover -- another numpy layout: the public function
    nnz = np.count_nonzero


def ml_dtype(name: str):
    """An ml_dtypes scalar type (bfloat16, fp8) by name.  ml_dtypes loads on first use: importing it is most of
    `import modelcheck`'s time, and most runs never touch a bfloat16 or fp8 value."""
    import ml_dtypes
    return getattr(ml_dtypes, name)


class LazyTypes(dict):
    """A name -> numpy scalar type table whose ml_dtypes entries (`lazy`: name -> ml_dtypes attribute) are looked
    up on first use; otherwise a plain dict (lookups of loaded names take dict's own path)."""

    def __init__(self, eager: dict, lazy: dict):
        super().__init__(eager)
        self._lazy = dict(lazy)

    def __missing__(self, key):
        attr = self._lazy.get(key)
        if attr is None:
            raise KeyError(key)
        value = self[key] = ml_dtype(attr)
        return value

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or key in self._lazy


NP_DTYPE = LazyTypes({
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "bool": np.bool_, "handle": np.uint64,
    # b128 registers (ld.b128, clusterlaunchcontrol responses): 16 opaque bytes per lane, no arithmetic
    "uint128": np.dtype("V16"), "int128": np.dtype("V16"),
    # vector dtypes (uint32x4 ...): a lane's elements as opaque bytes, moved whole (ir.dtypes.VECTOR_TYPES)
    **{v: np.dtype(f"V{dt.nbytes(v)}") for v in dt.VECTOR_TYPES},
}, {"bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "float8_e4m3": "float8_e4m3fn"})

WARP = 32
LANES = np.arange(WARP, dtype=np.int32)
FULL = np.ones(WARP, dtype=np.bool_)
FULL.setflags(write=False)
LANES.setflags(write=False)


class DivisionByZero(ArithmeticError):
    pass


def np_dtype(dtype: str):
    return NP_DTYPE[dtype]


def is_vec(v) -> bool:
    return type(v) is np.ndarray


def scalar_of(dtype: str, value):
    """A uniform value of `dtype` from a Python number."""
    if dtype == "bool":
        return bool(value)
    if dt.is_float(dtype):
        return NP_DTYPE[dtype](value)
    return dt.wrap(int(value), dtype)


def wrap_int(value: int, dtype: str) -> int:
    bits = dt.bits(dtype)
    if dtype.startswith("u"):
        return value & ((1 << bits) - 1)
    half = 1 << (bits - 1)
    if -half <= value < half:
        return value
    return ((value + half) & ((1 << bits) - 1)) - half


def as_vec(v, dtype: str, n: int = WARP) -> np.ndarray:
    """The lane vector of `v` (broadcasting a uniform value, a 0-d array included) of `n` lanes (a warp's 32,
    or a CTA cohort's: numsim.cohort)."""
    if type(v) is np.ndarray and v.ndim:
        return v if v.dtype == NP_DTYPE[dtype] else v.astype(NP_DTYPE[dtype])
    return np.full(n, v, dtype=NP_DTYPE[dtype])


# array casts that cannot raise a floating-point flag: exact widenings, and float32 -> bfloat16 (ml_dtypes rounds
# in software, same exponent range: inf and NaN pass through)
_QUIET_CASTS = frozenset({("bfloat16", "float32"), ("float16", "float32"), ("float32", "bfloat16"),
                          ("bfloat16", "float64"), ("float16", "float64"), ("float32", "float64")})


def cast(value, src: str, dst: str):
    """TIR Cast: ints wrap, float -> int truncates toward zero, NaN/inf -> int is 0."""
    if src == dst:
        return value
    if type(value) is np.ndarray:
        if dst == "bool":
            return value != 0
        if dt.is_integral(dst) and dt.is_float(src):
            with np.errstate(invalid="ignore", over="ignore"):
                v = np.trunc(value.astype(np.float64))
                v = np.where(np.isfinite(v), v, 0)
                # wrap like a C conversion of an in-range value; out-of-range saturates nowhere, so wrap
                return (v.astype(np.int64) if dst != "uint64" else v.astype(np.uint64)).astype(NP_DTYPE[dst])
        if (src, dst) in _QUIET_CASTS or (dt.is_integral(src) and dt.is_integral(dst)):
            return value.astype(NP_DTYPE[dst])      # (an errstate costs more than a 32-lane cast)
        with np.errstate(over="ignore", invalid="ignore"):
            return value.astype(NP_DTYPE[dst])
    if dst == "bool":
        return bool(value)
    if dt.is_float(dst):
        return NP_DTYPE[dst](float(value) if not isinstance(value, (bool,)) else int(value))
    if dt.is_float(src):
        f = float(value)
        if math.isnan(f) or math.isinf(f):
            return 0
        return wrap_int(int(f), dst)
    return wrap_int(int(value), dst)


def _trunc_div(a, b):
    if type(a) is np.ndarray or type(b) is np.ndarray:
        # the floor quotient moved toward zero where the signs differ and the division is inexact
        # (np.abs of the most negative value overflows; INT_MIN // -1 wraps like the hardware)
        with np.errstate(over="ignore"):
            q = a // b
            return q + (((a % b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _has_zero(b) -> bool:
    if type(b) is np.ndarray:
        return bool((b == 0).any())
    return b == 0


def binop(op: str, dtype: str, result: str):
    """A function (a, b) -> value for one IR binary operator on operands of `dtype`."""
    is_int = dt.is_integral(dtype) and dtype != "bool"
    wrap = is_int and dtype in dt.INT_TYPES + dt.UINT_TYPES

    if op in ("==", "!=", "<", "<=", ">", ">="):
        import operator
        f = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
             ">=": operator.ge}[op]
        return f
    if op == "and":
        return lambda a, b: np.logical_and(a, b) if type(a) is np.ndarray or type(b) is np.ndarray else bool(a and b)
    if op == "or":
        return lambda a, b: np.logical_or(a, b) if type(a) is np.ndarray or type(b) is np.ndarray else bool(a or b)

    def wrapped(f):
        if not wrap:
            return f

        def g(a, b, _f=f, _dtype=dtype):
            r = _f(a, b)
            if type(r) is np.ndarray:
                return r
            return wrap_int(r, _dtype)
        return g

    if op == "+":
        return wrapped(lambda a, b: a + b)
    if op == "-":
        return wrapped(lambda a, b: a - b)
    if op == "*":
        return wrapped(lambda a, b: a * b)
    if op == "/":
        def div(a, b):
            with np.errstate(divide="ignore", invalid="ignore"):
                if type(a) is not np.ndarray and type(b) is not np.ndarray and float(b) == 0.0:
                    return NP_DTYPE[dtype](math.copysign(math.inf, float(a)) if float(a) != 0 else math.nan)
                return a / b
        return div
    if op in ("//", "%", "tdiv", "tmod"):
        if not is_int:
            def fdiv(a, b, _op=op):
                with np.errstate(divide="ignore", invalid="ignore"):
                    if _op in ("//", "tdiv"):
                        q = np.floor(a / b) if _op == "//" else np.trunc(a / b)
                        return q.astype(NP_DTYPE[dtype]) if type(q) is np.ndarray else NP_DTYPE[dtype](q)
                    r = np.mod(a, b) if _op == "%" else np.fmod(a, b)
                    return r
            return fdiv

        def idiv(a, b, _op=op):
            if _has_zero(b):
                raise DivisionByZero(f"integer {'division' if _op in ('//', 'tdiv') else 'modulo'} by zero")
            if type(a) is np.ndarray or type(b) is np.ndarray:
                with np.errstate(over="ignore"):     # INT_MIN // -1 wraps, as on the hardware
                    if _op == "//":
                        return a // b
                    if _op == "%":
                        return a % b
            elif _op == "//":
                return a // b
            elif _op == "%":
                return a % b
            q = _trunc_div(a, b)
            return q if _op == "tdiv" else a - q * b
        return wrapped(idiv)
    if op == "min":
        return lambda a, b: np.minimum(a, b) if type(a) is np.ndarray or type(b) is np.ndarray else min(a, b)
    if op == "max":
        return lambda a, b: np.maximum(a, b) if type(a) is np.ndarray or type(b) is np.ndarray else max(a, b)
    if op in ("&", "|", "^"):
        import operator
        f = {"&": operator.and_, "|": operator.or_, "^": operator.xor}[op]
        return f
    if op in ("<<", ">>"):
        bits = dt.bits(dtype)

        def shift(a, b, _left=(op == "<<"), _bits=bits):
            if type(b) is np.ndarray:
                bad = (b < 0) | (b >= _bits)
                b = np.where(bad, 0, b)
                r = (a << b) if _left else (a >> b)
                zero = np.zeros_like(r) if _left or not (dt.is_int(dtype)) else np.where(a < 0, -1, 0).astype(r.dtype)
                return np.where(bad, zero, r)
            if b < 0 or b >= _bits:
                # PTX shl/shr clamp the shift amount: everything shifted out
                if _left or dt.is_uint(dtype):
                    return (a * 0) if type(a) is np.ndarray else 0
                return np.where(a < 0, -1, 0).astype(a.dtype) if type(a) is np.ndarray else (-1 if a < 0 else 0)
            return (a << b) if _left else (a >> b)
        return wrapped(shift)
    raise ValueError(f"unknown operator {op}")


def unary(op: str, dtype: str):
    if op == "not":
        return lambda a: np.logical_not(a) if type(a) is np.ndarray else (not a)
    if op == "~":
        if dtype in dt.UINT_TYPES:
            mask = (1 << dt.bits(dtype)) - 1
            return lambda a: ~a if type(a) is np.ndarray else (~a) & mask
        return lambda a: ~a
    raise ValueError(op)


def truthy(v):
    """A condition as a Python bool (uniform) or a bool lane vector."""
    if type(v) is np.ndarray:
        return v if v.dtype == np.bool_ else v != 0
    return bool(v)


_BITS = (np.uint64(1) << np.arange(32, dtype=np.uint64))


def lane_bits(mask) -> int:
    """A lane mask (None: all 32 lanes) as an int with bit k set for lane k."""
    if mask is None:
        return 0xFFFFFFFF
    return int(_BITS[mask].sum())
