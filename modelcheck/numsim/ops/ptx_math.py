"""PTX register arithmetic (`add`, `fma`, `cvt`, `mov`, `setp`, ... as `ir.ops.arith_forms` classifies
them), per lane on numpy arrays (the CUDA float2 helpers: ops/cuda_float.py).

Values move by bit pattern, as in PTX: each operand's register is read as the bits of its own dtype,
viewed as the instruction's type (a uint64 register of an `.f32x2` op is two float32, element 0 in
the low half), and the result's bits are written into the destination register's dtype.  Rounding:
results are computed in float64 with the exact residual where one exists (TwoSum for sums; products
of f32/f16/bf16 values are exact in float64), then rounded to the target once: round-to-odd before
the final .rn cast (so fma and sums are correctly rounded, no double rounding), or stepped one ulp for
.rz/.rm/.rp.  Division, sqrt and rcp under .rn are float64 results cast once, which is correctly
rounded for float32 (53 >= 2*24 + 2 bits).  `.approx` functions use exact math (PTX allows an error;
docs/semantics.md).  NaN results of float arithmetic are the canonical NaN (0x7fffffff, 0x7fff).
"""
from __future__ import annotations

import numpy as np

import ir
from ir import dtypes as dt
from ir.ops import arith_forms as AF

from .. import values as V
from . import ptx_convert as CV
from .float_arith import arith_result, canonical_nan, fma_rn_f32, ftz, quiet_float_op

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


# ----------------------------------------------------------------------------- operands

def reader(ctx, e: ir.Expr, t: str, *, raw: bool = False):
    """`w -> element array` of operand `e` read as type `t` (packed types give their elements flattened,
    element 0 first); `raw`: the register's unsigned bits instead."""
    bits, elem, lanes = AF.TYPES[t]
    fn = ctx.expr(e)
    src = e.dtype
    src_np = V.NP_DTYPE[src]
    # shape (registers, elements per register): a uniform value is one register, a lane vector 32
    r = _reader(fn, src, src_np, t, raw)
    if r is not None:
        r.operand, r.operand_np = fn, np.dtype(src_np)    # the register's own value: fast paths below
    return r


def _reader(fn, src: str, src_np, t: str, raw: bool):
    bits, elem, lanes = AF.TYPES[t]
    if t == "pred":
        return lambda w: np.asarray(fn(w), dtype=src_np).reshape(-1, 1) != 0
    width = 1 if raw else lanes
    view = _UINT[bits] if raw or elem in ("float4_e2m1fn",) else V.NP_DTYPE[elem]
    if dt.bits(src) == bits and src != "bool":
        src_dt = np.dtype(src_np)
        if width == 1 and np.dtype(view) == src_dt:     # the register's own type: no reinterpretation
            def own(w):
                x = fn(w)
                if type(x) is np.ndarray and x.ndim == 1 and x.dtype == src_dt:
                    return x.reshape(-1, 1)       # a lane vector (the line below without its asarray)
                return np.asarray(x, dtype=src_np).reshape(-1, 1)
            return own

        def bits_as(w):
            x = fn(w)
            if type(x) is np.ndarray and x.ndim == 1 and x.dtype == src_dt and x.flags.c_contiguous:
                return x.view(view).reshape(-1, width)     # a lane vector: its bits viewed directly
            return np.asarray(x, dtype=src_np).reshape(-1, 1).view(view).reshape(-1, width)
        return bits_as
    if dt.is_float(src) and lanes == 1 and dt.is_float(elem) and not raw:
        # a float register of another width in a float operand: converted by value (exact when widening)
        np_elem = V.NP_DTYPE[elem]
        return lambda w: np.asarray(fn(w), dtype=src_np).reshape(-1, 1).astype(np_elem)
    if not dt.is_float(src):
        u = _UINT[bits]
        return lambda w: np.asarray(fn(w), dtype=src_np).reshape(-1, 1).astype(u).view(view).reshape(-1, width)
    return None


