"""`T.tvm_storage_sync`: apache-tvm's (scope, is_load, num_blocks) and TileLang's (scope, id, count)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "numsim" / "storage_sync_signatures.py"


def test_both_signatures_are_cta_barriers_that_order_shared_memory():
    func = modelcheck.load(FIXTURE).func
    inputs = {"out": np.zeros(64, np.int32)}
    res = numsim.run(func, inputs)
    assert res.termination == "completed" and res.verdict == "clean"
    lanes = np.arange(32)
    np.testing.assert_array_equal(res.outputs["out"][:32], (31 - lanes) * 3)
    np.testing.assert_array_equal(res.outputs["out"][32:], (31 - lanes) + 7)
    for report in (modelcheck.synccheck(func, inputs), modelcheck.racecheck(func, inputs)):
        assert report.verdict == "clean", report.findings
