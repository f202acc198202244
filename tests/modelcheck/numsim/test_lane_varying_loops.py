"""`T.serial` loops whose start or step differs per lane (docs/semantics.md#threads-warps-and-the-language):
the warp runs them SIMT-style, each lane with its own bounds; a lane whose variable left the range sits the
remaining iterations out, so a warp-collective op in the body sees the divergence."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parent.parent.parent / "fixtures" / "numsim"


def _start(**consts):
    func = modelcheck.load(FIX / "lane_start_loop.py", **consts).func
    x = np.arange(70, dtype=np.int32) * 3
    return func, {"x": x, "sums": np.zeros(32, np.int32), "trips": np.zeros(32, np.int32)}


def test_a_lane_varying_start_gives_each_lane_its_own_iterations():
    func, inputs = _start()
    res = numsim.run(func, inputs)
    assert res.verdict == "clean", res.diagnostics
    want = [sum(3 * i for i in range(lane, 70, 32)) for lane in range(32)]
    assert res.outputs["sums"].tolist() == want
    assert res.outputs["trips"].tolist() == [len(range(lane, 70, 32)) for lane in range(32)]
    assert modelcheck.synccheck(func, inputs).verdict == "clean"
    assert modelcheck.racecheck(func, inputs).verdict == "clean"


def test_a_collective_in_the_lanes_last_iteration_is_divergent():
    func, inputs = _start(SHFL=1)
    res = numsim.run(func, inputs)
    kinds = [d.kind for d in res.diagnostics]
    assert kinds == ["warp_collective_divergence"], res.diagnostics
    assert "lanes 6..31" in res.diagnostics[0].message


def test_a_lane_varying_step():
    func = modelcheck.load(FIX / "lane_step_loop.py").func
    res = numsim.run(func, {"trips": np.zeros(32, np.int32), "last": np.zeros(32, np.int32)})
    assert res.verdict == "clean", res.diagnostics
    steps = np.arange(32) + 1
    assert res.outputs["trips"].tolist() == [len(range(0, 40, int(s))) for s in steps]
    assert res.outputs["last"].tolist() == [range(0, 40, int(s))[-1] for s in steps]
