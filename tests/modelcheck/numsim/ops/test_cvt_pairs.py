"""Packed narrow conversions (both halves in one elementwise call), the exact widening cvt.f32.bf16, an f32x2 fma
with uniform operands (one float64 rounding where that is exact) and mov.b64 packs of a lane vector with a uniform
register against the general per-half route, bit for bit, on random and edge values
(tests/fixtures/ptx_math/narrow_pairs.py)."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.ops import ptx_convert as CV
from modelcheck.numsim.ops import float_arith as FLT

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "ptx_math" / "narrow_pairs.py"
_EDGES = [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 448.0, 449.0, 464.0, -480.0, 57344.0, 61440.0, 6.0, 5.0, 0.25,
          -0.2, 2.0 ** -127, 2.0 ** 127, 3.0e38, -3.0e38, np.inf, -np.inf, np.nan, 1.0 + 2.0 ** -12, 0.75]
_OUTS = [("e4", np.uint16), ("e5", np.uint16), ("e2", np.uint8), ("ue", np.uint16), ("uz", np.uint16),
         ("wide", np.float32)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("s", [1.5, 1.0 + 2.0 ** -12, -3.0e38, 2.0 ** -70])
def test_pair_widen_and_fma_fast_paths_match_the_general_route(seed, s):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((32, 2)) * 2.0 ** rng.integers(-8, 12, (32, 2))).astype(np.float32)
    if seed:
        flat = x.reshape(-1)
        flat[rng.permutation(64)[:len(_EDGES)]] = np.array(_EDGES, np.float32)
    h = x[:, ::-1].copy()[:, 0].astype(ml_dtypes.bfloat16)
    outs = {n: np.zeros(32, d) for n, d in _OUTS}
    res = numsim.run(modelcheck.load(FIX).func, {"x": x, "h": h, "s": np.float32(s), **outs,
                                                 "fm": np.zeros((32, 2), np.float32),
                                                 "mix": np.zeros((32, 2), np.uint64)})
    assert res.verdict == "clean"
    o = res.outputs
    lo, hi = x[:, 0].astype(np.float64), x[:, 1].astype(np.float64)
    for name, fmt in (("e4", "e4m3x2"), ("e5", "e5m2x2"), ("e2", "e2m1x2")):
        want = CV._join([CV.to_narrow(lo, fmt, False), CV.to_narrow(hi, fmt, False)], 4 if fmt == "e2m1x2" else 8,
                        8 if fmt == "e2m1x2" else 16)
        assert np.array_equal(o[name], want), name
    for name, mode in (("ue", "rp"), ("uz", "rz")):
        want = CV._join([CV.to_ue8m0(lo, mode, True), CV.to_ue8m0(hi, mode, True)], 8, 16)
        assert np.array_equal(o[name], want), name
    with np.errstate(all="ignore"):
        wide = CV._to_float(h.astype(np.float64), "float32", "rn", False, False, True)
        assert np.array_equal(o["wide"].view(np.uint32), wide.view(np.uint32))
        s64 = np.float64(np.float32(s))
        p, err = FLT.two_sum(x.astype(np.float64) * s64, np.full(x.shape, s64))
        fm = FLT.canonical_nan(CV.round_float(p, err, "float32", "rn"))
    assert np.array_equal(o["fm"].view(np.uint32), fm.view(np.uint32))
    sb = np.uint64(np.float32(s).view(np.uint32))
    xb = x.view(np.uint32).astype(np.uint64)
    assert np.array_equal(o["mix"][:, 0], xb[:, 0] | sb << np.uint64(32))
    assert np.array_equal(o["mix"][:, 1], sb | xb[:, 1] << np.uint64(32))
