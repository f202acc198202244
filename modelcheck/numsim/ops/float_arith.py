"""Rounding arithmetic on numpy arrays: add/sub/mul/fma of float elements rounded once to their format
under a PTX rounding mode, `.ftz` flushes, canonical NaN.

Results are computed in float64 with the exact residual where one exists (TwoSum for sums; products of
f32/f16/bf16 values are exact in float64), then rounded to the target once: round-to-odd before the final
.rn cast (no double rounding), or stepped one ulp for .rz/.rm/.rp.  Exact fast paths (one float64 sum and a
cast for fma.rn.f32; numpy's own IEEE float32 add/sub/mul; half products in float32) are taken only where
they give the same bits; tests/modelcheck/numsim/ops/test_float_op.py compares them with the readable form.
Register reading and writing stay in ptx_math (the ops that use these).
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from . import ptx_convert as CV

F32_TINY = np.float32(2.0 ** -126)
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

def ftz(x: np.ndarray) -> np.ndarray:
    """Flush float32 subnormals to a zero of the same sign (`.ftz`): np.where(|x| < 2^-126, ±0, x)."""
    if x.dtype != np.float32:
        return x
    mag = np.abs(x)
    small = mag < F32_TINY
    if not V.nnz(small):    # the common case: no zero or subnormal (one test fewer than `sub`'s)
        return x
    sub = small & (mag != 0)
    if not V.nnz(sub):      # nothing to flush (zeros stay as they are)
        return x
    return np.where(sub, np.copysign(np.float32(0), x), x).astype(np.float32)


def canonical_nan(x: np.ndarray) -> np.ndarray:
    """NaN results as PTX gives them: the canonical NaN of the format."""
    nan = np.isnan(x.astype(np.float32)) if x.dtype != np.float32 and x.dtype != np.float64 else np.isnan(x)
    if not V.nnz(nan):
        return x
    canon = {4: 0x7FFFFFFF, 2: 0x7FFF, 8: 0x7FFFFFFFFFFFFFFF}[x.itemsize]
    u = _UINT[x.itemsize * 8]
    return np.where(nan, u(canon), x.view(u)).astype(u).view(x.dtype)


def two_sum(a: np.ndarray, b: np.ndarray):
    """(s, e) with s = fl(a + b) and s + e == a + b exactly (Knuth's TwoSum; e is NaN at infinities)."""
    s = a + b
    bp = s - a
    e = (a - (s - bp)) + (b - bp)
    return s, e


def arith_result(x: np.ndarray, err, elem: str, mode: str, flags) -> np.ndarray:
    """The float64 value `x` (exact value x + err; err None: x is the correctly rounded float64 of a basic
    operation) rounded to `elem` under `mode`, with .sat/.relu/.ftz/canonical NaN.  The caller ignores
    floating-point errors (`np.errstate(all="ignore")`)."""
    r = CV.round_quiet(x, err, elem, mode)
    if flags:
        if "relu" in flags:
            r = np.where(r < 0, r.dtype.type(0), r)
        if "sat" in flags:
            r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
        if "ftz" in flags:
            r = ftz(r)
    return canonical_nan(r)


# formats whose correctly rounded float64 sum, rounded again to nearest, is the correctly rounded sum
# (53 >= 2p + 1 bits: the double rounding is innocuous; Figueroa, "When is double rounding innocuous?")
_SUM_ONCE = frozenset({"float32", "float16", "bfloat16", "float64"})
_ONE_STEP = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_FTZ = frozenset({"ftz"})


def float_op(head: str, vals: list, elem: str, mode: str, flags=frozenset()) -> np.ndarray:
    """add/sub/mul/fma of element arrays, rounded once to `elem` under `mode`.  Readable form: broadcast the
    operands, widen to float64, (x, err) the exact result (TwoSum), `round_float(x, err)`; below, numpy
    broadcasts implicitly, and err is skipped where x alone rounds correctly (products are exact; sums
    under .rn per `_SUM_ONCE`).  tests/modelcheck/numsim/ops/test_float_op.py checks the two agree."""
    with np.errstate(all="ignore"):
        return quiet_float_op(head, vals, elem, mode, flags)


def quiet_float_op(head: str, vals: list, elem: str, mode: str, flags=frozenset()) -> np.ndarray:
    """`float_op` for callers that ignore floating-point errors themselves (NumSim's op closures: numsim.engine
    runs them under `np.errstate(all="ignore")`, whose entry costs more than a 32-lane op)."""
    if mode == "rn" and elem == "float32" and flags <= _FTZ:
        if head == "fma":
            if _all_f32(vals):
                a, b, c = vals
                if flags:
                    a, b, c = ftz(a), ftz(b), ftz(c)
                r = fma_rn_f32(a, b, c)     # (`_fma_f32`)
                if r is not None:
                    return r
        elif head in _ONE_STEP and _all_f32(vals):
            a, b = vals
            # float32 add/sub/mul is correctly rounded by numpy's IEEE arithmetic itself: the same value as the
            # float64 result rounded once (53 >= 2*24 + 2 bits, subnormal results included), without the two
            # widenings and the cast back; .ftz flushes the operands and the result as below
            if flags:
                a, b = ftz(a), ftz(b)
            r = _ONE_STEP[head](a, b)
            return canonical_nan(ftz(r) if flags else r)
    if head == "mul" and mode == "rn" and not flags and elem in _HALF_NP:
        r = _half_product(vals[0], vals[1], elem)
        if r is not None:
            return r
    if "ftz" in flags:
        vals = [ftz(v) for v in vals]
    xs = [np.asarray(v).astype(np.float64) for v in vals]
    if head == "mul":
        x, err = xs[0] * xs[1], None                     # exact: <= 48 significant bits
    elif head == "fma":
        x, err = two_sum(xs[0] * xs[1], xs[2])
    elif mode == "rn" and elem in _SUM_ONCE:
        x, err = (xs[0] + xs[1] if head == "add" else xs[0] - xs[1]), None
    elif head == "add":
        x, err = two_sum(xs[0], xs[1])
    else:
        x, err = two_sum(xs[0], -xs[1])
    r = arith_result(x, err, elem, mode, flags)
    if mode == "rm" and head != "mul":
        # an exact zero sum of operands that are not both +0 is -0 when rounding down
        terms = (xs[0] * xs[1], xs[2]) if head == "fma" else (xs[0], xs[1] if head == "add" else -xs[1])
        both_pos0 = (terms[0] == 0) & (terms[1] == 0) & ~np.signbit(terms[0]) & ~np.signbit(terms[1])
        zero = (x == 0) & (err == 0) & ~both_pos0   # the exact sum, not its rounding, is zero
        r = np.where(zero, r.dtype.type(-0.0), r).astype(r.dtype)
    return r


def _all_f32(vals) -> bool:
    return all(type(v) is np.ndarray and v.dtype == np.float32 for v in vals)


_MID_BITS = np.uint64((1 << 29) - 1)     # a float64's significand bits below float32's 24
_MID = np.uint64(1 << 28)                # ... on a float32 midpoint: exactly the half ulp


def _fma_f32(vals: list, flags) -> np.ndarray | None:
    """fma.rn[.ftz].f32 of float32 arrays as one float64 product (exact: <= 48 bits) plus one float64 sum, cast
    once to float32; None where that may differ from the correctly rounded result.  Every float32 midpoint is a
    float64, and rounding is monotonic, so the sum rounded to 53 bits lies on the same side of each midpoint as
    the exact sum: the cast rounds the same way unless the float64 sum is a midpoint itself (often, and exactly:
    two float32 terms a binade apart sum to 25 bits), where float_op's residual (TwoSum) and round to odd are
    taken on those lanes; or unless it lies below float32's normal range (the grid is coarser there, and .ftz
    flushes after rounding): float_op's route for the whole op.  A zero float64 sum is an exact zero."""
    if not _all_f32(vals):
        return None
    a, b, c = vals
    if flags:
        a, b, c = ftz(a), ftz(b), ftz(c)
    with np.errstate(all="ignore"):
        return fma_rn_f32(a, b, c)


_TINY = 2.0 ** -126     # F32_TINY as a Python float: compared with a float64 array without a scalar cast


def fma_rn_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """`_fma_f32` of float32 arrays (operands already flushed under .ftz), for callers that know their types and
    ignore floating-point errors (NumSim's op closures: numsim.engine runs them under `np.errstate(all="ignore")`)."""
    x = np.multiply(a, b, dtype=np.float64)     # the exact product (<= 48 bits), no widened operand copies
    if x.shape == c.shape:
        x += c              # (in place: one array fewer)
    else:
        x = x + c
    mag = np.abs(x)
    # one test for the usual case, every sum normal or infinite: no tiny sum, and no NaN (it fails >=) to canonicalize
    special = V.nnz(mag >= _TINY) != mag.size
    if special and V.nnz((mag < _TINY) & (mag != 0)):
        return None
    mid = (x.view(np.uint64) & _MID_BITS) == _MID
    if V.nnz(mid):
        p = np.multiply(a, b, dtype=np.float64)     # (x holds the sum)
        pm, cm, xm = (np.broadcast_to(v, x.shape)[mid] for v in (p, c, x))
        bp = xm - pm
        x[mid] = CV._odd64(xm, (pm - (xm - bp)) + (cm - bp))
    r = x.astype(np.float32)
    return canonical_nan(r) if special else r


_HALF_NP = V.LazyTypes({"float16": np.float16}, {"bfloat16": "bfloat16"})


def _half_product(a, b, elem: str):
    """mul.rn of f16 / bf16 element arrays in float32, or None where that is not the correctly rounded result.
    A product of two 11-bit (f16) or 8-bit (bf16) significands has at most 22 bits, so the float32 product is
    exact unless it leaves float32's normal range: above it the exact product is >= 2^128, which rounds to
    infinity in bf16 too; below 2^-126 (bf16 only: f16 products are >= 2^-48) it may be inexact and the cast
    would round twice, so those, and NaN results (canonical NaN), take float_op's float64 route."""
    np_t = _HALF_NP[elem]
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != np_t or b.dtype != np_t:
        return None
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        p = a32 * b32
    # (np.count_nonzero: a numpy reduction such as .any() / .min() costs several elementwise calls)
    if V.nnz(np.abs(p) >= F32_TINY) != p.size:
        # some product is tiny, zero or NaN: bf16's tiny ones are fine only as exact zeros of a zero operand
        if elem == "bfloat16" and V.nnz((np.abs(p) < F32_TINY) & (a32 != 0) & (b32 != 0)):
            return None
        if V.nnz(np.isnan(p)):
            return None
    with np.errstate(over="ignore"):     # a product past the half format's range rounds to infinity, as under .rn
        return p.astype(np_t)
