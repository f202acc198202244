"""tcgen05.ld.red in NumSim: the loaded registers as tcgen05.ld gives them, plus the thread's min/max."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "numsim" / "tmem_ld_red.py"


def test_ld_red_reduces_each_threads_loaded_values():
    x = np.random.default_rng(11).standard_normal((32, 4)).astype(np.float32)
    x[3, 2] = np.nan
    x[5] = [-7.0, 2.0, 0.5, -0.25]
    res = numsim.run(modelcheck.load(FIX).func, {"x": x.view(np.uint32), "out": np.zeros((32, 4), np.uint32),
                                                 "back": np.zeros((32, 4), np.uint32)})
    assert res.verdict == "clean", res.diagnostics
    out, back = res.outputs["out"], res.outputs["back"]
    np.testing.assert_array_equal(back, x.view(np.uint32))                 # the loaded values themselves
    finite = [row[~np.isnan(row)] for row in x]
    np.testing.assert_array_equal(out[:, 0].view(np.float32), [r.max() for r in finite])          # .max
    np.testing.assert_array_equal(out[:, 1].view(np.float32), [np.abs(r).min() for r in finite])  # .min.abs
    want_nan = np.array([np.nan if np.isnan(row).any() else row.max() for row in x], np.float32)
    np.testing.assert_array_equal(out[:, 2].view(np.float32), want_nan)                           # .max.NaN
    np.testing.assert_array_equal(out[:, 3].view(np.int32), x.view(np.int32).min(axis=1))          # .min.s32
    assert out[5, 0].view(np.float32) == 2.0 and out[5, 1].view(np.float32) == 0.25
