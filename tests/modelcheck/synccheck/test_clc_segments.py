"""Synccheck checks cluster launch control kernels by segments (synccheck/segments.py): the runs of a few answer
sequences that together hold every segment of tiles one cluster can do.  Differential: the same verdict and
findings as every answer sequence explored (`clc_segments=False`, a bound large enough), on manifest kernels and
on fixtures with a bug in one segment shape only (a failing sequence may be another than the depth-first search's
first: then it is checked to be one by replaying it); a kernel whose clusters talk through global memory falls back
to every sequence, and says why."""
from __future__ import annotations

import importlib
import itertools
from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck.synccheck import segments, snapshots
from tests.manifest import KERNELS

sc = importlib.import_module("modelcheck.synccheck")       # the package (the facade has a function of the name)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "synccheck"
SHAPE = FIXTURES / "clc_segment_shape.py"
FLAG = FIXTURES / "clc_global_flag.py"
SKIP = FIXTURES / "clc_skip_handoff.py"
COUNT = KERNELS / "clc_consumer_count.py"
ALL = 1 << 12       # a bound on answer sequences no case here reaches


def _inputs(path, consts):
    n = consts.get("NUM_TILES", {SHAPE: 5, SKIP: 4, FLAG: 4, COUNT: 3}[path])
    out = {"out": np.zeros(n, np.int32)}
    if path == FLAG:
        out["flag"] = np.zeros(1, np.int32)
    return out


def _check(path, consts, **kw):
    return sc.check(modelcheck.load(path, **consts).func, _inputs(path, consts), **kw)


CASES = [
    (SHAPE, {}),                                    # the cluster of tile 1 hangs when it did tiles 1..3
    (SHAPE, {"BAD_START": 3, "BAD_LEN": 1}),        # tile 3 alone
    (SHAPE, {"BAD_START": 0, "BAD_LEN": 5}),        # the default run's one segment
    (SHAPE, {"BAD_START": -1}),                     # clean: 16 sequences
    (SKIP, {}),
    (SKIP, {"SKIP_AFTER": 0}),
    (FLAG, {}),                                     # clusters talk: fall back
    (FLAG, {"BAD_PREV": -5}),
    (COUNT, {}),
    (COUNT, {"COUNTED": 1}),
]


@pytest.mark.parametrize("path,consts", CASES, ids=lambda x: x.stem if isinstance(x, Path) else str(x))
def test_segments_give_what_every_sequence_gives(path, consts):
    seg = _check(path, consts, max_clc_paths=ALL)
    every = _check(path, consts, max_clc_paths=ALL, clc_segments=False)
    assert seg.verdict == every.verdict
    assert [f.kind for f in seg.findings] == [f.kind for f in every.findings]
    if [f.details.get("clc_answers") for f in seg.findings] == [f.details.get("clc_answers") for f in every.findings]:
        assert [(f.kind, f.message) for f in seg.findings] == [(f.kind, f.message) for f in every.findings]
    if seg.verdict == "error":
        # the segment search's witness is a real failing sequence: replay follows its answers into the hang
        f = next(f for f in seg.findings if f.kind == "deadlock")
        r = modelcheck.replay(modelcheck.load(path, **consts).func, _inputs(path, consts), f)
        assert r.default.termination == "error"


def test_a_clean_kernel_is_covered_by_fewer_runs():
    res = _check(SHAPE, {"BAD_START": -1})
    assert res.verdict == "clean"
    st = res.stats["clc_segments"]
    assert st == {"outcome": "covered", "tiles": 5, "segments": 15, "sequences": 16, "runs": res.stats["clc_paths"]}
    assert res.stats["clc_paths"] < 16


def test_more_sequences_than_the_bound_are_covered_by_segments():
    """8 tiles: 128 answer sequences, over the default bound of 64 (flex attention's case); 36 segments."""
    consts = {"NUM_TILES": 8, "BAD_START": -1}
    every = _check(SHAPE, consts, clc_segments=False)
    assert every.verdict == "incomplete" and every.findings[0].details["resource"] == "clc_paths"
    seg = _check(SHAPE, consts)
    assert seg.verdict == "clean" and seg.stats["clc_segments"]["outcome"] == "covered"
    assert seg.stats["clc_paths"] <= 64
    bug = _check(SHAPE, {"NUM_TILES": 8, "BAD_START": 5, "BAD_LEN": 2})
    assert [f.kind for f in bug.findings] == ["deadlock"]
    answers = bug.findings[0].details["clc_answers"]
    # the failing sequence holds the segment 5..6: a cut before tile 5, none before 6, a cut before 7
    assert answers[4] is False and answers[5] is True and answers[6] is False


def test_clusters_that_talk_through_global_memory_fall_back():
    res = _check(FLAG, {"BAD_PREV": -5})
    assert res.verdict == "clean" and res.stats["clc_paths"] == 8       # every sequence
    why = res.stats["clc_segments"]["outcome"]
    assert "reads flag byte 0" in why and "writes" in why


def test_more_than_one_resident_cluster_falls_back():
    res = _check(SHAPE, {"BAD_START": -1}, clc_resident=2)
    assert "clc_segments" not in res.stats
    assert res.verdict == _check(SHAPE, {"BAD_START": -1}, clc_resident=2, clc_segments=False).verdict


