"""Projections per resource (explorer.project): one pass over the commands, the same projections as filtering
every warp's program per resource; phase A's recorded clocks are read by global warp number."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import modelcheck
from modelcheck import explorer
from tests.modelcheck.explorer.support import kernel_programs

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "explorer" / "grid_bar_exchange.py"


def _naive(programs, resource):
    out = {}
    for w, prog in programs.warps.items():
        cmds = [c for c in prog if c.resource == resource]
        if cmds:
            out[w] = [replace(c, index=k) for k, c in enumerate(cmds)]
    return out


def test_projection_index_matches_filtering():
    programs, _ = kernel_programs(FIXTURE, {"CTAS": 8})
    index = programs.by_resource()
    resources = programs.resources()
    assert len(resources) == 8 and set(index) == set(resources)
    for r in resources:
        assert explorer.project(programs, r, index) == _naive(programs, r) == explorer.project(programs, r)


def test_clocks_are_zero_outside_the_cluster():
    programs, _ = kernel_programs(FIXTURE, {"CTAS": 2})
    first = programs.warps[0][0]          # CTA 0's barrier, warp 0
    assert first.after[0] >= 1
    assert all(first.after[w] == 0 for w in range(4, 8))     # CTA 1's warps: another cluster


def test_synccheck_is_linear_in_the_ctas():
    """4,096 CTAs (16,384 warps, 4,096 barriers): phase B stays a small part of the run (it was quadratic)."""
    kernel = modelcheck.load(FIXTURE, CTAS=4096)
    t0 = time.process_time()
    report = modelcheck.synccheck(kernel, max_seconds=600)
    assert report.verdict == "clean"
    assert report.stats["projections"] == 4096
    assert report.stats["phase_b_wall_time_s"] < 5 and time.process_time() - t0 < 30
