"""effect_commit_unobserved: async copies a thread never waited for before exiting."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck

ROOT = Path(__file__).resolve().parents[3]
GROUPS = ROOT / "tests" / "fixtures" / "effects" / "cp_async_groups.py"


def _kinds(report):
    return [f.kind for f in report.findings]


@pytest.mark.parametrize("check", [modelcheck.synccheck, modelcheck.racecheck])
def test_wait_group_one_leaves_the_newest_group_outstanding(check):
    report = check(modelcheck.load(GROUPS, WAIT_N=1))
    assert report.verdict == "incomplete"
    assert _kinds(report) == ["effect_commit_unobserved"]
    f = report.findings[0]
    # the second copy (line 21) is the outstanding one, in every lane of warp 0
    assert f.details["operation"]["span"].line == 21
    assert f.details["outstanding"] == 32
    assert "no cp.async.wait_group covering its group ran" in f.message


@pytest.mark.parametrize("consts", [{"WAIT_N": 0}, {"USE_WAIT_ALL": 1}, {"USE_WAIT_ALL": 1, "OPEN_COPY": 1}])
def test_covering_waits_leave_nothing_outstanding(consts):
    for check in (modelcheck.synccheck, modelcheck.racecheck):
        report = check(modelcheck.load(GROUPS, **consts))
        assert report.verdict == "clean", report.format()


def test_a_copy_never_committed_is_outstanding_even_after_wait_group_zero():
    report = modelcheck.racecheck(modelcheck.load(GROUPS, WAIT_N=0, OPEN_COPY=1))
    assert _kinds(report) == ["effect_commit_unobserved"]
    assert report.findings[0].details["operation"]["span"].line == 24
    assert "no cp.async.commit_group put it in a group" in report.findings[0].message


def test_bulk_store_without_wait_read_is_incomplete_and_its_twin_clean():
    bad = modelcheck.racecheck(modelcheck.load(ROOT / "kernels" / "bulk_store_exit_unwaited.py"))
    assert bad.verdict == "incomplete" and _kinds(bad) == ["effect_commit_unobserved"]
    assert bad.findings[0].details["family"] == "bulk"
    good = modelcheck.racecheck(modelcheck.load(ROOT / "kernels" / "bulk_store_exit_unwaited_fixed.py"))
    assert good.verdict == "clean"
