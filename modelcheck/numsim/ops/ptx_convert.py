"""Rounding to a float format and the PTX `cvt` forms `ir.ops.arith_forms` models.

`round_float(x, err, target, mode)`: x is a float64 value whose exact value is x + err (err None: x
is the correctly rounded float64 of an operation whose float32 rounding via float64 is innocuous).
Round to nearest goes through round-to-odd: odd at 53 bits, then odd at 24 bits, then one
round-to-nearest-even cast (numpy / ml_dtypes) to the target; each step keeps at least two extra bits,
so the result is the correctly rounded one (Boldo & Melquiond, "Emulation of FMA and correctly rounded
sums: proved algorithms using rounding to odd").  .rz/.rm/.rp round to nearest, then step one ulp
where that went the wrong way.  Packed results put operand a in the upper half and b in the lower
(PTX ISA 9.7.10.24); narrow sources unpack the low byte or nibble into element 0.
"""
from __future__ import annotations

import numpy as np

from ir.ops import arith_forms as AF

from .. import values as V

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
# largest finite value of each narrow format (.satfinite clamps to it)
MAX_FINITE = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
              "float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float4_e2m1fn": 6.0}
# the canonical NaN of each format, as bits
NAN_BITS = {"float8_e4m3fn": 0x7F, "float8_e5m2": 0x7F, "float16": 0x7FFF, "bfloat16": 0x7FFF,
            "float32": 0x7FFFFFFF}


def _odd64(x: np.ndarray, err) -> np.ndarray:
    """x rounded to odd at 53 bits, given the exact value x + err (call with float errors ignored)."""
    if err is None:
        return x
    # x + err inexact (err finite and nonzero, x finite) with x's last bit even: one step toward err
    step = ((x.view(np.uint64) & np.uint64(1)) == 0) & (err != 0)
    if not V.nnz(step):     # (cheaper than .any())
        return x
    step &= np.isfinite(x) & np.isfinite(err)
    return np.where(step, np.nextafter(x, np.where(err > 0, np.inf, -np.inf)), x)


