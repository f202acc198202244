"""CTA cohorts with shared memory, CTA barriers and while loops (numsim/cohort_rows.py, numsim/cohort.py): each
CTA's events, in the order its warps made them, the final memory, the verdict and the diagnostics are those of
the per-CTA engine -- for cohorts that commit, that split (a CTA at another barrier call site, CTAs leaving a
while loop at different reschedule points), that deadlock, race or read shared memory never written."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modelcheck
from modelcheck import numsim
from tests.modelcheck.numsim.test_cohort import _assert_same, _both, _diagnostics

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cohort"


def _ints(n: int, seed: int, hi: int = 1000) -> np.ndarray:
    return np.random.default_rng(seed).integers(-hi, hi, n).astype(np.int32)


def _smem_sync(ctas: int = 20):
    return lambda: {"x": _ints(ctas * 96, 1, 50), "y": np.zeros(ctas * 96, np.int32),
                    "per_cta": np.zeros(ctas, np.int32)}


def _while(ctas: int = 24, seed: int = 2):
    return lambda: {"x": np.abs(_ints(ctas * 80, seed)), "out": np.zeros(ctas * 80, np.int32),
                    "per_cta": np.zeros(ctas, np.int32)}


def _skip(ctas: int = 16):
    return lambda: {"x": _ints(ctas * 64, 3), "out": np.zeros(ctas * 64, np.int32)}


def _race(ctas: int = 12):
    return lambda: {"x": _ints(ctas * 64, 4), "out": np.zeros(ctas * 64, np.int32)}


# (fixture, constants, inputs, what the cohorts must show)
CASES = {
    "smem_sync": ("grid_smem_sync", {}, _smem_sync(), "commit"),
    "while": ("grid_while", {}, _while(), "commit"),
    "while_spread": ("grid_while", {"SPREAD": 30}, _while(), "split"),
    "skip_barrier": ("grid_skip_barrier", {}, _skip(), "split"),
    "hang": ("grid_skip_barrier", {"HANG": 9}, _skip(), "deadlock"),
    "smem_race": ("grid_smem_race", {}, _race(), "commit"),
    "smem_oob": ("grid_smem_race", {"BAD": 7}, _race(), "oob"),
}


def _func(case: str):
    name, consts, _, _ = CASES[case]
    return modelcheck.load(FIX / f"{name}.py", **consts).func


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_blocking_grids_run_the_same_in_cohorts(case, size):
    _, _, inputs, expect = CASES[case]
    runs = _both(_func(case), inputs, size)
    plain, batched = runs[0][0], runs[1][0]
    if expect == "oob":
        # an error stops the per-CTA run with the resident CTAs part-way through their steps (the scheduler's
        # order); in cohorts the CTAs before the failing one have finished.  The error itself is the same.
        assert (batched.termination, batched.verdict) == (plain.termination, plain.verdict)
        assert _diagnostics(batched)[0] == _diagnostics(plain)[0]
    else:
        _assert_same(runs, per_cta=True)
    stats = batched.stats["cohorts"]
    if expect == "commit":
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == plain.stats["ctas"]
    elif expect == "split":
        assert stats["split"] > 0 and "rest_per_cta" not in stats
        assert plain.termination == "completed"
    elif expect == "oob":
        assert batched.termination == "error" and batched.diagnostics[0].kind == "oob"
        assert "rest_per_cta" in stats
    else:
        # the hanging CTA's cohort fails: the rest of the launch runs per CTA and reports the same deadlock
        assert batched.termination == "error" and [d.kind for d in batched.diagnostics] == ["deadlock"]
        assert stats["rest_per_cta"] == 16 - 9
    if case == "smem_race":
        assert plain.diagnostics_of("uninitialized_read")       # per CTA row, noted as the per-CTA run notes it


def test_a_split_names_why():
    reasons = _both(_func("skip_barrier"), _skip(), 64)[1][0].stats["cohorts"]["split_reasons"]
    assert list(reasons) == ["a CTA of the cohort does not reach a barrier with this warp (its lanes are elsewhere)"]
    reasons = _both(_func("while_spread"), _while(), 64)[1][0].stats["cohorts"]["split_reasons"]
    assert list(reasons) == ["the CTAs of the cohort reach a while loop's reschedule point at different steps"]


def test_waves_give_a_cohort_resident_slots():
    runs = _both(_func("smem_sync"), _smem_sync(), 64, resident_ctas=3)
    _assert_same(runs, per_cta=True)
    stats = runs[1][0].stats["cohorts"]
    assert stats["cohort_size"] == 3 and stats["cohorts"] == 7 and stats["split"] == 0


@pytest.mark.parametrize("case", ["smem_sync", "while", "skip_barrier", "hang", "smem_race"])
def test_checkers_find_the_same_in_cohorts(case, monkeypatch):
    func, inputs = _func(case), CASES[case][2]
    plain = modelcheck.check(func, inputs())
    base = numsim.Engine

    class Cohorts(base):
        def __init__(self, *args, **kwargs):
            kwargs["cohorts"] = 5
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(numsim, "Engine", Cohorts)
    batched = modelcheck.check(func, inputs())
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    kinds = {f.kind for f in plain.findings}
    if case == "smem_race":
        assert "data_race" in kinds and "uninitialized_read" in kinds
    if case == "hang":
        assert "deadlock" in kinds


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 30), ctas=st.integers(1, 20),
       spread=st.sampled_from([0, 1, 30]))
def test_random_while_grids_run_the_same_in_cohorts(seed, size, ctas, spread):
    func = modelcheck.load(FIX / "grid_while.py", CTAS=ctas, SPREAD=spread).func
    _assert_same(_both(func, _while(ctas, seed), size), per_cta=True)


def test_a_while_loop_polling_global_memory_the_kernel_writes_runs_per_cta():
    # CTA k spins until CTA k + 2 sets its flag: a cohort would run CTA k before CTA k + 2 could
    func = modelcheck.load(FIX.parent / "residency" / "wait_on_later_cta.py").func
    res = numsim.Engine(func, cohorts=4).run({"flag": np.zeros(4, np.int32), "out": np.zeros(4, np.int32)})
    assert res.termination == "completed"
    assert res.stats["cohorts"] == {
        "off": "a while loop reading global memory the kernel writes (it may wait for another CTA)"}
