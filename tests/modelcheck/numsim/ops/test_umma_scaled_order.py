"""Block-scaled MMA products (ops/umma.py `_scaled`): when every summation order gives the same exact sum
(`order_free`), the four lane quarters' products are one matrix product; its bits equal the per-quarter ones."""
from __future__ import annotations

from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from modelcheck.numsim import narrow
from modelcheck.numsim.ops import umma
from modelcheck.numsim.ops.umma import _scaled, order_free

E4M3, E5M2, E2M1 = "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"


def _case(rng, dtype, n=96, kdim=32, nan=False, scale_lo=100, scale_hi=150):
    t = narrow.element_type(dtype)
    codes = np.arange(256 if np.dtype(t).itemsize == 1 and dtype != E2M1 else 16, dtype=np.uint8)
    vals = codes.view(t).astype(np.float64) if dtype != E2M1 else codes.astype(np.uint8).view(t).astype(np.float64)
    finite = vals[np.isfinite(vals)]
    a, b = rng.choice(finite, (128, kdim)), rng.choice(finite, (n, kdim))
    if nan:
        a[5, 3] = np.nan
    cells = np.zeros((128, 512), np.uint32)
    cells[np.arange(128), 8 + np.arange(128) // 32] = rng.integers(scale_lo, scale_hi, 128)    # A's factors
    lanes = 32 * np.arange(4)[:, None] + np.arange(n)[None, :] % 32
    cells[lanes, 16 + np.arange(n)[None, :] // 32] = rng.integers(scale_lo, scale_hi, n)[None, :]    # B's, alike
    tm = SimpleNamespace(cells=cells)
    eng = SimpleNamespace(tracing=False, stats={"accesses": 0})
    sf = (kdim, "float8_e8m0fnu", 0, 0, (8, None), (16, None))
    return eng, tm, sf, a, b


@pytest.mark.parametrize("dtype, nan", [(E4M3, False), (E4M3, True), (E5M2, False), (E2M1, False)])
def test_one_product_has_the_quarters_bits(monkeypatch, dtype, nan):
    calls = []
    monkeypatch.setattr(umma, "product", lambda x, y: calls.append(1) or x @ y.T)
    rng = np.random.default_rng(11)
    for _ in range(20):
        eng, tm, sf, a, b = _case(rng, dtype, nan=nan)
        quarters = _scaled(eng, None, tm, sf, 128, b.shape[0], 32, a, b)
        joined = _scaled(eng, None, tm, sf, 128, b.shape[0], 32, a, b, (dtype, dtype))
        assert quarters.view(np.uint64).tolist() == joined.view(np.uint64).tolist()
    assert order_free(dtype, dtype, "float8_e8m0fnu", 32, 1) == (dtype != E5M2)
    assert len(calls) == (20 if dtype != E5M2 and not nan else 0)     # a NaN operand: the quarters, as before


def test_order_free_needs_power_of_two_factors_one_per_slab():
    assert order_free(E4M3, E4M3, "float8_e8m0fnu", 32, 1)
    assert not order_free(E4M3, E4M3, "float8_e4m3fn", 32, 1)       # UE4M3 factors are not powers of two
    assert not order_free(E4M3, E4M3, "float8_e8m0fnu", 32, 2)      # factors differ along the row
    assert not order_free(E5M2, E4M3, "float8_e8m0fnu", 32, 1)
    assert ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).smallest_subnormal == 2.0 ** -9
