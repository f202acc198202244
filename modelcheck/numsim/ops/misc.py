"""Thread indices, math intrinsics, clock, sleep, printf, setmaxnreg, griddepcontrol.

`clock64` is deterministic (the run's event counter); `nano_sleep` yields like a
poll; `setmaxnreg` needs the whole warp and is accounted per warpgroup
(numsim.registers_budget); `griddepcontrol.wait` is assumed satisfied.
"""
from __future__ import annotations

import numpy as np

import ir
from ir import dtypes as dt

from .. import values as V
from ..errors import EngineError, UnsupportedTIRxError
from ..runtime import Poll
from . import require_full_warp, uniform


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


def _bitcount(ctx, call, info):
    """`T.popcount(x)` (x's type) / `T.clz(x)` (int32): set bits, or leading zeros, of x's bit pattern (CUDA
    __popc/__clz: clz of 0 is the width)."""
    value = ctx.expr(call.operands[0])
    width = dt.bits(call.operands[0].dtype)
    unsigned = np.dtype(f"uint{width}")
    clz = info.name == "tir.clz"
    np_t = V.NP_DTYPE[call.dtype]

    def one(v: int) -> int:
        v &= (1 << width) - 1
        return width - v.bit_length() if clz else v.bit_count()

    def run(w):
        v = value(w)
        if type(v) is np.ndarray:
            bits = np.asarray(v).astype(unsigned)
            return np.array([one(int(x)) for x in bits.reshape(-1)], dtype=np_t).reshape(bits.shape)
        return one(int(v))
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


def _ptr_byte_offset(ctx, call, info):
    """A pointer `bytes` further: addresses are 64-bit integers (per lane when either operand varies)."""
    ptr, nbytes = (ctx.expr(o) for o in call.operands)

    def run(w):
        p, b = ptr(w), nbytes(w)
        if type(p) is np.ndarray or type(b) is np.ndarray:
            return np.asarray(p).astype(np.int64) + np.asarray(b).astype(np.int64)
        return int(p) + int(b)
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
    from .. import registers_budget
    site = ctx.site(call, "setmaxnreg")
    span = call.span
    count = ctx.expr(call.operands[0])
    direction = info.quals.get("dir", "")

    def run(w):
        require_full_warp(w, "setmaxnreg", span)
        registers_budget.execute(w, int(uniform(count(w), w, "setmaxnreg count", span)), direction, site, span)
        w.eng.sync(w, "setmaxnreg", site, details={"dir": direction})
    return run, False


def _cvta(ctx, call, info):
    return ctx.expr(call.operands[0]), False


def _activemask_value(ctx, call, info):
    def run(w):
        return int(sum(1 << int(k) for k in np.flatnonzero(w.active())))
    return run, False


def _trap_when_assert_failed(ctx, call, info):
    """TVM's `T.cuda.trap_when_assert_failed(cond)`: each thread whose condition is false executes `trap`, which
    aborts the kernel; a run that reaches it on these inputs reports the assertion with its lanes."""
    cond = ctx.expr(call.operands[0])
    span = call.span

    def run(w):
        c = V.truthy(cond(w))
        failed = np.flatnonzero(~c & w.active()) if type(c) is np.ndarray else (
            np.flatnonzero(w.active()) if not c else np.empty(0, np.int64))
        if failed.size:
            threads = [int(w.warp_base + k) for k in failed]
            raise EngineError("assertion_failed",
                              f"trap_when_assert_failed: the condition is false on thread(s) "
                              f"{', '.join(map(str, threads[:8]))}{' ...' if len(threads) > 8 else ''} of CTA "
                              f"{w.cta}: the kernel traps", span, threads=threads[:32])
    return run, False


def _tmem_addr(ctx, call, info):
    """TVM's get_tmem_addr: column (bits 0-15) and row (bits 16-31) each advanced and wrapped to 16 bits."""
    base, row, col = (ctx.expr(o) for o in call.operands)

    def run(w):
        bv, cv, rv = base(w), col(w), row(w)       # (the order the lines below read them in)
        if type(bv) is int and type(rv) is int and type(cv) is int:
            # uniform operands (the usual case): the lines below in Python ints, whose & and >> act on the two's
            # complement as int64's do; the result is below 2^32
            return ((((bv >> 16) & 0xFFFF) + rv) & 0xFFFF) << 16 | (((bv & 0xFFFF) + cv) & 0xFFFF)
        b = np.asarray(bv).astype(np.int64)
        c = ((b & 0xFFFF) + np.asarray(cv).astype(np.int64)) & 0xFFFF
        r = (((b >> 16) & 0xFFFF) + np.asarray(rv).astype(np.int64)) & 0xFFFF
        v = ((r << 16) | c).astype(np.uint32)
        return v if v.ndim else int(v)
    return run, False


