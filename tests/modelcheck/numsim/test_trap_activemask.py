"""TVM 0.27's `T.cuda.trap_when_assert_failed` (a thread whose condition is false traps: `assertion_failed` with
the threads and the line) and `T.tvm_warp_activemask` (the lanes active with the executing one)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "ops2" / "trap_activemask.py"


def _inputs(x):
    return {"x": x, "mask": np.zeros(64, np.uint32)}


def test_passing_assertions_continue_and_activemask_follows_divergence():
    kernel = modelcheck.load(FIX)
    res = numsim.run(kernel.func, _inputs(np.arange(64, dtype=np.int32)))
    assert res.termination == "completed"
    low, high = (1 << 12) - 1, 0xFFFF_FFFF ^ ((1 << 12) - 1)
    expected = np.array([low if t % 32 < 12 else high for t in range(64)], np.uint32)
    np.testing.assert_array_equal(res.outputs["mask"], expected)
    assert modelcheck.synccheck(kernel, _inputs(np.arange(64, dtype=np.int32))).verdict == "clean"


def test_failed_assertion_is_a_trap_naming_threads_and_line():
    x = np.arange(64, dtype=np.int32)
    x[[37, 40]] = -1
    kernel = modelcheck.load(FIX)
    for check in (modelcheck.synccheck, modelcheck.racecheck):
        rep = check(kernel, _inputs(x))
        assert rep.verdict == "error"
        f = next(f for f in rep.findings if f.kind == "assertion_failed")
        assert "thread(s) 37, 40" in f.message and "traps" in f.message
    res = numsim.run(kernel.func, _inputs(x))
    assert res.diagnostics[0].span.line == 15


def test_printed_forms_round_trip():
    func = modelcheck.load(FIX).func
    assert ir.parse(ir.print_func(func)) == func
