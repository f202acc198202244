"""Cluster launch control holds shared memory only for the running clusters (ops/clc.py, engine.py's charge):
a cancelled cluster never gets any, a finished one gives it back, and the memory budget is charged for the
running clusters only -- as the wave scheduler does for ordinary launches (numsim/residency.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck.numsim import engine as engine_mod
from modelcheck.numsim.engine import Engine
from modelcheck.numsim.ops.clc import ClcScheduler, NotLaunched
from modelcheck.numsim.errors import UnsupportedTIRxError

FIX = Path(__file__).parents[3] / "fixtures" / "ops" / "clc_big_grid.py"
TILES = 64


@pytest.fixture
def made(monkeypatch):
    """CTA indices whose shared memory the engine made, in order."""
    out: list[int] = []
    real = engine_mod.SharedMemory

    def counting(cta, *a, **kw):
        out.append(cta)
        return real(cta, *a, **kw)
    monkeypatch.setattr(engine_mod, "SharedMemory", counting)
    return out


def _run(**kw):
    func = modelcheck.load(FIX).func
    return Engine(func, max_memory_mb=8, **kw).run({"out": np.zeros(TILES, np.int32)})


def test_cancelled_clusters_get_no_shared_memory_and_are_not_charged(made):
    # 64 CTAs x 200 KB of shared memory (twice: pool and written flags) is ~27 MB at once; one running CTA fits 8 MB
    res = _run()
    assert res.termination == "completed", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], np.arange(TILES) * 10 + 7)
    assert res.stats["clc"]["cancels"] == TILES - 1
    assert made == [0]


def test_clusters_that_run_one_after_another_each_get_theirs_in_turn(made):
    res = _run(clc_policy="fail")      # no request cancels: every cluster runs its own tile
    assert res.termination == "completed", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], np.arange(TILES) * 10 + 7)
    assert made == list(range(TILES))


def test_the_charge_counts_the_running_clusters_only():
    res = _run(clc_resident=TILES)     # every cluster running at once holds its shared memory: past 8 MB
    assert res.termination == "incomplete"
    assert "64 CTA(s) of 1 warp(s) with 200," in res.diagnostics[0].message
    assert "resident at once" not in res.diagnostics[0].message
    res = Engine(modelcheck.load(FIX).func, max_memory_mb=1).run({"out": np.zeros(TILES, np.int32)})
    assert res.termination == "incomplete" and "(1 resident at once)" in res.diagnostics[0].message


def test_the_scheduler_launches_and_releases_in_cluster_order():
    log: list[tuple[str, int]] = []
    clc = ClcScheduler([["a"], ["b"], ["c"]], resident=1, launch=lambda c: log.append(("launch", c)),
                       release=lambda c: log.append(("release", c)))
    assert log == [("launch", 0)]
    assert clc.cancel() == 1                     # cancelled: never launched
    clc.finished(0)
    assert log == [("launch", 0), ("release", 0), ("launch", 2)]


def test_a_cta_not_launched_has_no_shared_bytes():
    shared = NotLaunched(5, {})
    assert shared.__dict__.get("_wgmma_sequence") is None      # what the checks at exit read of every CTA
    with pytest.raises(UnsupportedTIRxError, match="CTA 5's shared memory while its cluster is pending"):
        shared.find(0, 4)
