"""Thread indices, math intrinsics, clock, sleep, printf, setmaxnreg, griddepcontrol.

`clock64` is deterministic (the run's event counter); `nano_sleep` yields like a
poll; `setmaxnreg` needs the whole warp and is otherwise not accounted (docs/semantics.md#modeled-operations:
register budgets are v2); `griddepcontrol.wait` is assumed satisfied.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..runtime import Poll
from . import require_full_warp


def _index(fn):
    def compile_(ctx, call, info):
        return fn, False
    return compile_


_MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
         "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "fabs": np.abs,
         "floor": np.floor, "ceil": np.ceil, "round": np.rint, "nearbyint": np.rint, "trunc": np.trunc,
         "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh,
         "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "pow": np.power, "fmod": np.fmod,
         "atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot}


def _math(ctx, call, info):
    name = info.name[4:]
    args = [ctx.expr(o) for o in call.operands]
    dtype = call.dtype
    np_t = V.NP_DTYPE.get(dtype)
    if name == "rsqrt":
        f = (lambda x: 1 / np.sqrt(x))
    elif name == "exp10":
        f = (lambda x: np.power(10, x))
    elif name == "sigmoid":
        f = (lambda x: 1 / (1 + np.exp(-x)))
    elif name == "erf":
        from math import erf
        f = np.vectorize(erf)
    else:
        f = _MATH[name]

    def run(w):
        with np.errstate(all="ignore"):
            vals = [a(w) for a in args]
            r = f(*[np.asarray(v, dtype=V.NP_DTYPE[o.dtype]) for v, o in zip(vals, call.operands)])
        if dtype == "bool":
            return r if r.ndim else bool(r)
        r = np.asarray(r).astype(np_t)
        return r if r.ndim else r[()]
    return run, False


def _reinterpret(ctx, call, info):
    value = ctx.expr(call.operands[1])
    src = V.NP_DTYPE[call.operands[1].dtype]
    dst = V.NP_DTYPE[call.dtype]

    def run(w):
        v = np.asarray(value(w), dtype=src).view(dst)
        if v.ndim:
            return v
        s = v[()]
        return int(s) if np.issubdtype(v.dtype, np.integer) else s
    return run, False


def _clock(ctx, call, info):
    def run(w):
        w.eng.clock += 1
        return w.eng.clock
    return run, False


def _nanosleep(ctx, call, info):
    site = ctx.site(call, "nanosleep")

    def run(w):
        yield Poll(None, site, "nanosleep")
    return run, True


def _noop(ctx, call, info):
    return (lambda w: None), False


def _setmaxnreg(ctx, call, info):
    site = ctx.site(call, "setmaxnreg")
    span = call.span

    def run(w):
        require_full_warp(w, "setmaxnreg", span)
        w.eng.sync(w, "setmaxnreg", site, details={"dir": info.quals.get("dir", "")})
    return run, False


def _cvta(ctx, call, info):
    return ctx.expr(call.operands[0]), False


HANDLERS = {
    "cuda.lane_id": _index(lambda w: w.lane),
    "cuda.warp_id": _index(lambda w: w.index),
    "cuda.thread_rank": _index(lambda w: w.warp_base + w.lane),
    "cuda.warpgroup_id": _index(lambda w: w.warp_base // 128),
    "cuda.warp_in_warpgroup": _index(lambda w: w.index % 4),
    "cuda.thread_in_warpgroup": _index(lambda w: (w.warp_base % 128) + w.lane),
    "cuda.cvta_generic_to_shared": _cvta,
    "cuda.clock64": _clock,
    "cuda.nano_sleep": _nanosleep,
    "cuda.printf": _noop,
    "setmaxnreg": _setmaxnreg,
    "griddepcontrol.wait": _noop,
    "griddepcontrol.launch_dependents": _noop,
    "tir.reinterpret": _reinterpret,
    **{f"tir.{m}": _math for m in list(_MATH) + ["rsqrt", "exp10", "sigmoid", "erf"]},
}
