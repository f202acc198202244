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
        got = PC._pack_halves(hi, lo, elem)
        assert got.dtype == np.uint32
        assert np.array_equal(got, _general(hi, lo, elem))
