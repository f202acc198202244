"""CTA residency (numsim/residency.py, docs/semantics.md#cta-residency): a grid larger than the GPU holds
runs in waves, each CTA's shared memory exists only while it is resident, the numbers are those of an
all-at-once run, CTAs of different waves stay unordered, and a CTA waiting for a later CTA beyond the
resident wave does not finish."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import targets
from modelcheck.numsim.columns import AccessColumns, AllocName
from modelcheck.numsim.residency import ReleasedShared

FIX = Path(__file__).parent.parent.parent / "fixtures" / "residency"
CTAS = 150


def waves_inputs():
    x = np.arange(CTAS * 32, dtype=np.int32) * 7 - 300
    return {"x": x, "out": np.zeros_like(x)}


def expected_waves(x):
    bx = np.repeat(np.arange(CTAS), 32)
    v = x * 3 + bx
    return (np.roll(v.reshape(CTAS, 32), -1, axis=1).reshape(-1) + v).astype(np.int32)


def test_resident_ctas_follow_the_per_sm_limits():
    b200 = targets.target("sm_100a")
    assert targets.resident_ctas(b200, 12, 232_448) == 148                # 227 KB + 1 KB reserved: one per SM
    assert targets.resident_ctas(b200, 4, 100 * 1024) == 2 * 148           # shared memory bounds
    assert targets.resident_ctas(b200, 32, 0) == 2 * 148                   # 64 warps per SM bound
    assert targets.resident_ctas(b200, 1, 0) == 32 * 148                   # 32 blocks per SM bound
    assert targets.resident_ctas(targets.target("sm_86"), 1, 0) == 16 * 84


def test_a_grid_beyond_one_wave_runs_in_waves_with_unchanged_numbers():
    func = modelcheck.load(FIX / "waves.py").func
    inputs = waves_inputs()
    want = expected_waves(inputs["x"])
    waves = numsim.Engine(func).run(inputs)
    assert waves.termination == "completed", waves.diagnostics
    assert waves.stats["residency"] == {"resident_clusters": 148, "cluster_ctas": 1, "peak_resident_clusters": 148,
                                        "launched_clusters": CTAS}
    at_once = numsim.Engine(func, resident_ctas=10 ** 6).run(inputs)
    assert "residency" not in at_once.stats
    few = numsim.Engine(func, resident_ctas=3).run(inputs)
    assert few.stats["residency"]["peak_resident_clusters"] == 3
    for res in (waves, at_once, few):
        np.testing.assert_array_equal(res.outputs["out"], want)


def test_shared_memory_is_charged_for_the_resident_ctas_only():
    func = modelcheck.load(FIX / "waves.py").func
    at_once = numsim.Engine(func, resident_ctas=10 ** 6, max_memory_mb=40).run(waves_inputs())
    assert at_once.termination == "incomplete"
    assert "150 CTA(s) of 1 warp(s)" in at_once.diagnostics[0].message
    few = numsim.Engine(func, resident_ctas=3, max_memory_mb=40).run(waves_inputs())
    assert few.termination == "completed", few.diagnostics


def test_ctas_of_different_waves_stay_unordered():
    # CTA 0 (first wave) and CTA 149 (second wave) write out[0]: no exit-to-start edge orders them
    report = modelcheck.racecheck(modelcheck.load(FIX / "waves_race.py").func)
    assert [f.kind for f in report.findings if f.status == "error"] == ["data_race"]
    clean = modelcheck.racecheck(modelcheck.load(FIX / "waves.py").func, waves_inputs())
    assert clean.verdict == "clean", clean.findings


def test_waiting_for_a_cta_beyond_the_resident_wave_never_finishes():
    func = modelcheck.load(FIX / "wait_on_later_cta.py").func
    inputs = {"flag": np.zeros(4, np.int32), "out": np.zeros(4, np.int32)}
    together = numsim.Engine(func).run(inputs)                  # 4 CTAs: all resident, CTA k + 2 sets the flag
    assert together.termination == "completed"
    np.testing.assert_array_equal(together.outputs["out"], [10, 11, 12, 13])
    hang = numsim.Engine(func, resident_ctas=2, max_steps=100_000).run(inputs)
    assert hang.termination == "incomplete"
    (diag,) = [d for d in hang.diagnostics if d.status == "incomplete"]
    assert diag.details["ctas_not_launched"] == 2 and "waiting for a free SM" in diag.message
    assert "0 cluster(s) had exited, none in the last" in diag.message
    # the same on the default target: 300 CTAs of 200 KB, each waiting for CTA k + 150
    big = modelcheck.load(FIX / "wait_on_later_cta.py", CTAS=300, AHEAD=150).func
    report = modelcheck.synccheck(big, max_steps=200_000)
    assert report.verdict == "incomplete"
    assert any("152 CTA(s) had not started" in f.message and "kernel hangs on hardware" in f.message
               for f in report.findings)


def test_a_cta_blocked_while_others_await_launch_is_a_deadlock_naming_both():
    func = modelcheck.load(FIX / "blocked_wave.py").func
    res = numsim.Engine(func, resident_ctas=1).run({"out": np.zeros(3, np.int32)})
    assert res.termination == "error"
    (dead,) = res.diagnostics_of("deadlock")
    assert "warps 1-2: await a free SM" in dead.message
    assert {b["warp"] for b in dead.details["blocked"]} == {0, 1, 2}


def test_released_shared_memory_is_not_silently_read():
    gone = ReleasedShared(7, {"_wgmma_sequence": {}})
    assert gone.__dict__["_wgmma_sequence"] == {}
    with pytest.raises(numsim.UnsupportedTIRxError, match="CTA 7's shared memory after"):
        gone.find(0x400, 4)


def test_released_allocations_leave_only_their_names_in_the_table():
    seen = []
    cols = AccessColumns([seen.append], {"accesses": 0, "lane_accesses": 0})

    class Alloc:
        space, id, name = "shared", 5, "stage"
    a = Alloc()
    cols.rows.append((1, 0, 0, 0, (), None, a, 0, 4, "write", "generic", "weak", "cta", -1))
    cols.flush()
    cols.release([a])
    assert isinstance(cols.allocs[0], AllocName) and (cols.allocs[0].space, cols.allocs[0].id,
                                                      cols.allocs[0].name) == ("shared", 5, "stage")
    assert id(a) not in cols.alloc_index