def writer(ctx, e: ir.Expr, what: str, t: str):
    """`(w, array)` -> stores into the destination register `e` by bits; `array` holds the elements of
    type `t` (packed lanes flattened, element 0 first) or the registers' bits."""
    set_ = ctx.lvalue(e, what)
    dst = e.dtype
    dst_np = V.NP_DTYPE[dst]
    bits = AF.TYPES[t][0]
    u = _UINT[bits]
    is_int = not dt.is_float(dst) and dst != "bool"
    same = dt.bits(dst) == bits
    dst_dtype = np.dtype(dst_np) if dst != "bool" else None

    size = bits // 8
    direct = same and dst_dtype is not None

    def write(w, arr):
        if direct and type(arr) is np.ndarray and arr.dtype == dst_dtype and arr.ndim == 1 and arr.size > 1 \
                and arr.flags.c_contiguous:
            set_(w, arr)        # a lane vector already in the register's type (the first path below, shortened)
            return
        if direct and type(arr) is np.ndarray and arr.ndim == 1 and arr.dtype.itemsize == size \
                and arr.dtype.kind in "uif" and arr.flags.c_contiguous:
            # one register per element, of the register's width: its bits are the register's (the path below
            # without its copies)
            set_(w, _value(arr if arr.dtype == dst_dtype else arr.view(dst_dtype), dst, is_int))
            return
        if same and dst_dtype is not None and type(arr) is np.ndarray and arr.ndim == 2 \
                and arr.dtype.itemsize * arr.shape[1] == size and arr.flags.c_contiguous \
                and (arr.dtype.kind in "uif" or arr.dtype.name == "bfloat16"):
            # packed elements, one register's worth per row (f32x2, bf16x2): each row's bytes are the register's
            set_(w, _value(arr.view(dst_dtype).reshape(-1), dst, is_int))
            return
        arr = np.ascontiguousarray(arr).reshape(-1)
        if same and arr.dtype == dst_dtype:        # already the register's bits and type
            set_(w, _value(arr, dst, is_int))
            return
        if not same and dt.is_float(dst):
            set_(w, _value(arr.astype(dst_np), dst, False))    # a float register of another width: by value
            return
        if arr.dtype == np.bool_:
            regs = arr.astype(u)
        elif arr.dtype.itemsize * 8 != bits:
            regs = to_bits(arr, bits)
        else:
            regs = np.ascontiguousarray(arr).view(u)
        if same:
            out = regs.view(dst_np)
        elif dst == "bool":
            out = regs != 0
        else:
            out = regs.astype(dst_np)
        set_(w, _value(out, dst, is_int))
    # a uniform register's bits as a Python int, for writers of unsigned registers of the op's width: what `write`
    # stores for a one-element array of those bits (callers test `write.bits_int` first)
    write.bits_int = direct and dst.startswith("uint")     # type: ignore[attr-defined]
    write.set_bits = set_ if write.bits_int else None     # type: ignore[attr-defined]
    # lane vectors (1-D, contiguous, more than one element) already of the register's type: stored as they are
    write.set_lanes = set_ if direct else None     # type: ignore[attr-defined]
    write.np_dtype = dst_dtype     # type: ignore[attr-defined]
    return write


def _value(out: np.ndarray, dtype: str, is_int: bool):
    """A register value as NumSim holds it: a 32-lane array, or a uniform scalar."""
    if out.size == 1:
        x = out[0]
        if dtype == "bool":
            return bool(x)
        return int(x) if is_int else x
    return out


def to_bits(arr: np.ndarray, bits: int) -> np.ndarray:
    """Elements (flattened packed lanes) as registers of `bits` bits."""
    return np.ascontiguousarray(arr).reshape(-1).view(_UINT[bits])


def _unsupported(ctx, call, why):
    return ctx.unsupported(call, call.op, why), False


def _readers(ctx, operands, types, raw=False):
    fns = []
    for e, t in zip(operands, types):
        r = reader(ctx, e, t, raw=raw)
        if r is None:
            return None
        fns.append(r)
    return fns


def _form(call) -> AF.MathForm:
    form = AF.parse(call.op, tuple(o.dtype for o in call.operands))
    assert isinstance(form, AF.MathForm), form   # the registry classified it as modeled
    return form


# ----------------------------------------------------------------------------- mov / logic / shifts