def _odd32(x: np.ndarray) -> np.ndarray:
    """A float64 rounded to odd at float32's 24 bits (kept as float32)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
        back = r.astype(np.float64)
        toward0 = np.isfinite(x) & (np.abs(back) > np.abs(x))
        r = np.where(toward0, np.nextafter(r, np.float32(0)), r).astype(np.float32)
        inexact = np.isfinite(x) & (r.astype(np.float64) != x)
    return np.where(inexact, (r.view(np.uint32) | np.uint32(1)).view(np.float32), r)


def round_float(x: np.ndarray, err, target: str, mode: str) -> np.ndarray:
    """x (+ err) as `target` (a numpy / ml_dtypes float name) under rounding `mode`."""
    with np.errstate(over="ignore", invalid="ignore"):
        return round_quiet(x, err, target, mode)


def round_quiet(x: np.ndarray, err, target: str, mode: str) -> np.ndarray:
    """`round_float` for callers that already ignore floating-point errors (one `np.errstate` per op)."""
    x = np.asarray(x, dtype=np.float64)
    if target == "float64":
        return x
    if mode in ("rn", ""):
        if err is None and target == "float32":
            return x.astype(np.float32)
        odd = _odd64(x, err)
        return odd.astype(np.float32) if target == "float32" else _odd32(odd).astype(_np_float(target))
    if mode == "rna":
        return _round_away(x, target)
    np_t = _np_float(target)
    if err is None:
        err = np.zeros_like(x)
    r = x.astype(np.float32) if target == "float32" else _odd32(_odd64(x, err)).astype(np_t)
    back = r.astype(np.float64)
    above = (back > x) | ((back == x) & (err < 0))
    below = (back < x) | ((back == x) & (err > 0))
    if mode == "rz":
        fix, to = (above & (back > 0)) | (below & (back < 0)), np.zeros_like(x)
    elif mode == "rm":
        fix, to = above, np.full_like(x, -np.inf)
    else:
        fix, to = below, np.full_like(x, np.inf)
    fix &= ~np.isnan(x)
    if not fix.any():
        return r
    return np.where(fix, _step(r, to, np_t), r).astype(np_t)


def _np_float(target: str):
    return V.NP_DTYPE[target] if target != "float4_e2m1fn" else V.ml_dtype(target)


def _step(r: np.ndarray, to: np.ndarray, np_t) -> np.ndarray:
    """The neighbour of r (a float32 or narrower) toward `to`."""
    if np.dtype(np_t) == np.float32:
        return np.nextafter(r, to.astype(np.float32))
    # narrower formats: move the bit pattern (sign-magnitude) one step
    u = _UINT[np.dtype(np_t).itemsize * 8]
    bits = r.view(u).astype(np.int64)
    sign = np.signbit(r.astype(np.float64))
    mag = bits & ~(1 << (np.dtype(np_t).itemsize * 8 - 1))
    away = (to > r.astype(np.float64)) != sign          # moving away from zero
    zero = mag == 0
    new = np.where(away, bits + 1, bits - 1)
    # from a zero, the step goes to the smallest subnormal of the direction's sign
    new = np.where(zero, np.where(to > 0, 1, (1 << (np.dtype(np_t).itemsize * 8 - 1)) | 1), new)
    return new.astype(u).view(np_t)


def _round_away(x: np.ndarray, target: str) -> np.ndarray:
    """Round to nearest, ties away from zero (`.rna`), for tf32 (float32 with 10 mantissa bits)."""
    f = x.astype(np.float32)                     # cvt.rna.tf32.f32: the source is already float32
    bits = f.view(np.uint32)
    finite = np.isfinite(f)
    r = np.where(finite, (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000), bits).astype(np.uint32)
    return r.view(np.float32)


def saturate_finite(x: np.ndarray, target: str) -> np.ndarray:
    """.satfinite: magnitudes beyond the largest finite value clamp to it; NaN stays NaN."""
    m = MAX_FINITE[target]
    return np.where(np.isnan(x), x, np.clip(x, -m, m))


def to_narrow(x: np.ndarray, fmt: str, relu: bool) -> np.ndarray:
    """float64 values to e4m3 / e5m2 / e2m1 codes (uint8), round to nearest even, .satfinite."""
    if relu:
        x = np.where(x < 0, 0.0, x)
    elem = AF.TYPES[fmt][1]
    nan = np.isnan(x)
    some_nan = V.nnz(nan)
    m = MAX_FINITE[elem]
    # .satfinite (saturate_finite; a NaN, set to 0 here, is coded below): the ufuncs without np.clip's wrapper
    y = np.minimum(np.maximum(x, -m), m)
    if some_nan:
        y = np.where(nan, 0.0, y)
    y32 = y.astype(np.float32)
    if elem != "float4_e2m1fn" and not V.nnz(y32 != y):
        # float32 values (every f32 source): round_float's round-to-odd step is the identity, one cast rounds
        codes = y32.astype(_np_float(elem)).view(np.uint8)
    else:
        codes = round_float(y, None, elem, "rn").view(np.uint8)
    if elem == "float4_e2m1fn":
        # e2m1 has no NaN: a NaN input gives +MAX_NORM (6.0, code 0x7), an approximation (docs/semantics.md)
        codes = codes & np.uint8(0xF)
        return np.where(nan, np.uint8(0x7), codes).astype(np.uint8) if some_nan else codes
    return np.where(nan, np.uint8(NAN_BITS[elem]), codes).astype(np.uint8) if some_nan else codes


def to_ue8m0(x: np.ndarray, mode: str, satfinite: bool) -> np.ndarray:
    """float64 to ue8m0 (a power of two 2^(e-127), e in 0..254; 0xff is NaN), rounding .rz or .rp."""
    with np.errstate(all="ignore"):
        m, k = np.frexp(x)                    # x = m * 2^k, 0.5 <= |m| < 1
        e = (k - 1 + 127).astype(np.int64)
        if mode == "rp":
            e = e + ((m != 0.5) & (x > 0)).astype(np.int64)
        e = np.where(x > 0, e, 0)             # zero and negative inputs: the smallest code
        top = 254 if satfinite else 255
        e = np.minimum(np.maximum(e, 0), top)     # (np.clip, without its wrapper)
        e = np.where(x == np.inf, top, e)
        nan = np.isnan(x)
        if V.nnz(nan):
            e = np.where(nan, 255, e)
    return e.astype(np.uint8)


def from_narrow(codes: np.ndarray, fmt: str) -> np.ndarray:
    """e4m3 / e5m2 / e2m1 codes (uint8) to float16 (exact); NaN to the canonical half NaN."""
    elem = AF.TYPES[fmt][1]
    np_t = V.ml_dtype(elem) if elem == "float4_e2m1fn" else V.NP_DTYPE[elem]
    vals = codes.view(np_t).astype(np.float32)
    out = vals.astype(np.float16)
    return np.where(np.isnan(vals), np.uint16(0x7FFF).view(np.float16), out)


def ue8m0_to_bf16(codes: np.ndarray) -> np.ndarray:
    """ue8m0 codes to bfloat16 bits: 2^(e-127) is bfloat16 exponent field e (e = 0: the subnormal
    2^-127, bits 0x0040); 0xff is NaN."""
    c = codes.astype(np.uint16)
    return np.where(c == 0xFF, np.uint16(0x7FFF), np.where(c == 0, np.uint16(0x0040), c << np.uint16(7)))


# ----------------------------------------------------------------------------- cvt

def compile_cvt(ctx, call, info):
    from . import ptx_math as PM
    form = PM._form(call)
    d, a = form.types
    ops = call.operands
    mode = form.rounding or "rn"
    flags = form.flags
    relu, satf = "relu" in flags, "satfinite" in flags
    if form.operands == 3:                                # two f32 sources packed: a high, b low
        srcs = PM._readers(ctx, ops[1:], ["f32", "f32"])
        if srcs is None:
            return PM._unsupported(ctx, call, f"{call.op}: a source is not a float32 register")
        dst = PM.writer(ctx, ops[0], call.op, d)

        half = AF.TYPES[d][1] if d in ("f16x2", "bf16x2") and mode in ("rn", "") and not relu and not satf else None
        narrow_pair = d in ("ue8m0x2", "e4m3x2", "e5m2x2", "e2m1x2")
        # a uint32 destination register stores a packed lane vector as it is (ptx_math `write`'s first path)
        set_packed = dst.set_lanes if dst.np_dtype == np.uint32 else None

        def pack(w):
            hi32, lo32 = srcs[0](w), srcs[1](w)
            if hi32.shape != lo32.shape:
                hi32, lo32 = np.broadcast_arrays(hi32, lo32)
            if half is not None and hi32.dtype == lo32.dtype == np.float32:
                r = _pack_halves(hi32, lo32, half)      # (lanes, 1): one f32 element per source register
                if set_packed is not None and r.shape[0] > 1:
                    return set_packed(w, r.reshape(-1))
                return dst(w, r)
            if narrow_pair and hi32.ndim == 2 and hi32.shape[1] == 1:
                # both halves in one call of the (elementwise) conversion: column 0 the low half (b), 1 the high (a);
                # each row's two codes, read little-endian, are the packed register `_join` builds below
                pair = np.empty((hi32.shape[0], 2), np.float64)
                pair[:, 0:1] = lo32
                pair[:, 1:2] = hi32
                if d == "ue8m0x2":
                    return dst(w, to_ue8m0(pair, mode, satf).view(np.uint16))
                codes = to_narrow(pair, d, relu)
                if d == "e2m1x2":
                    return dst(w, codes[:, 0:1] | (codes[:, 1:2] << np.uint8(4)))
                return dst(w, codes.view(np.uint16))
            hi, lo = hi32.astype(np.float64), lo32.astype(np.float64)
            if d == "ue8m0x2":
                parts = [to_ue8m0(v, mode, satf) for v in (lo, hi)]
                return dst(w, _join(parts, 8, 16))
            if d in ("e4m3x2", "e5m2x2", "e2m1x2"):
                parts = [to_narrow(v, d, relu) for v in (lo, hi)]
                return dst(w, _join(parts, 4 if d == "e2m1x2" else 8, AF.TYPES[d][0]))
            elem = AF.TYPES[d][1]
            parts = [_to_float(v, elem, mode, relu, satf, False) for v in (lo, hi)]
            dst(w, _join([p.view(np.uint16) for p in parts], 16, 32))
        return pack, False
    if d in ("f16x2", "bf16x2"):                          # narrow pair -> half pair, element 0 low
        raw = PM.reader(ctx, ops[1], a, raw=True)
        if raw is None:
            return PM._unsupported(ctx, call, f"{call.op}: the source is not a {a} register")
        dst = PM.writer(ctx, ops[0], call.op, d)
        nbits = 4 if a == "e2m1x2" else 8

        def unpack(w):
            r = raw(w).astype(np.uint16)
            mask = np.uint16((1 << nbits) - 1)
            lo, hi = (r & mask).astype(np.uint8), ((r >> np.uint16(nbits)) & mask).astype(np.uint8)
            if a == "ue8m0x2":
                parts = [ue8m0_to_bf16(lo), ue8m0_to_bf16(hi)]
            else:
                parts = [from_narrow(v, a).view(np.uint16) for v in (lo, hi)]
                if relu:
                    parts = [np.where((p & np.uint16(0x8000)) != 0, np.uint16(0), p) for p in parts]
            dst(w, _join(parts, 16, 32))
        return unpack, False
    src = PM.reader(ctx, ops[1], a)
    if src is None:
        return PM._unsupported(ctx, call, f"{call.op}: the source is not a {a} register")
    dst = PM.writer(ctx, ops[0], call.op, d)
    d_elem = AF.TYPES[d][1]
    flush, sat = "ftz" in flags, "sat" in flags
    float_src, float_dst = a in AF.FLOATS or a == "tf32", d in AF.FLOATS or d == "tf32"
    # cvt.rn.{f16,bf16}.f32 and cvt.f32.{f16,bf16} with no other qualifier: one dtype cast (below)
    by_cast = (not flags and mode in ("rn", "") and
               ((a == "f32" and d in ("f16", "bf16")) or (d == "f32" and a in ("f16", "bf16"))))

    def run(w):
        x = src(w)
        if by_cast and type(x) is np.ndarray:
            return dst(w, _cast_rn(x, d_elem))
        if flush:
            x = PM.ftz(x)
        with np.errstate(all="ignore"):
            if float_dst:
                if mode in AF.INT_ROUNDINGS:              # cvt.rni.f32.f32: round to an integral value
                    v = _int_round(x.astype(np.float64), mode)
                    r = v.astype(x.dtype)
                elif d == "tf32":
                    r = round_float(x.astype(np.float64), None, "float32", "rna")
                    if satf:
                        r = saturate_finite(r.astype(np.float64), "float32").astype(np.float32)
                else:
                    r = _to_float(x.astype(np.float64), d_elem, mode, relu, satf, float_src)
                if sat:
                    r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
                if flush:
                    r = PM.ftz(r)
                return dst(w, r)
            info_ = np.iinfo(V.NP_DTYPE[d_elem])
            if float_src:                                  # float -> int: rounded, saturated, NaN -> 0
                v = _int_round(x.astype(np.float64), mode)
                v = np.where(np.isnan(v), 0, np.clip(v, info_.min, info_.max))
                return dst(w, v.astype(V.NP_DTYPE[d_elem]))
            v = x.astype(np.int64) if x.dtype != np.uint64 else x
            if sat:
                v = np.clip(v, info_.min, info_.max)
            dst(w, v.astype(V.NP_DTYPE[d_elem]))          # narrowing keeps the low bits
    return run, False


def _cast_rn(x: np.ndarray, elem: str) -> np.ndarray:
    """`_to_float` under .rn between float32 and f16 / bf16 as one dtype cast: widening is exact, and narrowing a
    float32 rounds it to nearest even as the float64 route does (a float32 is exact in float64; `_pack_halves`);
    NaN canonical."""
    with np.errstate(all="ignore"):
        r = x.astype(_np_float(elem))
        nan = np.isnan(x)
    return _canonical_nan(r, nan, elem) if V.nnz(nan) else r


def _canonical_nan(r: np.ndarray, nan: np.ndarray, elem: str) -> np.ndarray:
    """`r` with the canonical NaN of `elem` where `nan` (tested on the source: no widening of narrow results)."""
    u = _UINT[np.dtype(r.dtype).itemsize * 8]
    return np.where(nan, u(NAN_BITS[elem]), r.view(u)).astype(u).view(r.dtype)


def _to_float(x: np.ndarray, elem: str, mode: str, relu: bool, satf: bool, exact: bool) -> np.ndarray:
    if relu:
        x = np.where(x < 0, 0.0, x)
    nan = np.isnan(x)
    r = round_float(x, None if mode in ("rn", "") else np.zeros_like(x), elem, mode)
    if satf:
        m = MAX_FINITE[elem]
        r64 = r.astype(np.float64)
        r = np.where(np.isinf(r64), np.sign(r64) * m, r64).astype(r.dtype)
    if nan.any() and elem in NAN_BITS:
        r = _canonical_nan(r, nan, elem)
    return r


def _pack_halves(hi: np.ndarray, lo: np.ndarray, elem: str) -> np.ndarray:
    """cvt.rn.{f16,bf16}x2.f32 of float32 registers: each float32 rounded to nearest even by the dtype cast (a
    float32 is exact in float64, so this is `_to_float`'s rounding), NaN canonical, lo in the low half.  Both
    halves convert in one cast of an (lanes, 2) array whose uint16 view, read as uint32, is the packed register
    (little endian: element 0 low)."""
    pair = np.empty(hi.shape + (2,), dtype=np.float32)
    pair[..., 0] = lo
    pair[..., 1] = hi
    bits = pair.astype(_np_float(elem)).view(np.uint16)     # (overflow to infinity: under the engine's np.errstate)
    nan = np.isnan(pair)
    if V.nnz(nan):
        bits = np.where(nan, np.uint16(NAN_BITS[elem]), bits)
    return bits.view(np.uint32).reshape(hi.shape)      # (the cast's, or np.where's, own contiguous array)


def _int_round(x: np.ndarray, mode: str) -> np.ndarray:
    return {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](x)


def _join(parts, bits: int, width: int) -> np.ndarray:
    """Pack element arrays (element 0 in the lowest bits) into registers of `width` bits."""
    u = _UINT[max(width, 8)]
    out = np.zeros(np.broadcast(*parts).shape, dtype=np.uint64)
    for i, p in enumerate(parts):
        out |= (p.astype(np.uint64) & np.uint64((1 << bits) - 1)) << np.uint64(i * bits)
    return out.astype(u)
