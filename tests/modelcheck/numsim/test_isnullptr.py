"""tir.isnullptr (TVM's builtin: `x == NULL`): a buffer parameter bound to an array is never null, so an optional
output guarded by `not T.isnullptr(buf.data)` is written; a buffer given None is refused as an input error
(the run is `incomplete`), never silently taken as a null pointer."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parent.parent.parent / "fixtures" / "numsim" / "isnullptr.py"


def _inputs(lse):
    return {"x": np.arange(32, dtype=np.float32), "lse": lse, "flag": np.full(32, 7, np.int32)}


def test_a_bound_buffer_is_not_null_and_the_guarded_store_runs():
    func = modelcheck.load(FIX).func
    res = numsim.run(func, _inputs(np.zeros(32, np.float32)))
    assert res.verdict == "clean", res.diagnostics
    assert res.outputs["flag"].tolist() == [0] * 32
    np.testing.assert_array_equal(res.outputs["lse"], np.arange(32, dtype=np.float32) * 2)
    assert ir.parse(ir.print_func(func)) == func          # the intrinsic round-trips through the printer


def test_a_buffer_given_none_is_an_input_error_not_a_null_pointer():
    report = modelcheck.synccheck(modelcheck.load(FIX).func, _inputs(None))
    assert report.verdict == "incomplete"
    assert "input 'lse' must be a NumPy array" in report.findings[0].message