def test_the_bound_on_runs_still_holds():
    # 5 tiles: a plan needs 7 runs at least (this one 9); under 7 the depth-first search runs, to its bound
    res = _check(SHAPE, {"BAD_START": -1}, max_clc_paths=3)
    assert res.verdict == "incomplete" and res.findings[0].details["resource"] == "clc_paths"
    assert "need more than the bound of 3 runs" in res.stats["clc_segments"]["outcome"]
    assert res.stats["clc_paths"] == 3
    res = _check(SHAPE, {"BAD_START": -1}, max_clc_paths=8)
    assert res.verdict == "incomplete" and res.findings[0].details["resource"] == "clc_paths"
    assert res.stats["clc_segments"]["outcome"] == "truncated"


@pytest.mark.skipif(not snapshots.available(), reason="snapshots fork (Linux)")
@pytest.mark.parametrize("path,consts", [(SHAPE, {}), (SHAPE, {"BAD_START": -1}), (FLAG, {})],
                         ids=["shape-bug", "shape-clean", "flag"])
def test_segment_runs_resumed_from_snapshots_match_reruns(monkeypatch, path, consts):
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)
    resumed = _check(path, consts)
    whole = _check(path, consts, clc_snapshots=False)
    assert resumed.verdict == whole.verdict
    assert [(f.kind, f.message, f.details.get("clc_answers")) for f in resumed.findings] == \
        [(f.kind, f.message, f.details.get("clc_answers")) for f in whole.findings]
    for key in ("clc_paths", "clc_warp_instructions", "clc_segments"):
        assert resumed.stats[key] == whole.stats[key], key
    assert resumed.stats["clc_resumed"] > 0
    assert resumed.stats["clc_executed_warp_instructions"] < whole.stats["clc_executed_warp_instructions"]


@pytest.mark.parametrize("tiles", range(1, 9))
def test_the_plan_holds_every_segment(tiles):
    plan = segments.plan(tiles, {(0, tiles)})
    seen = {(0, tiles)}
    for answers in plan:
        assert len(answers) == tiles - 1
        segs, cut = [], 0
        for k, a in enumerate(answers):
            if not a:
                segs.append((cut, k + 1))
                cut = k + 1
        segs.append((cut, tiles))
        assert segments.answers_of(segs) == answers
        seen |= set(segs)
    assert seen == {(i, j) for i in range(tiles) for j in range(i + 1, tiles + 1)}
    assert len(plan) < max(2 ** (tiles - 1), 2)


def test_a_planned_run_ends_where_the_rest_was_checked():
    # 3 tiles, the default run holds (0, 3); the plan: [F, T] = (0,1)(1,3), [F, F] = (0,1)(1,2)(2,3),
    # [T, F] = (0,2)(2,3): its (2, 3) was checked by [F, F], so that run ends at tile 2
    todo = segments.plan(3, {(0, 3)})
    assert todo == [(False, True), (False, False), (True, False)]
    assert segments.cuts(3, {(0, 3)}, todo) == [3, 3, 2]
    assert segments.answers_of([(0, 2)], 3) == (True, False)
    res = _check(SHAPE, {"BAD_START": -1, "NUM_TILES": 6})
    whole = _check(SHAPE, {"BAD_START": -1, "NUM_TILES": 6}, clc_segments=False)
    per_run = whole.stats["clc_warp_instructions"] / whole.stats["clc_paths"]    # every sequence does 6 tiles
    assert res.stats["clc_warp_instructions"] < 0.85 * per_run * res.stats["clc_paths"]   # 6 of the 11 planned runs end early


def test_a_run_not_made_of_segments_is_named():
    assert segments.segments_of([(0, 1, True), (0, None, True), (2, None, False)], 3) == ([(0, 2), (2, 3)], "")
    assert segments.segments_of([(0, 1, True), (0, None, True)], 3, upto=2) == ([(0, 2)], "")
    segs, why = segments.segments_of([(0, None, True), (1, 2, True), (1, None, False)], 3)
    assert segs == [(0, 1), (1, 3)]
    segs, why = segments.segments_of([(0, 1, True)], 3)
    assert segs is None and "exited without 'none remain'" in why
    segs, why = segments.segments_of([(0, None, True), (0, None, False), (1, None, True), (2, None, False)], 3)
    assert segs is None and "not 'cancelled' k times" in why


def test_byte_intervals():
    s, e = segments._merge(np.array([8, 0, 4, 20]), np.array([12, 4, 6, 24]))
    assert s.tolist() == [0, 8, 20] and e.tolist() == [6, 12, 24]
    assert segments._overlap((s, e), (np.array([6]), np.array([8]))) is None
    assert segments._overlap((s, e), (np.array([11]), np.array([30]))) in (11, 20, 21, 22, 23)
    for a, b in itertools.product(range(0, 30, 3), range(1, 8)):
        hit = segments._overlap((s, e), (np.array([a]), np.array([a + b])))
        covered = [x for x in range(a, a + b) if any(lo <= x < hi for lo, hi in zip(s, e))]
        assert (hit is None) == (not covered) and (hit is None or hit in covered)   # a byte in both
