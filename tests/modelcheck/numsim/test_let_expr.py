"""NumSim evaluates `T.Let` expressions with the binding in scope, per lane (issue 14: lowered code)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "ops2"


@pytest.mark.parametrize("k, d", [(-7, 3), (5, -4), (0, 1), (100, 7)])
def test_let_floor_division_matches_numpy(k, d):
    func = ir.parse_file(FIX / "let_expr.py")
    res = numsim.run(func, {"k": k, "d": d, "out": np.zeros(32, np.int32), "twice": np.zeros(32, np.int32)})
    tx = np.arange(32)
    np.testing.assert_array_equal(res.outputs["out"], (tx + k) // d)          # lane-varying, floor semantics
    np.testing.assert_array_equal(res.outputs["twice"], (tx - k) + 2 * (tx - k + 1))
