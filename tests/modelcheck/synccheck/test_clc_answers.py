"""Synccheck explores the answers of cluster launch control requests (explorer/choices.py): a bug on the
path NumSim's default answers do not take ("none remain" while CTAs are pending) is found, with the answers
in the finding, and replay follows them."""
from __future__ import annotations

import numpy as np

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS

KERNEL = KERNELS / "clc_consumer_count.py"


def _inputs():
    return {"out": np.zeros(3, np.int32)}


def test_the_default_answers_hide_the_bug():
    res = numsim.run(modelcheck.load(KERNEL, COUNTED=1).func, _inputs())
    assert res.termination == "completed" and res.stats["clc"]["choices"] == [True, True]


def test_a_request_failing_early_hangs_the_counting_consumer():
    report = modelcheck.synccheck(modelcheck.load(KERNEL, COUNTED=1), _inputs())
    assert [f.kind for f in report.findings] == ["deadlock"]
    f = report.findings[0]
    assert f.details["clc_answers"] == [False] and "none remain" in f.message
    assert report.stats["clc_paths"] == 2        # the default run, then the first alternative fails
    r = modelcheck.replay(modelcheck.load(KERNEL, COUNTED=1).func, _inputs(), f)
    assert r.default.termination == "error"      # replay runs with the finding's answers


def test_the_fix_is_clean_on_every_answer_sequence():
    report = modelcheck.synccheck(modelcheck.load(KERNEL), _inputs())
    assert report.verdict == "clean", report.format()
    # 2 pending CTAs: cancel or not at each request while one is pending = 4 sequences
    assert report.stats["clc_paths"] == 4 and report.stats["clc_choice_points"] == 2
    assert "4 answer sequence(s) of the cluster launch control requests" in report.format()


def test_the_bound_on_answer_sequences_is_reported_incomplete():
    report = modelcheck.synccheck(modelcheck.load(KERNEL), _inputs(), max_clc_paths=2)
    assert [f.kind for f in report.findings] == ["analysis_incomplete"]
    assert report.findings[0].details["resource"] == "clc_paths" and report.verdict == "incomplete"


def test_the_2cta_gemm_is_clean_on_every_answer_sequence():
    from tests.modelcheck.numsim.ops.test_pair_clc import _gemm
    kernel, _, inputs = _gemm("gemm_2cta_clc")
    report = modelcheck.synccheck(kernel, inputs)
    assert report.verdict == "clean" and report.stats["clc_paths"] == 4


def test_time_running_out_on_an_answer_sequence_names_the_sequences_run(monkeypatch):
    """The budget is one for the whole check: an answer sequence that gets only what the earlier runs left and
    stops at it is reported as the CLC exploration out of time (with how many sequences were run whole), not as
    "the run took more than <the remainder> s"."""
    import importlib
    from modelcheck.common import findings as F
    sc = importlib.import_module("modelcheck.synccheck")      # the package (the facade has a function of the name)
    real, alternatives = sc._one_path, []

    def short_of_time(func, inputs, answers, *args, **kw):
        a, found, stats, v = real(func, inputs, answers, *args, **kw)
        if answers:
            alternatives.append(answers)
            if len(alternatives) == 2:         # the second alternative sequence ran out of the time left
                found = found + [F.make("synccheck", "analysis_incomplete", "the run took more than 0.5 s",
                                        {"reason": "resource_limit", "limit": "seconds"})]
        return a, found, stats, v

    monkeypatch.setattr(sc, "_one_path", short_of_time)
    # whole reruns: each answer sequence goes through _one_path in this process (a resumed snapshot would not)
    report = modelcheck.synccheck(modelcheck.load(KERNEL), _inputs(), clc_snapshots=False)
    assert [f.kind for f in report.findings] == ["analysis_incomplete"]
    f = report.findings[0]
    assert f.details["resource"] == "clc_paths" and "out of time" in f.message
    assert f.details["runs"] == 2 and "the default run and 1 other answer sequence(s)" in f.message