def _sreg_values(ctx):
    """Special registers by name; the cluster ones follow the launch's cluster shape."""
    return {
        "cluster_ctarank": lambda w: w.rt.cluster_rank,
        "cluster_nctarank": lambda w: w.rt.cluster_size,
        "laneid": lambda w: w.lane,
        "warpid": lambda w: w.index,
        "nwarpid": lambda w: (w.rt.nthreads + 31) // 32,
    }


def _mov_sreg(ctx, call, info):
    bits, name = call.operands
    sreg = getattr(name, "value", None)
    fn = _sreg_values(ctx).get(sreg)
    if fn is None or getattr(bits, "value", 32) != 32:
        return ctx.unsupported(call, f"cuda.mov_sreg {sreg!r}",
                               "this special register is not modeled"), False
    return fn, False


def _zero(ctx, call, info):
    return (lambda w: 0), False


def _isnullptr(ctx, call, info):
    """`tir.isnullptr(x)`: x == NULL.  Every buffer parameter a run reaches is bound to an array (an unbound one
    is a missing input, refused before the run), so a buffer's data pointer is never null here; a computed
    handle is null when its value is 0."""
    value = ctx.expr(call.operands[0])

    def run(w):
        v = value(w)
        return (np.asarray(v) == 0) if type(v) is np.ndarray else v == 0
    return run, False


def _float22half2(ctx, call, info):
    """TVM's `cuda_float22half2(dst, src)`: `*(half2*)dst = __float22half2_rn(*(float2*)src)` on registers -- the
    two float32 elements at src become the two float16 elements at dst, each rounded to nearest even (NaN as the
    canonical f16 NaN, as cvt.rn.f16x2.f32 gives it)."""
    from . import ptx_convert as CV
    from .float_arith import canonical_nan
    what = "cuda.float22half2"
    dst, src = call.operands
    if not (isinstance(dst, ir.Address) and isinstance(src, ir.Address)):
        raise UnsupportedTIRxError(what, call.span, "dst and src must be addresses of buffer elements "
                                                    "(T.address_of(...))")
    dbuf, sbuf = ctx.cc.buffers[dst.buffer], ctx.cc.buffers[src.buffer]
    if dbuf.dtype != "float16" or sbuf.dtype != "float32" or len(dst.indices) != 1 or len(src.indices) != 1:
        raise UnsupportedTIRxError(what, call.span, f"modeled on a 1-D float16 destination and float32 source "
                                                    f"buffer; got {dst.buffer} ({dbuf.dtype}), {src.buffer} "
                                                    f"({sbuf.dtype})")

    def at(a: ir.Address, k: int, dtype: str) -> ir.Load:
        i = a.indices[0]
        return ir.Load(a.buffer, (ir.BinOp("+", i, ir.Const(k, i.dtype), i.dtype, span=i.span),), dtype,
                       span=a.span)
    reads = [ctx.expr(at(src, k, "float32")) for k in (0, 1)]
    writes = [ctx.lvalue(at(dst, k, "float16"), what) for k in (0, 1)]

    def run(w):
        for rd, wr in zip(reads, writes):
            x = np.asarray(rd(w), dtype=np.float32).astype(np.float64)
            h = canonical_nan(np.asarray(CV.round_float(x, None, "float16", "rn"), dtype=np.float16))
            wr(w, h if h.ndim else h[()])
    return run, False


HANDLERS = {
    "cuda.float22half2": _float22half2,
    "tir.isnullptr": _isnullptr,
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
    "cuda.__activemask": _activemask_value,
    "tir.tvm_warp_activemask": _activemask_value,
    "cuda.trap_when_assert_failed": _trap_when_assert_failed,
    "cuda.get_tmem_addr": _tmem_addr,
    "cuda.mov_sreg": _mov_sreg,
    "cuda.iket.mark": _noop,
    "cuda.iket.range_start": _zero,
    "cuda.iket.sentinel_token": _zero,
    "cuda.iket.range_end": _noop,
    "prefetch": _noop,
    "setmaxnreg": _setmaxnreg,
    "griddepcontrol.wait": _noop,
    "griddepcontrol.launch_dependents": _noop,
    "tir.reinterpret": _reinterpret,
    "tir.popcount": _bitcount,
    "tir.clz": _bitcount,
    "tir.ptr_byte_offset": _ptr_byte_offset,
    **{f"tir.{m}": _math for m in list(_MATH) + ["rsqrt", "exp10", "sigmoid", "erf"]},
}
