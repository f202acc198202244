"""CTA cohorts with Ampere cp.async, TMA and mbarriers (numsim/cohort_async.py), shared-memory atomics and the cohort step budget: each CTA's events (the
async copies' accesses included), in the order they happen, the outputs, the verdict and the diagnostics are the
per-CTA engine's -- for cohorts that commit, that split (a CTA whose wait_group passes where the others block)
and that race with an async copy; the checkers find the same.  Shared atomics run per CTA row on its pool: the
old values they return (which depend on the order of the CTA's lanes and warps) are the per-CTA run's."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import cohort
from tests.modelcheck.numsim.test_cohort import _assert_same, _both, _diagnostics, _events, _per_cta

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cohort"


def _inputs(ctas: int = 20, chunks: int = 3):
    def make():
        x = np.random.default_rng(5).integers(-100, 100, ctas * chunks * 256).astype(np.int32)
        return {"x": x, "out": np.zeros(ctas * 64, np.int32)}
    return make


CASES = {"double_buffer": {}, "skip": {"SKIP": 9}, "race": {"RACE": 1}}


def _func(case: str):
    return modelcheck.load(FIX / "grid_cp_async.py", **CASES[case]).func


def _actors_by_order(per_cta: dict) -> dict:
    """Async operation ids (an access's actor) -> their order of first appearance in the CTA: the ids are drawn
    in issue order over the whole launch, which cohorts change; they only name an operation."""
    out = {}
    for cta, evs in per_cta.items():
        ids: dict = {}
        out[cta] = [e[:-1] + (ids.setdefault(e[-1], len(ids)),) if e[0] == "access" and e[-1] != -1 else e
                    for e in evs]
    return out


def _assert_same_per_cta(runs, async_ops: bool = True) -> None:
    (a, ta), (b, tb) = runs
    assert (a.termination, a.verdict) == (b.termination, b.verdict)
    assert _diagnostics(a) == _diagnostics(b)
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name]), name
    ea, eb = _actors_by_order(_per_cta(_events(ta))), _actors_by_order(_per_cta(_events(tb)))
    assert ea == eb
    if async_ops:
        assert any(e[-1] != -1 for e in ea[0] if e[0] == "access")    # the async copies are in the streams


def _without_and_with_cohorts(monkeypatch, checker, func, inputs):
    """`checker`'s reports on `func` per CTA and with cohorts of 7 (the checkers' Engine patched to that size)."""
    base = numsim.Engine
    reports = []
    for k in (0, 7):
        class Sized(base):
            def __init__(self, *args, k=k, **kwargs):
                kwargs["cohorts"] = k
                super().__init__(*args, **kwargs)
        monkeypatch.setattr(numsim, "Engine", Sized)
        reports.append(checker(func, inputs()))
    return reports


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_cp_async_grids_run_the_same_in_cohorts(case, size):
    runs = _both(_func(case), _inputs(), size)
    _assert_same_per_cta(runs)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert plain.termination == "completed"
    assert plain.stats["async_ops"] == runs[1][0].stats["async_ops"] > 0
    if case == "skip":
        # CTA 9 issues no copy of chunk 0: its wait_group 1 passes while its cohort's other CTAs block
        assert stats["split"] == 1
        assert list(stats["split_reasons"]) == ["the CTAs of the cohort leave a barrier at different steps"]
        assert plain.diagnostics_of("uninitialized_read")          # it reads stage 0, which no copy wrote
    else:
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == plain.stats["ctas"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_checkers_find_the_same_with_cp_async_in_cohorts(case, monkeypatch):
    func = _func(case)
    base = numsim.Engine

    class Cohorts(base):
        def __init__(self, *args, **kwargs):
            kwargs["cohorts"] = 7
            super().__init__(*args, **kwargs)

    class PerCta(base):
        def __init__(self, *args, **kwargs):
            kwargs["cohorts"] = 0
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(numsim, "Engine", PerCta)
    plain = modelcheck.check(func, _inputs()())
    monkeypatch.setattr(numsim, "Engine", Cohorts)
    batched = modelcheck.check(func, _inputs()())
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    kinds = {f.kind for f in plain.findings}
    if case == "race":
        assert "data_race" in kinds
    elif case == "double_buffer":
        assert plain.verdict == "clean"


def test_a_cohort_step_is_one_step_of_the_budget(monkeypatch):
    """The step budget counts what the run costs: one step per cohort step; the stats count every warp's."""
    monkeypatch.setattr(numsim.budget, "CHECK_EVERY", 64)     # look at the budget often on this small grid
    func = _func("double_buffer")
    plain = numsim.Engine(func, cohorts=0).run(_inputs()())
    total = plain.stats["warp_instructions"]
    short = numsim.Engine(func, cohorts=0, max_steps=total // 2, unsupported="incomplete").run(_inputs()())
    assert short.termination == "incomplete"
    batched = numsim.Engine(func, cohorts=20, max_steps=total // 2).run(_inputs()())
    assert batched.termination == "completed"
    assert batched.stats["warp_instructions"] == total


def _atomic_inputs():
    return {"x": np.random.default_rng(7).integers(0, 1000, 20 * 64).astype(np.int32),
            "old": np.zeros(20 * 64, np.uint32), "hist": np.zeros(20 * 8, np.uint32)}


@pytest.mark.parametrize("race", [0, 1])
@pytest.mark.parametrize("size", [2, 7, 64])
def test_shared_atomics_run_per_row_in_cohorts(race, size):
    func = modelcheck.load(FIX / "grid_smem_atomic.py", RACE=race).func
    runs = _both(func, _atomic_inputs, size)
    _assert_same(runs, per_cta=True)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert stats["split"] == 0 and stats["ctas_in_cohorts"] == plain.stats["ctas"] == 20
    assert plain.outputs["hist"].reshape(20, 8).sum(axis=1).tolist() == [64] * 20 or race


def test_racecheck_finds_the_shared_atomic_race_in_cohorts(monkeypatch):
    func = modelcheck.load(FIX / "grid_smem_atomic.py", RACE=1).func
    plain, batched = _without_and_with_cohorts(monkeypatch, modelcheck.racecheck, func, _atomic_inputs)
    assert [(f.id, f.kind, f.message) for f in batched.findings] == [(f.id, f.kind, f.message) for f in plain.findings]
    assert "data_race" in {f.kind for f in plain.findings}


def _mbar_inputs():
    return {"x": np.random.default_rng(9).integers(-100, 100, 20 * 3 * 32).astype(np.int32),
            "out": np.zeros(20 * 32, np.int32)}


MBAR = {"handoff": {}, "skip": {"SKIP": 9}, "effect": {"EFFECT": 12}}


@pytest.mark.parametrize("case", sorted(MBAR))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_mbarrier_grids_run_the_same_in_cohorts(case, size):
    func = modelcheck.load(FIX / "grid_mbarrier.py", **MBAR[case]).func
    runs = _both(func, _mbar_inputs, size)
    _assert_same_per_cta(runs, async_ops=False)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert plain.stats["polls"] == runs[1][0].stats["polls"] > 0
    if case == "handoff":
        assert plain.termination == "completed" and not plain.diagnostics
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == 20
    elif case == "skip":
        # CTA 9's consumer passes a phase its cohort's other CTAs poll for: split; it reads the tile before its
        # producer wrote it, and its handoff falls out of step (a deadlock, reported as per CTA)
        assert list(stats["split_reasons"])[0] == "the CTAs of the cohort leave a barrier at different steps"
        assert {d.kind for d in plain.diagnostics} == {"deadlock", "uninitialized_read"}
    else:
        assert plain.termination == "completed"
        assert stats["split"] == 1 and list(stats["split_reasons"]) == [
            "some CTAs of the cohort made side effects since their last poll and others did not"]


@pytest.mark.parametrize("case", ["handoff", "skip"])
def test_checkers_find_the_same_with_mbarriers_in_cohorts(case, monkeypatch):
    func = modelcheck.load(FIX / "grid_mbarrier.py", **MBAR[case]).func
    plain, batched = _without_and_with_cohorts(monkeypatch, modelcheck.check, func, _mbar_inputs)
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    assert plain.verdict == ("clean" if case == "handoff" else "error")


def _tma_inputs():
    return {"x": np.random.default_rng(11).standard_normal((160, 32)).astype(np.float32),
            "out": np.zeros((160, 32), np.float32)}


TMA = {"load_store": {}, "race": {"RACE": 1}, "overlap": {"OVERLAP": 5}}


@pytest.mark.parametrize("case", sorted(TMA))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_tma_grids_run_the_same_in_cohorts(case, size):
    func = modelcheck.load(FIX / "grid_tma.py", **TMA[case]).func
    runs = _both(func, _tma_inputs, size)
    _assert_same_per_cta(runs)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert plain.termination == "completed"
    if case == "load_store":
        assert np.array_equal(plain.outputs["out"], 2 * _tma_inputs()["x"] + 1)
    if case == "overlap" and size > 2:
        # CTA 5 stores over CTA 6's rows: their cohort rolls back (the TMA stores too) and runs per CTA
        assert stats["split"] == 1
        assert list(stats["split_reasons"]) == ["two CTAs of the cohort touch the same global bytes, one writing"]
    else:
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == 20


@pytest.mark.parametrize("case", sorted(TMA))
def test_checkers_find_the_same_with_tma_in_cohorts(case, monkeypatch):
    func = modelcheck.load(FIX / "grid_tma.py", **TMA[case]).func
    plain, batched = _without_and_with_cohorts(monkeypatch, modelcheck.check, func, _tma_inputs)
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    kinds = {f.kind for f in plain.findings}
    if case == "load_store":
        assert plain.verdict == "clean"
    else:
        assert "data_race" in kinds         # the tile read racing the TMA load; two CTAs' TMA stores


def _lanes_inputs():
    return {"x": np.random.default_rng(3).integers(-100, 100, 20 * 256).astype(np.int32),
            "out": np.zeros(20 * 64, np.int32)}


# whole: some lanes of a warp copy (the whole-cohort path); zfill: zero-filled copies, overlap: two lanes' copies
# writing the same bytes (both per row, lane by lane)
LANES = {"whole": {}, "zfill": {"ZFILL": 1}, "overlap": {"OVERLAP": 5}}


@pytest.mark.parametrize("case", sorted(LANES))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_cp_async_of_a_whole_cohort_warp_is_each_ctas(case, size, monkeypatch):
    from modelcheck.numsim import cohort_rows
    per_row: list = []
    waits: list = []
    each_row, blocking = cohort_rows.CohortWarp.each_row, cohort_rows.CohortWarp.each_row_blocking

    def spy(self, fn):
        if fn.__qualname__.startswith("_cp_async."):
            per_row.append(fn)
        return each_row(self, fn)

    def spy_blocking(self, fn):
        if fn.__qualname__.startswith("_wait_group."):
            waits.append(fn)
        return blocking(self, fn)
    monkeypatch.setattr(cohort_rows.CohortWarp, "each_row", spy)
    monkeypatch.setattr(cohort_rows.CohortWarp, "each_row_blocking", spy_blocking)
    func = modelcheck.load(FIX / "grid_cp_async_lanes.py", **LANES[case]).func
    runs = _both(func, _lanes_inputs, size)
    _assert_same_per_cta(runs)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert plain.termination == "completed" and plain.stats["async_ops"] == runs[1][0].stats["async_ops"] == 800
    assert stats["split"] == 0 and stats["ctas_in_cohorts"] == 20
    assert bool(per_row) == (case != "whole")
    assert waits == []              # wait_group for the whole cohort warp (cohort_async.wait_group)
    x = _lanes_inputs()["x"].reshape(20, 64, 4)
    if case == "zfill":
        x[:, :, 2:] = 0
    x[:, 40:] = 0
    if case != "overlap":
        assert np.array_equal(plain.outputs["out"].reshape(20, 64), np.roll(x.sum(axis=2), -3, axis=1))


@pytest.mark.parametrize("case", sorted(LANES))
def test_checkers_find_the_same_with_whole_cohort_cp_async(case, monkeypatch):
    func = modelcheck.load(FIX / "grid_cp_async_lanes.py", **LANES[case]).func
    plain, batched = _without_and_with_cohorts(monkeypatch, modelcheck.check, func, _lanes_inputs)
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    assert plain.verdict == ("error" if case == "overlap" else "clean")
    if case == "overlap":
        assert "data_race" in {f.kind for f in plain.findings}      # the two copies into one piece


@pytest.mark.parametrize("case", sorted(CASES))
def test_untraced_commit_counts_the_accesses_as_the_engine_does(case, monkeypatch):
    """With no observer taking access records, a cohort's commit counts them itself (`cohort._counts_only`):
    the counts `EngineState.access` gives them, the warps' own accesses and the async copies' alike."""
    func = _func(case)
    runs = []
    for counts_only in (True, False):
        monkeypatch.setattr(cohort, "_counts_only", lambda eng, c=counts_only: c and not eng.tracing)
        runs.append(numsim.Engine(func, cohorts=7).run(_inputs()()))
    assert runs[0].stats["cohorts"]["ctas_in_cohorts"] > 0
    for key in ("accesses", "lane_accesses", "async_ops", "sync_events"):
        assert runs[0].stats[key] == runs[1].stats[key] > 0, key
