"""The cvt.rn.{f16,bf16}x2.f32 fast path (`ptx_convert._pack_halves`) gives the bits of the general rounding path
(`_to_float` then `_join`) on ordinary, tie, subnormal, overflowing, infinite and NaN float32 values."""
from __future__ import annotations

import numpy as np
import pytest

from modelcheck.numsim.ops import ptx_convert as PC


def _general(hi, lo, elem):
    with np.errstate(over="ignore", invalid="ignore"):
        parts = [PC._to_float(v.astype(np.float64), elem, "rn", False, False, False) for v in (lo, hi)]
    return PC._join([p.view(np.uint16) for p in parts], 16, 32)


@pytest.mark.parametrize("elem", ["bfloat16", "float16"])
def test_fast_pack_matches_the_general_rounding(elem):
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, 1.0, -1.5, 65504.0, 65520.0, 1e30, -1e38, 3.4e38, np.inf, -np.inf, np.nan,
                        1e-40, -1e-45, 5.96e-8, 2.98e-8, 1.00390625, 1.0 + 2 ** -8 + 2 ** -16], dtype=np.float32)
    bits = rng.integers(0, 2 ** 32, size=4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    for hi, lo in ((special, special[::-1]), (bits[:2000], bits[2000:])):
        with np.errstate(all="ignore"):       # what the engine runs the op closures under
            got = PC._pack_halves(hi, lo, elem)
        assert got.dtype == np.uint32
        assert np.array_equal(got, _general(hi, lo, elem))


@pytest.mark.parametrize("fmt", ["e4m3x2", "e5m2x2", "e2m1x2"])
def test_narrow_codes_of_float32_values_match_the_general_rounding(fmt):
    """to_narrow's one-cast path for float32 values gives round_float's codes (ties, saturation, NaN)."""
    from ir.ops import arith_forms as AF
    elem = AF.TYPES[fmt][1]
    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, 1.0, 1.0625, 1.125, 1.1875, 448.0, 464.0, 480.0, 1e9, -1e9, 57344.0, 61440.0,
                        2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -16, 2.0 ** -17, 0.25, 0.75, 5.0, 7.0, np.inf,
                        -np.inf, np.nan], dtype=np.float32)
    bits = rng.integers(0, 2 ** 32, size=3000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        tiny = bits * np.float32(1e-30)
    for x in (special, bits, tiny):
        with np.errstate(all="ignore"):
            x = x.astype(np.float64)
            got = PC.to_narrow(x, fmt, False)
            nan = np.isnan(x)
            y = PC.saturate_finite(x, elem)
            want = PC.round_float(np.where(nan, 0.0, y), None, elem, "rn").view(np.uint8)
            want = np.where(nan, np.uint8(0x7 if elem == "float4_e2m1fn" else PC.NAN_BITS[elem]),
                            want & np.uint8(0xF) if elem == "float4_e2m1fn" else want).astype(np.uint8)
        assert np.array_equal(got, want)
