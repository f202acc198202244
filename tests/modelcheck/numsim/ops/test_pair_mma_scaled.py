"""Block-scaled cta_group::2 MMA and tcgen05.cp.cta_group::2 (ops/umma2.py, ops/tcgen05.py) against numpy.

Each CTA copies its own scale-factor images into its own TMEM (the even CTA issues the copy for both); the even
CTA's half of D uses A0 with the even CTA's SFA, the odd CTA's half A1 with the odd CTA's SFA, and both halves all
64 rows of B, each scaled by the B factors in that CTA's own TMEM (docs/semantics.md#cta-pairs-cta_group2).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

from ..test_mma_narrow import decode, k_major_words, random_codes

FIX = Path(__file__).parents[3] / "fixtures" / "ops2" / "pair_mma_scaled.py"
E4M3 = "float8_e4m3fn"
UE8M0 = "float8_e8m0fnu"


def sf_image(factors: np.ndarray) -> np.ndarray:
    """The 32x128b.warpx4 source: row r, word c holds the factor of operand row 32c + r (byte 0)."""
    img = np.zeros((32, 4), np.uint32)
    for row, f in enumerate(factors):
        img[row % 32, row // 32] = int(f)
    return img.reshape(-1)


def make_inputs(seed: int = 3):
    rng = np.random.default_rng(seed)
    a = [random_codes(rng, E4M3, (128, 32)) for _ in range(2)]
    b = [random_codes(rng, E4M3, (32, 32)) for _ in range(2)]
    sfa = [rng.integers(122, 132, 128) for _ in range(2)]
    sfb = [rng.integers(122, 132, 64) for _ in range(2)]       # each CTA its own copy (they differ here)
    inputs = {"a_img": np.stack([k_major_words(x) for x in a]), "b_img": np.stack([k_major_words(x) for x in b]),
              "sfa_img": np.stack([sf_image(x) for x in sfa]), "sfb_img": np.stack([sf_image(x) for x in sfb]),
              "out": np.zeros((2, 128, 64), np.float32)}
    bmat = decode(np.vstack(b), E4M3)
    want = np.stack([((decode(a[h], E4M3) * decode(sfa[h].astype(np.uint8), UE8M0)[:, None])
                      @ (bmat * decode(sfb[h].astype(np.uint8), UE8M0)[:, None]).T).astype(np.float32)
                     for h in range(2)])
    return inputs, want


def test_pair_block_scaled_mma_matches_numpy():
    kernel = modelcheck.load(FIX)
    inputs, want = make_inputs()
    res = numsim.run(kernel.func, inputs)
    assert res.termination == "completed" and res.diagnostics == (), res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], want)


def test_pair_block_scaled_mma_is_clean():
    kernel = modelcheck.load(FIX)
    inputs, _ = make_inputs()
    assert modelcheck.synccheck(kernel, inputs).verdict == "clean"
    report = modelcheck.racecheck(kernel, inputs)
    assert report.verdict == "clean", report.format()


def test_odd_cta_late_scale_factors_race_with_the_pair_copy():
    kernel = modelcheck.load(FIX, LATE=1)
    inputs, _ = make_inputs()
    report = modelcheck.racecheck(kernel, inputs)
    assert report.verdict == "error", report.format()
    assert any(f.kind == "data_race" for f in report.findings), [f.kind for f in report.findings]


@pytest.mark.parametrize("m, field", [(64, "m")])
def test_pair_block_scaled_descriptor_m(m, field):
    kernel = modelcheck.load(FIX, IDESC=(64 // 8) * 131072 + 8388608 + (m // 16) * 16777216)
    inputs, _ = make_inputs()
    res = numsim.run(kernel.func, inputs)
    assert [d.kind for d in res.diagnostics] == ["invalid_descriptor"] and res.diagnostics[0].details["field"] == field
