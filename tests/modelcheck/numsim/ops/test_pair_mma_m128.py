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


M128_IDESC = 16 + 128 + 1024 + (32 // 8) * 131072 + (128 // 16) * 16777216


def test_m128_with_a_in_tmem_reads_each_lane_halfs_own_copy():
    # tests/fixtures/ops2/pair_mma_ts.py at M = 128: A = 1 (even CTA) / 2 (odd) on lanes 0-63, and on lanes 64-127
    # the kernel stores 3 / 4 instead of duplicating; B all ones, K = 16: D = 16 x (the A its lane half reads)
    ts = FIX.parent / "pair_mma_ts.py"
    text = ts.read_text()
    old = "T.Select(cx == 0, T.uint32(0x3F803F80), T.uint32(0x40004000))"
    assert old in text
    new = ("T.Select(tx < 64, T.Select(cx == 0, T.uint32(0x3F803F80), T.uint32(0x40004000)), "
           "T.Select(cx == 0, T.uint32(0x40404040), T.uint32(0x40804080)))")
    func = modelcheck.parse(text.replace(old, new).replace("IDESC = 16 + 128 + 1024 + (32 // 8) * 131072 + "
                                                           "(256 // 16) * 16777216", f"IDESC = {M128_IDESC}"),
                            path=str(ts))
    res = numsim.run(func, {"out": np.zeros((2, 128), np.float32)})
    assert res.termination == "completed" and res.diagnostics == ()
    out = res.outputs["out"]
    np.testing.assert_array_equal(out[0], np.where(np.arange(128) < 64, 16, 48))
    np.testing.assert_array_equal(out[1], np.where(np.arange(128) < 64, 32, 64))


def test_m128_block_scaled_stays_incomplete_naming_it():
    scaled = FIX.parent / "pair_mma_scaled.py"
    text = scaled.read_text()
    assert "(256 // 16)" in text or "256 >> 4" in text, "the fixture's M field moved"
    func = modelcheck.parse(text.replace("(256 // 16)", "(128 // 16)").replace("256 >> 4", "128 >> 4"),
                            path=str(scaled))
    with pytest.raises(numsim.UnsupportedTIRxError, match="M = 128 with block scaling"):
        numsim.run(func, numsim.default_inputs(func, None))