def _mov(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    ops = call.operands
    if t == "b128":
        return _mov_b128(ctx, call, form), False
    bits = AF.TYPES[t][0]
    if form.operands == 2:
        src = reader(ctx, ops[1], t, raw=True)
        if src is None:
            return _unsupported(ctx, call, f"{call.op}: operand of type {ops[1].dtype} is not a {t} register")
        dst = writer(ctx, ops[0], call.op, t)
        operand, operand_np = src.operand, src.operand_np
        # (a destination of another width converts by value: from the raw bits the reader gives)
        direct = dt.bits(ops[0].dtype) == bits and ops[0].dtype != "bool"

        def copy(w):
            x = operand(w)
            if direct and type(x) is np.ndarray and x.dtype == operand_np and x.ndim == 1 \
                    and x.dtype.itemsize * 8 == bits:
                dst(w, x)               # a lane vector of the register's width: its bits as they are
            else:
                dst(w, src(w))
        return copy, False
    half = {"b32": "b16", "b64": "b32"}[t]
    if form.unpack:
        src = reader(ctx, ops[2], t, raw=True)
        lo, hi = writer(ctx, ops[0], call.op, half), writer(ctx, ops[1], call.op, half)
        h = _UINT[AF.TYPES[half][0]]
        if src is None:
            return _unsupported(ctx, call, f"{call.op}: operand of type {ops[2].dtype} is not a {t} register")

        operand, operand_np = src.operand, src.operand_np
        # (a half of another width than the destination register's converts in `lo`/`hi`)
        lanes_lo, lanes_hi, lo_np, hi_np = lo.set_lanes, hi.set_lanes, lo.np_dtype, hi.np_dtype

        def unpack(w):
            x = operand(w)
            if type(x) is np.ndarray and x.dtype == operand_np and x.ndim == 1 and x.dtype.itemsize * 8 == bits \
                    and x.flags.c_contiguous:
                halves = x.view(h)          # the register's bits, as the reader gives them
                if lanes_lo is not None and lanes_hi is not None and x.size > 1:
                    lanes_lo(w, halves[0::2].copy().view(lo_np))      # what `lo`/`hi` store, without their tests
                    lanes_hi(w, halves[1::2].copy().view(hi_np))
                    return
                lo(w, halves[0::2].copy())
                hi(w, halves[1::2].copy())
                return
            pair = np.ascontiguousarray(src(w)).view(h).reshape(-1, 2)   # little-endian: element 0 is the low half
            lo(w, pair[:, 0].copy())
            hi(w, pair[:, 1].copy())
        return unpack, False
    a, b = reader(ctx, ops[1], half, raw=True), reader(ctx, ops[2], half, raw=True)
    if a is None or b is None:
        return _unsupported(ctx, call, f"{call.op}: a source is not a {half} register")
    dst = writer(ctx, ops[0], call.op, t)

    h = _UINT[AF.TYPES[half][0]]
    fa, fb, a_np, b_np = a.operand, b.operand, a.operand_np, b.operand_np
    hbits = bits // 2
    uniform = a_np.itemsize * 8 == hbits == b_np.itemsize * 8 and a_np.kind in "uif" and b_np.kind in "uif"
    set_bits = dst.set_bits
    last: list = [object(), object(), 0]
    # two half-width registers whose dtypes are the sources' (tested per call): the fast paths' width test, once
    halves = a_np.itemsize * 16 == bits and b_np.itemsize * 16 == bits
    # an unsigned destination of the op's width stores the packed lane vector as it is (`write`'s first path)
    set_packed = dst.set_lanes if dst.np_dtype == np.dtype(_UINT[bits]) else None

    def pack(w):
        # readable form: to_bits(np.stack(np.broadcast_arrays(lo, hi), axis=1), bits): element 0 the low half
        x, y = fa(w), fb(w)
        if halves and type(x) is np.ndarray and type(y) is np.ndarray and x.dtype == a_np and y.dtype == b_np \
                and x.ndim == y.ndim == 1 and x.size == y.size:
            # two lane vectors of half registers: their bits interleaved (what the reader and the lines below do)
            out = np.empty(2 * x.size, h)
            out[0::2] = x.view(h)
            out[1::2] = y.view(h)
            if set_packed is not None and x.size > 1:
                set_packed(w, out.view(_UINT[bits]))
            else:
                dst(w, out.view(_UINT[bits]))
            return
        if type(x) is not np.ndarray and type(y) is not np.ndarray and uniform:
            # two uniform registers: one register of their bits, as a Python int (the path below's result); the
            # same two objects as last time (held here, so not another value at a reused address) pack alike
            if x is last[0] and y is last[1]:
                packed = last[2]
            else:
                packed = _bits_of(x, a_np, hbits) | _bits_of(y, b_np, hbits) << hbits
                last[:] = (x, y, packed)
            if set_bits is not None:
                set_bits(w, packed)
            else:
                dst(w, np.array([packed], _UINT[bits]))
            return
        if uniform and (type(x) is np.ndarray) != (type(y) is np.ndarray):
            # a lane vector and a uniform register: the vector's bits interleaved with the uniform one's, from the
            # values already read (the lines below read both operands again)
            vec, x_vec = (x, True) if type(x) is np.ndarray else (y, False)
            if vec.ndim == 1 and vec.dtype == (a_np if x_vec else b_np) and vec.size > 1 and vec.flags.c_contiguous:
                out = np.empty(2 * vec.size, h)
                out[0::2] = x.view(h) if x_vec else _bits_of(x, a_np, hbits)
                out[1::2] = _bits_of(y, b_np, hbits) if x_vec else y.view(h)
                dst(w, out.view(_UINT[bits]))
                return
        x, y = a(w), b(w)
        pair = np.empty((max(x.shape[0], y.shape[0]), 2), x.dtype)
        pair[:, 0:1] = x
        pair[:, 1:2] = y
        dst(w, pair.reshape(-1).view(_UINT[AF.TYPES[t][0]]))
    return pack, False


def _bits_of(x, np_t: np.dtype, nbits: int) -> int:
    """The bits of a uniform register value (a Python int or a numpy scalar) of numpy type `np_t`."""
    if type(x) is int:
        return x & ((1 << nbits) - 1)      # two's complement, as the register holds it
    if isinstance(x, np.generic) and x.dtype == np_t:
        return int(x.view(_UINT[nbits]))   # a numpy scalar of the register's type: its bits
    return int(np.asarray(x, np_t).view(_UINT[nbits]))


def _b128(value) -> np.ndarray:
    """(registers, 2) uint64 halves of b128 register value(s) (16 bytes each, little-endian: low half first)."""
    return np.ascontiguousarray(np.asarray(value).reshape(-1)).view("<u8").reshape(-1, 2)


def _mov_b128(ctx, call, form):
    """mov.b128: a copy, or a pack/unpack of two 64-bit halves (low half first), on 16-byte registers."""
    ops = call.operands
    if form.operands == 2:
        src, dst = ctx.expr(ops[1]), ctx.lvalue(ops[0], call.op)
        return lambda w: dst(w, src(w))
    if form.unpack:
        src = ctx.expr(ops[2])
        lo, hi = writer(ctx, ops[0], call.op, "b64"), writer(ctx, ops[1], call.op, "b64")

        def unpack(w):
            halves = _b128(src(w))
            lo(w, halves[:, 0].copy())
            hi(w, halves[:, 1].copy())
        return unpack
    a, b = reader(ctx, ops[1], "b64", raw=True), reader(ctx, ops[2], "b64", raw=True)
    dst = ctx.lvalue(ops[0], call.op)

    def pack(w):
        x, y = np.broadcast_arrays(a(w).reshape(-1), b(w).reshape(-1))
        regs = np.ascontiguousarray(np.stack([x, y], axis=1).astype("<u8")).view("V16").reshape(-1)
        dst(w, regs if regs.size > 1 else regs[0])
    return pack


# ----------------------------------------------------------------------------- arithmetic

def _arith(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    if t in AF.INTS:
        return _int_arith(ctx, call, form)
    if len(form.types) == 2:           # mixed precision: f32 result, narrow sources widened exactly
        narrow = form.types[1]
        types = [narrow, "f32"] if form.head in ("add", "sub") else [narrow, narrow, "f32"]
    else:
        types = [t] * (len(call.operands) - 1)
    srcs = _readers(ctx, call.operands[1:], types)
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    elem = AF.TYPES[t][1]
    dst = writer(ctx, call.operands[0], call.op, t)
    head, flags = form.head, form.flags
    mode = form.rounding or "rn"
    if head == "fma" and mode == "rn" and elem == "float32" and not flags and len(srcs) == 3:
        fa, fb, fc = srcs
        set_lanes, reg_np = dst.set_lanes, dst.np_dtype
        # the result's rows are the registers' bits (f32 in a 4-byte register, f32x2 in an 8-byte one)
        as_bits = set_lanes is not None and reg_np.kind in "uif" and reg_np.itemsize == 4 * AF.TYPES[t][2]

        def fma(w):
            # float_op's first step for these forms, called directly (its other routes where it declines); the
            # readers of an f32 / f32x2 operand always give float32 arrays (`_reader`): no type test
            a, b, c = fa(w), fb(w), fc(w)
            r = fma_rn_f32(a, b, c)
            if r is None:
                dst(w, quiet_float_op(head, [a, b, c], elem, mode, flags))
            elif as_bits and r.shape[0] > 1:
                set_lanes(w, r.view(reg_np).reshape(-1))    # what `dst` stores for this C-ordered (lanes, k) array
            else:
                dst(w, r)
        return fma, False

    def run(w):
        dst(w, quiet_float_op(head, [f(w) for f in srcs], elem, mode, flags))
    return run, False


def _int_arith(ctx, call, form):
    t = form.types[0]
    bits, elem, _ = AF.TYPES[t]
    srcs = _readers(ctx, call.operands[1:], [t, t])
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    wide = "wide" in form.flags
    out_t = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}.get(t, t) if wide else t
    dst = writer(ctx, call.operands[0], call.op, out_t)
    head, sat, hi = form.head, "sat" in form.flags, "hi" in form.flags
    np_elem = V.NP_DTYPE[elem]
    big = np.uint64 if t.startswith("u") else np.int64

    def run(w):
        a, b = np.broadcast_arrays(*(f(w) for f in srcs))
        with np.errstate(over="ignore"):
            if head == "mul" and (hi or wide):
                p = a.astype(big) * b.astype(big)          # exact for 16/32-bit operands
                r = (p >> bits).astype(np_elem) if hi else p.astype(V.NP_DTYPE[AF.TYPES[out_t][1]])
            elif sat:                                       # add.sat.s32 / sub.sat.s32 clamp
                p = a.astype(np.int64) + (b.astype(np.int64) if head == "add" else -b.astype(np.int64))
                r = np.clip(p, -2**31, 2**31 - 1).astype(np_elem)
            else:
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[head](a, b).astype(np_elem)
        dst(w, r)
    return run, False


def _div(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    srcs = _readers(ctx, call.operands[1:], [t, t])
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    elem, flags = AF.TYPES[t][1], form.flags

    def run(w):
        a, b = (v.astype(np.float64) for v in np.broadcast_arrays(*(ftz(f(w)) if "ftz" in flags else f(w)
                                                                      for f in srcs)))
        with np.errstate(all="ignore"):
            dst(w, arith_result(a / b, None, elem, "rn", flags))
    return run, False


def _minmax(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    srcs = _readers(ctx, call.operands[1:], [t] * (len(call.operands) - 1))
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    is_max = form.head == "max"
    flags = form.flags
    is_float = t in AF.FLOATS

    plain = not flags and is_float
    fmax = np.fmax if is_max else np.fmin
    first, rest = srcs[0], tuple(srcs[1:])

    def run(w):
        if plain:
            # max/min.f32 of two or three operands without flags: the loop below (NaN ignored unless all are NaN),
            # the ufunc broadcasting the operands itself
            r = first(w)
            for f in rest:
                r = fmax(r, f(w))
            dst(w, canonical_nan(r))
            return
        vals = [f(w) for f in srcs]
        if any(v.shape != vals[0].shape for v in vals):
            vals = list(np.broadcast_arrays(*vals))
        if "ftz" in flags:
            vals = [ftz(v) for v in vals]
        r = vals[0]
        for v in vals[1:]:
            if not is_float:
                r = np.maximum(r, v) if is_max else np.minimum(r, v)
            elif "NaN" in flags:      # any NaN operand gives NaN
                r = np.maximum(r, v) if is_max else np.minimum(r, v)
            else:                     # a NaN operand is ignored; both NaN gives NaN
                r = np.fmax(r, v) if is_max else np.fmin(r, v)
        if "relu" in flags:
            r = np.where(r < 0, r.dtype.type(0), r)
        dst(w, canonical_nan(r) if is_float else r)
    return run, False


def _neg_abs(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    src = reader(ctx, call.operands[1], t)
    if src is None:
        return _unsupported(ctx, call, f"{call.op}: the operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    neg, flush = form.head == "neg", "ftz" in form.flags

    def run(w):
        x = src(w)
        if flush:
            x = ftz(x)
        with np.errstate(over="ignore"):
            r = -x if neg else np.abs(x)       # sign-bit operations; integers wrap
            dst(w, r if r.dtype == x.dtype else r.astype(x.dtype))
    return run, False


_UNARY = {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda x: 1.0 / x, "rsqrt": lambda x: 1.0 / np.sqrt(x),
          "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos}


def _unary(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    src = reader(ctx, call.operands[1], t)
    if src is None:
        return _unsupported(ctx, call, f"{call.op}: the operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    f, elem, flags = _UNARY[form.head], AF.TYPES[t][1], form.flags
    ex2 = form.head == "ex2" and elem == "float32"

    operand = src.operand
    own = t == "f32" and src.operand_np == np.float32      # f32 of a float32 register: the reader keeps its value
    # a float32 destination register stores a float32 lane vector as it is (`write`'s first path)
    set_f32 = dst.set_lanes if dst.np_dtype == np.float32 else None

    def run(w):
        if own:
            v = operand(w)      # (read once: what the reader does with it, a lane vector kept 1-D)
            x = v if type(v) is np.ndarray and v.ndim == 1 and v.dtype == np.float32 else \
                np.asarray(v, dtype=np.float32).reshape(-1, 1)
        else:
            x = src(w)
        if ex2 and np.minimum.reduce(x, axis=None) >= -126.0 and np.maximum.reduce(x, axis=None) < 127.0:
            # the path below for operands in [-126, 127) (a NaN fails the test: the reductions propagate it): a
            # subnormal x (flushed or not) gives exp2(x) == 1 in float64 as 0 does, and 2^x >= 2^-126 is normal and
            # finite in float32, so neither ftz, overflow nor a NaN can occur
            r = np.exp2(x, dtype=np.float64).astype(np.float32).reshape(-1)    # (the float64 loop)
            if set_f32 is not None and r.size > 1:
                set_f32(w, r)
            else:
                dst(w, r)
            return
        if "ftz" in flags:
            x = ftz(x)
        with np.errstate(all="ignore"):
            dst(w, arith_result(f(x.astype(np.float64)), None, elem, "rn", flags))
    return run, False


# ----------------------------------------------------------------------------- setp / selp

def _setp(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    srcs = _readers(ctx, call.operands[1:], [t, t])
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, "pred")
    cmp, flush = form.compare, "ftz" in form.flags

    def run(w):
        a, b = np.broadcast_arrays(*(f(w) for f in srcs))
        if flush:
            a, b = ftz(a), ftz(b)
        dst(w, compare(cmp, a, b).astype(np.uint32))
    return run, False


def compare(cmp: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """setp's comparison: ordered ones are false on NaN, the `u` ones true; `num`/`nan` test for NaN."""
    base = cmp[:-1] if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu") else cmp
    base = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(base, base)
    is_float = a.dtype.kind == "f" or a.dtype.itemsize == 2 and a.dtype.kind == "V"
    x, y = (a.astype(np.float64), b.astype(np.float64)) if a.dtype.kind not in "iu" else (a, b)
    nan = (np.isnan(x) | np.isnan(y)) if a.dtype.kind not in "iu" else np.zeros(a.shape, np.bool_)
    del is_float
    if base == "num":
        return ~nan
    if base == "nan":
        return nan
    r = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
         "ge": np.greater_equal}[base](x, y)
    if cmp.endswith("u") and cmp not in ("lo", "ls", "hi", "hs"):
        return r | nan
    return r & ~nan if base == "ne" else r


def _selp(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    srcs = _readers(ctx, call.operands[1:3], [t, t], raw=True)
    c = reader(ctx, call.operands[3], "pred")
    if srcs is None or c is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)

    def run(w):
        a, b, p = np.broadcast_arrays(srcs[0](w), srcs[1](w), c(w))
        dst(w, np.where(p, a, b))
    return run, False


HANDLERS = {
    "math.mov": _mov,
    "math.add": _arith, "math.sub": _arith, "math.mul": _arith, "math.fma": _arith, "math.div": _div,
    "math.min": _minmax, "math.max": _minmax, "math.neg": _neg_abs, "math.abs": _neg_abs,
    **{f"math.{h}": _unary for h in AF.UNARY_MATH},
    "math.setp": _setp, "math.selp": _selp, "math.cvt": CV.compile_cvt,
}
