"""cta_group::2 MMA with M = 128 (ops/umma2.py, PTX data-path Layout B): each CTA supplies 64 rows of A and N/2
rows of B and holds its 64 rows of D folded over its lanes -- row r, column c at lane r + 64 * (c >= N/2),
column c % (N/2) (CUTLASS tmem_frg_2sm "2x2" atom; apache-tvm 0.27 tmem_datapath_layout("B"))."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[3] / "fixtures" / "ops2" / "pair_mma_m128.py"
N = 32


def expected(mask0: int = 0) -> np.ndarray:
    """out[cta, lane, j] the fixture reads back: D[r, n] = (r + 1) (n + 1), r the row of all 128, folded per
    Layout B; lanes the mask disables keep TMEM's initial zeros."""
    out = np.zeros((2, 128, N // 2), np.float32)
    for cta in range(2):
        for lane in range(128):
            if cta == 0 and lane < 32 and (mask0 >> lane) & 1:
                continue
            r = cta * 64 + lane % 64
            cols = np.arange(N // 2) + (N // 2 if lane >= 64 else 0)
            out[cta, lane] = (r + 1) * (cols + 1)
    return out


def run(**consts):
    kernel = modelcheck.load(FIX, **consts)
    return kernel, numsim.run(kernel.func, {"out": np.zeros((2, 128, N // 2), np.float32)})


def test_d_halves_fold_the_columns_over_the_lane_halves():
    kernel, res = run()
    assert res.termination == "completed" and res.diagnostics == ()
    np.testing.assert_array_equal(res.outputs["out"], expected())
    assert modelcheck.synccheck(kernel).verdict == "clean"
    assert modelcheck.racecheck(kernel).verdict == "clean"


def test_disabled_output_lanes_are_tmem_lanes():
    _, res = run(MASK=0x0000FFFF)
    assert res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["out"], expected(0x0000FFFF))


def test_m128_with_a_in_tmem_stays_incomplete_naming_it():
    ts = FIX.parent / "pair_mma_ts.py"
    kernel = modelcheck.load(ts, IDESC=16 + 128 + 1024 + (32 // 8) * 131072 + (128 // 16) * 16777216)
    with pytest.raises(numsim.UnsupportedTIRxError, match="M = 128 with A in Tensor Memory"):
        numsim.run(kernel.func, {"out": np.zeros((2, 128), np.float32)})
    assert modelcheck.synccheck(kernel).verdict == "incomplete"
