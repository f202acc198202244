"""Independent thread scheduling: the sides of a divergent branch are separately schedulable paths."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS, load_manifest, manifest_inputs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"


def _kernel(name: str):
    entry = load_manifest()["kernels"][name]
    func = modelcheck.load(KERNELS / entry["file"]).func
    return func, manifest_inputs(func, entry, func.constant_values)


def test_halves_at_two_unaligned_barrier_sites_complete_one_generation():
    func, inputs = _kernel("divergent_bar_sync_aligned_fixed")
    res = numsim.run(func, inputs)
    assert res.termination == "completed" and res.verdict == "clean"
    x = inputs["x"]
    np.testing.assert_array_equal(res.outputs["out"][:16], x[16:] + 100)
    np.testing.assert_array_equal(res.outputs["out"][16:], x[:16] * 3)
    for report in (modelcheck.synccheck(func, inputs), modelcheck.racecheck(func, inputs)):
        assert report.verdict == "clean", report.findings


def test_the_aligned_form_at_two_sites_stays_an_error():
    func, inputs = _kernel("divergent_bar_sync_aligned")
    report = modelcheck.synccheck(func, inputs)
    assert report.verdict == "error"
    assert {f.kind for f in report.findings} == {"warp_collective_divergence"}


def test_a_divergent_spin_wait_on_the_other_half_terminates():
    func, inputs = _kernel("divergent_spin_flag")
    res = numsim.run(func, inputs)
    assert res.termination == "completed" and res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], (inputs["x"] * 7)[::-1])
    assert modelcheck.racecheck(func, inputs).verdict == "clean"


def test_a_divergent_mbarrier_wait_released_by_the_other_half():
    func, inputs = _kernel("divergent_mbarrier_handoff")
    res = numsim.run(func, inputs)
    assert res.termination == "completed" and res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"] * 2 + 1)
    assert modelcheck.synccheck(func, inputs).verdict == "clean"


def test_when_every_path_blocks_the_warp_deadlocks_naming_each_path():
    func = modelcheck.load(FIXTURES / "divergent_halves_deadlock.py").func
    res = numsim.run(func, numsim.default_inputs(func))
    [diag] = res.diagnostics_of("deadlock")
    assert "lanes 0-15" in diag.message and "lanes 16-31" in diag.message
    assert "barrier.sync" in diag.message or "bar.sync" in diag.message
    assert "mbarrier" in diag.message
    assert modelcheck.synccheck(func).verdict == "error"
