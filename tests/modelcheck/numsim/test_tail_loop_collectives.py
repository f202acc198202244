"""`.sync` collectives wait only for non-exited member lanes: lanes that left a loop ending the kernel."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"


def _inputs():
    return {"x": np.arange(64, dtype=np.int32), "out": np.zeros(64, np.int32)}


def test_a_shuffle_among_the_lanes_still_in_a_tail_loop_is_defined():
    func = modelcheck.load(FIXTURES / "tail_loop_shuffle.py", MODE=0).func
    res = numsim.run(func, _inputs())
    assert res.termination == "completed" and res.verdict == "clean"
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(res.outputs["out"][:12], np.repeat(x.sum(axis=1), 4))
    assert not res.outputs["out"][12:].any()
    for report in (modelcheck.synccheck(func, _inputs()), modelcheck.racecheck(func, _inputs())):
        assert report.verdict == "clean", report.findings


@pytest.mark.parametrize("name, consts, text", [("tail_loop_shuffle.py", {"MODE": 1}, "which have exited"),
                                                ("tail_loop_shuffle_not_last.py", {}, "lanes 12..31")])
def test_reading_an_exited_lane_or_leaving_a_loop_that_is_not_last_stays_divergence(name, consts, text):
    func = modelcheck.load(FIXTURES / name, **consts).func
    report = modelcheck.synccheck(func, _inputs())
    assert [f.kind for f in report.findings] == ["warp_collective_divergence"]
    assert text in report.findings[0].message
