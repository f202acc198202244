"""PTX register arithmetic in NumSim (ops/ptx_math.py, ops/ptx_convert.py) against numpy / ml_dtypes
and exact rational references."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.ops import ptx_convert as CV
from modelcheck.numsim.ops import float_arith as FLT
from modelcheck.numsim.ops import ptx_math as PM

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "ptx_math"


def _run(name, inputs, **kw):
    return numsim.run(modelcheck.load(FIX / name).func, inputs, **kw)


# ----------------------------------------------------------------------------- kernels

def test_packed_float_pipeline_matches_numpy():
    x = np.random.default_rng(0).standard_normal((32, 2)).astype(np.float32)
    x[3, 0] = -0.0
    res = _run("softmax_pack.py", {"x": x, "y": np.zeros((32, 2), np.float32), "p": np.zeros(32, np.uint32),
                                   "back": np.zeros((32, 2), np.float32), "m": np.zeros(32, np.float32)})
    assert res.verdict == "clean"
    o = res.outputs
    y = x * np.float32(0.5) * np.float32(2) + np.float32(1)         # exact scalings: one rounding
    assert np.array_equal(o["y"], y)
    e = np.exp2(y.astype(np.float64)).astype(np.float32)
    r = (np.float32(1) / (e[:, 0] + e[:, 1])).astype(np.float32)
    probs = (e * r[:, None]).astype(np.float32)
    bf = probs.astype(ml_dtypes.bfloat16)
    # cvt.rn.bf16x2.f32 d, a, b: a (element 1 here) in the high half, b in the low half
    want = (bf[:, 1].view(np.uint16).astype(np.uint32) << 16) | bf[:, 0].view(np.uint16)
    assert np.array_equal(o["p"], want)
    assert np.array_equal(o["back"], bf.astype(np.float32))
    assert np.array_equal(o["m"], np.where(x[:, 0] > 0, x.max(1), np.float32(-1)))


def test_integer_bit_and_fp8_forms():
    rng = np.random.default_rng(1)
    u = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    u[:4] = [5, 999, 1000, 2**31 + 5]
    f = rng.standard_normal(32).astype(np.float32)
    g = rng.standard_normal(32).astype(np.float32)
    g[0] = np.nan
    outs = {n: np.zeros(32, d) for n, d in [("bits", np.uint32), ("sh", np.uint32), ("neg", np.int32),
                                            ("hi", np.uint32), ("lo16", np.uint32), ("sel", np.int32),
                                            ("fp8", np.uint16), ("mx", np.float32)]}
    res = _run("int_bits.py", {"u": u, "f": f, "g": g, **outs})
    assert res.verdict == "clean"
    o = res.outputs
    assert np.array_equal(o["bits"], f.view(np.uint32))                  # mov.b32 keeps the bits
    assert np.array_equal(o["sh"], (u << np.uint32(3)) + (u >> np.uint32(30)))
    assert np.array_equal(o["neg"], (-u.astype(np.int64)).astype(np.int32) >> 4)
    assert np.array_equal(o["hi"], ((u.astype(np.uint64) * 2654435769) >> 32).astype(np.uint32))
    assert np.array_equal(o["lo16"], u & 0xFFFF)
    assert np.array_equal(o["sel"], np.where(u.view(np.int32) < 1000, u.view(np.int32), 7))
    hi8 = f.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint16)
    lo8 = np.clip(f * -1000, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)   # .satfinite
    assert np.array_equal(o["fp8"], (hi8 << 8) | lo8)
    assert np.isnan(o["mx"][0]) and np.array_equal(o["mx"][1:], np.maximum(f, g)[1:])   # .NaN propagates


def test_unmodeled_form_is_incomplete_naming_it():
    res = _run("unmodeled_f64_rz.py", {"a": np.ones(32), "out": np.zeros(32)}, unsupported="incomplete")
    assert res.verdict == "incomplete"
    (d,) = res.diagnostics
    assert d.details["operation"] == "add.rz.f64" and d.span.line == 12
    assert "directed f64 rounding" in d.message or "directed" in str(d.details)


# ----------------------------------------------------------------------------- rounding

def _exact(x: np.float32) -> Fraction:
    return Fraction(float(x))


def _reference(exact: Fraction, mode: str) -> np.float32:
    """The float32 that `mode` rounds the rational `exact` to (ties to even for rn)."""
    guess = np.float32(float(exact))
    cands = {guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))}
    cands = sorted((c for c in cands if np.isfinite(c)), key=float)
    if mode == "rn":
        return min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))
    if mode == "rm":
        return max(c for c in cands if Fraction(float(c)) <= exact)
    if mode == "rp":
        return min(c for c in cands if Fraction(float(c)) >= exact)
    return max((c for c in cands if abs(Fraction(float(c))) <= abs(exact)), key=lambda c: abs(float(c)))


_F32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-2.0 ** 100, max_value=2.0 ** 100)


@settings(max_examples=300, deadline=None)
@given(_F32, _F32, _F32, st.sampled_from(["rn", "rz", "rm", "rp"]), st.sampled_from(["add", "mul", "fma"]))
def test_f32_add_mul_fma_are_correctly_rounded(a, b, c, mode, head):
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    vals = [np.array([[a]]), np.array([[b]])] + ([np.array([[c]])] if head == "fma" else [])
    got = FLT.float_op(head, vals, "float32", mode)[0, 0]
    exact = {"add": _exact(a) + _exact(b), "mul": _exact(a) * _exact(b),
             "fma": _exact(a) * _exact(b) + _exact(c)}[head]
    if abs(exact) > Fraction(float(np.finfo(np.float32).max)):
        return                                                     # overflow: covered below
    want = _reference(exact, mode)
    if exact == 0:
        assert got == 0
    else:
        assert got.view(np.uint32) == want.view(np.uint32), (a, b, c, mode, head, got, want)


def test_fma_is_fused_where_numpy_double_rounds():
    # a*b + c whose float64 sum lands on a float32 tie: fused rounding must not round twice
    a, b, c = np.float32(1 + 2**-23), np.float32(1 + 2**-23), np.float32(-1)
    got = FLT.float_op("fma", [np.array([[a]]), np.array([[b]]), np.array([[c]])], "float32", "rn")[0, 0]
    assert got == _reference(_exact(a) * _exact(b) + _exact(c), "rn")


def test_directed_rounding_overflow_zero_sign_and_nan():
    big = np.array([[np.float32(3e38)]])
    assert np.isinf(FLT.float_op("add", [big, big], "float32", "rn")[0, 0])
    assert FLT.float_op("add", [big, big], "float32", "rz")[0, 0] == np.finfo(np.float32).max
    one = np.array([[np.float32(1)]])
    assert np.signbit(FLT.float_op("sub", [one, one], "float32", "rm")[0, 0])
    assert not np.signbit(FLT.float_op("sub", [one, one], "float32", "rn")[0, 0])
    nan = FLT.float_op("add", [np.array([[np.float32(np.nan)]]), one], "float32", "rn")
    assert nan.view(np.uint32)[0, 0] == 0x7FFFFFFF                        # the canonical NaN


def test_ftz_sat_and_packed_f32x2_lanes():
    tiny = np.array([[np.float32(1e-40), np.float32(-1e-40)]])             # subnormals flush to signed zero
    r = FLT.float_op("add", [tiny, np.full_like(tiny, -0.0)], "float32", "rn", frozenset({"ftz"}))
    assert r[0, 0] == 0 and not np.signbit(r[0, 0]) and np.signbit(r[0, 1])
    x = np.array([[np.float32(0.75), np.float32(2.0)]])
    assert np.array_equal(FLT.float_op("add", [x, x], "float32", "rn", frozenset({"sat"})),
                          np.array([[1.0, 1.0]], np.float32))
    reg = PM.to_bits(np.array([np.float32(1.5), np.float32(-2.0)]), 64)   # element 0 in the low half
    assert int(reg[0]) & 0xFFFFFFFF == np.float32(1.5).view(np.uint32)


# ----------------------------------------------------------------------------- conversions

def test_round_float_to_bf16_and_f16_matches_ml_dtypes():
    x = np.random.default_rng(2).standard_normal(1000).astype(np.float32) * 1e3
    assert np.array_equal(CV.round_float(x.astype(np.float64), None, "bfloat16", "rn").view(np.uint16),
                          x.astype(ml_dtypes.bfloat16).view(np.uint16))
    assert np.array_equal(CV.round_float(x.astype(np.float64), None, "float16", "rn"), x.astype(np.float16))


def test_narrow_formats():
    x = np.array([1.0, -0.3, 1000.0, -1e9, np.nan, 5.0, 0.0])
    e4 = CV.to_narrow(x, "e4m3x2", relu=False)
    assert e4[2] == e4[2] and np.float32(e4[2:3].view(ml_dtypes.float8_e4m3fn)[0]) == 448      # satfinite
    assert np.float32(e4[3:4].view(ml_dtypes.float8_e4m3fn)[0]) == -448 and e4[4] == 0x7F
    assert np.array_equal(CV.to_narrow(np.array([-0.3]), "e4m3x2", relu=True), [0])
    e2 = CV.to_narrow(x, "e2m1x2", relu=False)
    assert list(e2) == [0x2, 0x9, 0x7, 0xF, 0x7, 0x6, 0x0]   # 1.0, -0.5, +6 (sat), -6, NaN->+6, 5->4 (tie to even), 0
    ue = CV.to_ue8m0(np.array([1.0, 3.0, 0.75, np.inf, np.nan, 0.0]), "rp", satfinite=True)
    assert list(ue) == [127, 129, 127, 254, 255, 0]
    assert list(CV.to_ue8m0(np.array([3.0, 0.75]), "rz", satfinite=True)) == [128, 126]
    assert list(CV.ue8m0_to_bf16(np.array([127, 0, 255], np.uint8))) == [0x3F80, 0x0040, 0x7FFF]
    codes = np.arange(256, dtype=np.uint8)
    back = CV.from_narrow(codes, "e4m3x2")
    ref = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    finite = ~np.isnan(ref)
    assert np.array_equal(back[finite].astype(np.float32), ref[finite])


@pytest.mark.parametrize("cmp,want", [("lt", [True, False, False]), ("ltu", [True, False, True]),
                                      ("ne", [True, False, False]), ("neu", [True, False, True]),
                                      ("num", [True, True, False]), ("nan", [False, False, True])])
def test_setp_compare_nan_rules(cmp, want):
    a = np.array([1.0, 2.0, np.nan], np.float32)
    b = np.array([2.0, 2.0, 1.0], np.float32)
    assert list(PM.compare(cmp, a, b)) == want


def test_popc_and_clz_match_python():
    """popc / clz on b32 and b64 words, per lane (tests/fixtures/ops2/popc_clz.py), zero and all-ones included."""
    kernel = modelcheck.load(Path(__file__).parents[3] / "fixtures" / "ops2" / "popc_clz.py")
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 2**32, 32, dtype=np.uint64) >> rng.integers(0, 32, 32).astype(np.uint64)).astype(np.uint32)
    y = rng.integers(0, 2**63, 32, dtype=np.uint64) >> rng.integers(0, 64, 32).astype(np.uint64)
    x[:2], y[:2] = [0, 0xFFFFFFFF], [0, 2**64 - 1]
    res = numsim.run(kernel.func, {"x": x, "y": y, "out": np.zeros((4, 32), np.uint32)})
    want = [[bin(int(v)).count("1") for v in x], [32 - int(v).bit_length() for v in x],
            [bin(int(v)).count("1") for v in y], [64 - int(v).bit_length() for v in y]]
    np.testing.assert_array_equal(res.outputs["out"], np.array(want, np.uint32))


def _fns_reference(m: int, base: int, off: int) -> int:
    if off == 0:
        return base if m >> base & 1 else 0xFFFFFFFF
    hits = [p for p in (range(base, 32) if off > 0 else range(base, -1, -1)) if m >> p & 1]
    return hits[abs(off) - 1] if len(hits) >= abs(off) else 0xFFFFFFFF


def test_fns_matches_the_ptx_examples_and_a_reference():
    """fns.b32 per lane (tests/fixtures/ops2/fns.py): the PTX ISA's examples (0xaaaaaaaa from bits 2 and 3, offsets
    +-1) and random masks and offsets against a direct reference."""
    kernel = modelcheck.load(Path(__file__).parents[3] / "fixtures" / "ops2" / "fns.py")
    rng = np.random.default_rng(5)
    mask = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    offset = rng.integers(-6, 7, 32).astype(np.int32)
    mask[2:4], offset[2:4] = 0xAAAAAAAA, [1, -1]          # bases 2 and 3: lanes 2 and 3
    res = numsim.run(kernel.func, {"mask": mask, "offset": offset, "out": np.zeros(32, np.uint32)})
    out = res.outputs["out"]
    assert out[2] == 3 and out[3] == 3                     # fns(0xaaaaaaaa, 2, 1) = 3; fns(.., 3, -1) = 3
    want = [_fns_reference(int(m), b, int(o)) for b, (m, o) in enumerate(zip(mask, offset))]
    np.testing.assert_array_equal(out, want)


def _prmt_reference(a: int, b: int, c: int) -> int:
    pool = (b << 32) | a
    out = 0
    for i in range(4):
        sel = c >> 4 * i & 0xF
        byte = pool >> 8 * (sel & 7) & 0xFF
        out |= ((0xFF if byte & 0x80 else 0) if sel & 8 else byte) << 8 * i
    return out


def test_prmt_permutes_bytes_as_the_ptx_isa_says():
    """prmt.b32 generic form per lane (tests/fixtures/ops2/prmt.py): the ISA's numbering ({b, a}, a's bytes 0-3),
    sign replication by a selector's msb, the int16 pack 0x5410 kernels use, and random operands against a
    direct reference."""
    kernel = modelcheck.load(Path(__file__).parents[3] / "fixtures" / "ops2" / "prmt.py")
    rng = np.random.default_rng(7)
    a = rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    b = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 2**16, 32, dtype=np.uint64).astype(np.uint32)
    a[0], b[0], c[0] = np.int32(-2), 0x00000007, 0x5410        # low halves packed: 0x0007fffe
    a[1], b[1], c[1] = 0x00000080, 0, 0x8888                   # byte 0 (0x80) sign-replicated four times
    a[2], b[2], c[2] = 0x44332211, 0x88776655, 0x3210          # the identity on a
    a[3], b[3], c[3] = 0x44332211, 0x88776655, 0x7654          # b
    res = numsim.run(kernel.func, {"a": a, "b": b, "c": c, "out": np.zeros(32, np.uint32)})
    out = res.outputs["out"]
    assert [int(x) for x in out[:4]] == [0x0007FFFE, 0xFFFFFFFF, 0x44332211, 0x88776655]
    want = [_prmt_reference(int(x) & 0xFFFFFFFF, int(y), int(z)) for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(out, np.array(want, np.uint32))


# ----------------------------------------------------------------------------- lane-vector fast paths

_EDGES = [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, -126.0, -126.00001, -125.99999, 126.99999, 127.0, 128.0,
          -149.5, -150.0, 3.0e38, -3.0e38, np.inf, -np.inf, np.nan, 0.5, -0.75]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_paths_match_the_general_forms(seed):
    """ex2 (with and without .ftz), mov.b64 pack / unpack, mov.b32 and max.f32 on lane vectors: the general
    route's results (ex2: `arith_result` of the float64 exp2 of the flushed operand) bit for bit."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((32, 2)) * 60).astype(np.float32)
    if seed:    # one run with every lane in the fast range, the others with edge values mixed in
        flat = x.reshape(-1)
        flat[rng.permutation(64)[:len(_EDGES)]] = np.array(_EDGES, np.float32)
    else:
        x = np.clip(x, -126, 126.5)
    u = rng.integers(0, 2**63, 32, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    outs = {n: np.zeros(s, d) for n, s, d in [("e", (32, 2), np.float32), ("f", (32, 2), np.float32),
                                              ("packed", 32, np.uint64), ("lo", 32, np.uint32),
                                              ("hi", 32, np.uint32), ("bits", 32, np.uint32),
                                              ("mx", 32, np.float32), ("upk", 32, np.uint64)]}
    res = _run("fast_paths.py", {"x": x, "u": u, **outs})
    assert res.verdict == "clean"
    o = res.outputs
    with np.errstate(all="ignore"):
        for name, flags in (("e", frozenset({"ftz"})), ("f", frozenset())):
            src = FLT.ftz(x) if flags else x
            want = FLT.arith_result(np.exp2(src.astype(np.float64)), None, "float32", "rn", flags)
            assert np.array_equal(o[name].view(np.uint32), want.view(np.uint32)), name
    assert np.array_equal(o["packed"], x.view(np.uint64).reshape(-1))
    assert np.array_equal(o["lo"], (u & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    assert np.array_equal(o["hi"], (u >> np.uint64(32)).astype(np.uint32))
    assert np.array_equal(o["bits"], x[:, 0].view(np.uint32))
    assert (o["upk"] == np.array([-2.5, 1e-45], np.float32).view(np.uint64)[0]).all()
    want_mx = FLT.canonical_nan(np.fmax(x[:, 0], x[:, 1]))
    assert np.array_equal(o["mx"].view(np.uint32), want_mx.view(np.uint32))
