"""TVM's `cuda_float22half2(dst, src)` (`*(half2*)dst = __float22half2_rn(*(float2*)src)`): two float32 registers
become two float16 registers, each rounded to nearest even."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "ops3" / "float22half2.py"


def test_pairs_are_rounded_to_nearest_even_half():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(256) * 1000).astype(np.float32)
    x[:4] = [1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 70000.0, np.nan]    # ties to even, overflow, NaN
    func = ir.parse_file(FIXTURE)
    inputs = {"x": x, "out": np.zeros(256, np.float16)}
    res = numsim.run(func, inputs)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint16)[4:], want.view(np.uint16)[4:])
    assert res.outputs["out"][0] == np.float16(1.0) and res.outputs["out"][1] == np.float16(1 + 2.0 ** -9)
    assert np.isinf(res.outputs["out"][2]) and np.isnan(res.outputs["out"][3])
    assert modelcheck.synccheck(func, inputs).verdict == "clean"
