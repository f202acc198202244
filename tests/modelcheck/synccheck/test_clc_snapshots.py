"""Answer sequences of cluster launch control requests resumed from snapshots of the run (synccheck/snapshots.py)
give exactly what whole reruns give: the same findings (ids included), the same sequences in the same order, the
same whole-run instruction counts; a lost snapshot is rerun; every process forked is reaped."""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck.synccheck import snapshots
from tests.manifest import KERNELS

pytestmark = pytest.mark.skipif(not snapshots.available(), reason="snapshots fork (Linux)")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "synccheck"
SKIP = FIXTURES / "clc_skip_handoff.py"
COUNT = KERNELS / "clc_consumer_count.py"

CASES = [
    (COUNT, {}),                                    # clean: 4 sequences
    (COUNT, {"COUNTED": 1}),                        # the first alternative hangs
    (COUNT, {"NUM_TILES": 5}),                      # clean: 16 sequences
    (SKIP, {}),                                     # the third sequence hangs ("none remain" twice)
    (SKIP, {"SKIP_AFTER": 0}),                      # clean: 8 sequences
    (SKIP, {"NUM_TILES": 5, "SKIP_AFTER": 3}),
]


def _children() -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            out |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _check(path, consts, **kw):
    n = consts.get("NUM_TILES", 4 if path == SKIP else 3)
    return modelcheck.synccheck(modelcheck.load(path, **consts), {"out": np.zeros(n, np.int32)}, **kw)


def _same(a, b) -> None:
    assert a.verdict == b.verdict
    assert [(f.id, f.kind, f.message, f.details.get("clc_answers")) for f in a.findings] == \
        [(f.id, f.kind, f.message, f.details.get("clc_answers")) for f in b.findings]
    for key in ("clc_paths", "clc_choice_points", "clc_warp_instructions"):
        assert a.stats[key] == b.stats[key], key


@pytest.mark.parametrize("path,consts", CASES, ids=lambda x: x.name if isinstance(x, Path) else str(x))
def test_resumed_sequences_match_whole_reruns(monkeypatch, path, consts):
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)     # snapshot every choice point of these small runs
    before = _children()
    resumed = _check(path, consts)
    assert _children() == before                 # every snapshot, resumed or not, was reaped
    whole = _check(path, consts, clc_snapshots=False)
    _same(resumed, whole)
    assert resumed.stats["clc_resumed"] == resumed.stats["clc_paths"] - 1     # every other sequence resumed
    assert whole.stats["clc_resumed"] == 0
    assert resumed.stats["clc_executed_warp_instructions"] < whole.stats["clc_executed_warp_instructions"]


def test_the_deeper_failing_sequence_is_found_with_its_answers(monkeypatch):
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)
    # every sequence, depth first: the third one fails
    report = importlib.import_module("modelcheck.synccheck").check(
        modelcheck.load(SKIP).func, {"out": np.zeros(4, np.int32)}, clc_segments=False)
    assert [f.kind for f in report.findings] == ["deadlock"]
    assert report.findings[0].details["clc_answers"] == [False, False, True]
    assert report.stats["clc_paths"] == 3
    # by segments (segments.py): the plan's first sequence holding a two-tile cluster
    report = _check(SKIP, {})
    assert [f.kind for f in report.findings] == ["deadlock"]
    assert report.findings[0].details["clc_answers"] == [False, True, False]
    assert report.stats["clc_segments"]["outcome"] == "stopped"


def test_the_2cta_gemm_resumed_matches_whole_reruns(monkeypatch):
    from tests.modelcheck.numsim.ops.test_pair_clc import _gemm
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)
    kernel, _, inputs = _gemm("gemm_2cta_clc")
    _same(modelcheck.synccheck(kernel, inputs), modelcheck.synccheck(kernel, inputs, clc_snapshots=False))


def test_a_lost_snapshot_is_rerun_from_the_start(monkeypatch):
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)
    real = snapshots.Snapshots.resume

    def lose_one(self, prefix, *rest):
        if prefix == (False,):
            raise snapshots.SnapshotLost("lost for the test")
        return real(self, prefix, *rest)
    monkeypatch.setattr(snapshots.Snapshots, "resume", lose_one)
    before = _children()
    report = _check(SKIP, {"SKIP_AFTER": 0})
    assert _children() == before
    _same(report, _check(SKIP, {"SKIP_AFTER": 0}, clc_snapshots=False))
    # the sequence rerun is the one the snapshot of (False,) was resumed for (segments.py: a longer one)
    assert [x["answers"][:1] for x in report.stats["clc_snapshots_lost"]] == [[False]]


def test_a_resumed_run_that_raises_is_rerun_here(monkeypatch):
    """An exception in a resumed snapshot goes back to the check's process, which reruns that prefix itself (and
    raises there if it is a real error): the snapshot never returns into the caller's code."""
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)
    sc = importlib.import_module("modelcheck.synccheck")
    root, real = os.getpid(), sc._phase_b_findings

    def only_in_snapshots(v, sites):
        if os.getpid() != root:
            raise RuntimeError("phase B failed in a snapshot")
        return real(v, sites)
    monkeypatch.setattr(sc, "_phase_b_findings", only_in_snapshots)
    report = _check(COUNT, {})
    assert report.verdict == "clean" and report.stats["clc_paths"] == 4
    lost = report.stats["clc_snapshots_lost"]
    assert lost and all("phase B failed in a snapshot" in x["why"] for x in lost)


def test_early_choice_points_are_not_snapshotted():
    # these runs are a few hundred warp-instructions: rerunning a prefix is cheaper than a fork
    report = _check(COUNT, {})
    assert report.verdict == "clean" and report.stats["clc_paths"] == 4 and report.stats["clc_resumed"] == 0
