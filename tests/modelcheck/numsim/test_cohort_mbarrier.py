"""mbarrier arrive and try_wait for a whole cohort warp (numsim/cohort_mbarrier.py): with state tokens, polls on
them and lane-varying counts, each CTA's events in order, the outputs, the verdict and the diagnostics are the
per-CTA engine's -- for a cohort that commits and one that splits (a CTA whose poll passes where its cohort's
others do not); the checkers find the same; and the per-row path is not taken for them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck.numsim import cohort_rows
from tests.modelcheck.numsim.test_cohort import _both
from tests.modelcheck.numsim.test_cohort_async import _assert_same_per_cta, _without_and_with_cohorts

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cohort"
CASES = {"handoff": {}, "skip": {"SKIP": 9}}


def _inputs():
    return {"x": np.random.default_rng(9).integers(-100, 100, 20 * 3 * 32).astype(np.int32),
            "out": np.zeros(20 * 64, np.int32)}


def _func(case: str):
    return modelcheck.load(FIX / "grid_mbarrier_token.py", **CASES[case]).func


@pytest.fixture
def per_row_mbarrier_ops(monkeypatch):
    """mbarrier closures the cohort ran per row (it should not: they have a whole-cohort path)."""
    seen: list = []
    each_row, blocking = cohort_rows.CohortWarp.each_row, cohort_rows.CohortWarp.each_row_blocking

    def spy(orig):
        def run(self, fn):
            if getattr(fn, "cohort", None) is not None and "mbarrier" in fn.__module__:
                seen.append(fn.__qualname__)
            return orig(self, fn)
        return run
    monkeypatch.setattr(cohort_rows.CohortWarp, "each_row", spy(each_row))
    monkeypatch.setattr(cohort_rows.CohortWarp, "each_row_blocking", spy(blocking))
    return seen


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_token_grids_run_the_same_in_cohorts(case, size, per_row_mbarrier_ops):
    runs = _both(_func(case), _inputs, size)
    _assert_same_per_cta(runs, async_ops=False)
    plain, stats = runs[0][0], runs[1][0].stats["cohorts"]
    assert plain.stats["polls"] == runs[1][0].stats["polls"] > 0
    assert per_row_mbarrier_ops == []
    if case == "handoff":
        assert plain.termination == "completed" and not plain.diagnostics
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == 20
        x = _inputs()["x"].reshape(20, 3, 32)
        want = sum(np.roll(x[:, i], -1, axis=1) + i for i in range(3))
        assert np.array_equal(plain.outputs["out"].reshape(20, 64), np.tile(want, 2))
    else:
        # CTA 9's consumers pass a phase the cohort's other CTAs poll for: split, and per CTA it reads the tile
        # before its producer wrote it and the handoff falls out of step (a deadlock), in both runs
        assert list(stats["split_reasons"])[0] == "the CTAs of the cohort leave a barrier at different steps"
        assert {d.kind for d in plain.diagnostics} == {"deadlock", "uninitialized_read"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_checkers_find_the_same_with_tokens_in_cohorts(case, monkeypatch):
    plain, batched = _without_and_with_cohorts(monkeypatch, modelcheck.check, _func(case), _inputs)
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]
    assert plain.verdict == ("clean" if case == "handoff" else "error")
