"""The CUDA float helpers TVM's kernels call (`T.cuda.make_float2`, `float2_x`/`float2_y`, `float_as_uint` /
`uint_as_float`, `__fdividef`, `__float22bfloat162_rn`), per lane on numpy arrays and by bit pattern as the PTX
register arithmetic of ops/ptx_math is: a float2 is a uint64 register, element 0 (x) in the low half."""
from __future__ import annotations

import numpy as np

from ir import dtypes as dt

from .. import values as V
from . import ptx_convert as CV
from .float_arith import canonical_nan
from .ptx_math import _value, to_bits


def _make_float2(ctx, call, info):
    x, y = (ctx.expr(o) for o in call.operands)
    dx, dy = (V.NP_DTYPE[o.dtype] for o in call.operands)

    fx, fy = dx is np.float32, dy is np.float32

    def run(w):
        a, b = x(w), y(w)
        # (a float32 lane vector is its own float32 elements: no copy)
        if not (fx and type(a) is np.ndarray and a.dtype == np.float32 and a.ndim == 1):
            a = np.asarray(a, dx).reshape(-1).astype(np.float32)
        if not (fy and type(b) is np.ndarray and b.dtype == np.float32 and b.ndim == 1):
            b = np.asarray(b, dy).reshape(-1).astype(np.float32)
        pair = np.empty((max(a.size, b.size), 2), np.float32)     # element 0 (x) in the low half
        pair[:, 0] = a
        pair[:, 1] = b
        return _value(pair.reshape(-1).view(np.uint64), "uint64", True)
    return run, False


def _float2_part(index):
    def compile_(ctx, call, info):
        v = ctx.expr(call.operands[0])

        def run(w):
            pair = np.asarray(v(w), np.uint64).reshape(-1).view(np.float32).reshape(-1, 2)
            return _value(pair[:, index].copy(), "float32", False)
        return run, False
    return compile_


def _bitcast(dst_dtype):
    def compile_(ctx, call, info):
        v = ctx.expr(call.operands[0])
        src = V.NP_DTYPE[call.operands[0].dtype]
        out = V.NP_DTYPE[dst_dtype]

        def run(w):
            return _value(np.asarray(v(w), src).reshape(-1).view(out), dst_dtype, not dt.is_float(dst_dtype))
        return run, False
    return compile_


def _fdividef(ctx, call, info):
    x, y = (ctx.expr(o) for o in call.operands)

    def run(w):
        a, b = (np.asarray(f(w), np.float32).reshape(-1).astype(np.float64) for f in (x, y))
        with np.errstate(all="ignore"):
            # __fdividef: for 2^126 < |y| < 2^128 the hardware returns 0 (CUDA C Programming Guide)
            r = np.where(np.abs(b) > 2.0 ** 126, 0.0 * a, a / b).astype(np.float32)
        return _value(r, "float32", False)
    return run, False


def _float22bfloat162(ctx, call, info):
    x, y = (ctx.expr(o) for o in call.operands)

    def run(w):
        a, b = np.broadcast_arrays(*(np.asarray(f(w), np.float32).reshape(-1).astype(np.float64) for f in (x, y)))
        lanes = np.stack([CV.round_float(a, None, "bfloat16", "rn"), CV.round_float(b, None, "bfloat16", "rn")],
                         axis=1)
        return _value(to_bits(canonical_nan(lanes.reshape(-1)), 32), "uint32", True)
    return run, False


HANDLERS = {
    "cuda.make_float2": _make_float2, "cuda.float2_x": _float2_part(0), "cuda.float2_y": _float2_part(1),
    "cuda.float_as_uint": _bitcast("uint32"), "cuda.uint_as_float": _bitcast("float32"),
    "cuda.fdividef": _fdividef, "cuda.float22bfloat162_rn": _float22bfloat162,
}
