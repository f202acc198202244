"""Racecheck on wgmma: the shared operands of a wgmma.mma_async are async-proxy reads in flight until the
wgmma.wait_group that retires its group, so releasing or overwriting them earlier is a data race; the
happens-before graph orders (and explains) exactly what Racecheck does.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import hb

from .test_kernels import assert_points_at

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"
MMA = 'T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"]('
TMA_A = 'T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](a_s.ptr_to('


@pytest.fixture(scope="module")
def early_release():
    return modelcheck.racecheck(modelcheck.load(Path(__file__).resolve().parents[3] / "kernels" /
                                                "wgmma_gemm_early_release.py"))


def test_stage_released_before_wait_group_is_a_lifetime_race(early_release):
    rep = early_release
    assert rep.verdict == "error"
    races = [f for f in rep.findings if f.kind == "data_race"]
    assert {f.details["overlap"]["allocation"] for f in races} == {"a_s", "b_s"}
    f = next(f for f in races if f.details["overlap"]["allocation"] == "a_s")
    d = f.details
    # the next TMA load's issue is ordered after the release, but the wgmma it overwrites has not retired
    assert (d["access_pair"], d["ordering_failure"]) == ("read_write", "async_lifetime_not_drained")
    assert_points_at(d["prior"], "wgmma_gemm_early_release", MMA, op="wgmma.mma_async", async_op=True,
                     access="read")
    assert_points_at(d["current"], "wgmma_gemm_early_release", TMA_A, access="write")
    e = hb.explain(rep, f)
    assert e.ordered is False and e.data["needed"] == "completion"
    assert "wgmma.mma_async" in e.summary


@pytest.mark.parametrize("name", ["wgmma_gemm", "wgmma_gemm_early_release_fixed"])
def test_stage_released_after_wait_group_is_clean(name):
    rep = modelcheck.racecheck(modelcheck.load(Path(__file__).resolve().parents[3] / "kernels" / f"{name}.py"))
    assert rep.verdict == "clean", rep.format()


def _fixture_inputs():
    rng = np.random.default_rng(2)
    return {"A": rng.standard_normal((64, 16)).astype(np.float16), "B": rng.standard_normal((8, 16)).astype(np.float16),
            "C": np.zeros((64, 8), np.float32), "D": np.zeros((64, 8), np.float32)}


def test_generic_store_into_an_operand_before_wait_group_races():
    """A generic store into B's tile after the commit, before the wait: the async read has neither completed
    nor been bridged to the generic proxy."""
    kernel = modelcheck.load(FIXTURES / "wgmma_ss_n8.py", OVERWRITE=1)
    rep = modelcheck.racecheck(kernel, inputs=_fixture_inputs())
    races = [f for f in rep.findings if f.kind == "data_race"]
    assert races and all(f.details["overlap"]["allocation"] == "b_s" for f in races)
    reads = [f for f in races if f.details["prior"]["op"] == "wgmma.mma_async"]
    assert reads and reads[0].details["current"]["source_text"].startswith("b_s[tx] = B[0, 0]")
    assert modelcheck.racecheck(modelcheck.load(FIXTURES / "wgmma_ss_n8.py"), inputs=_fixture_inputs()).verdict \
        == "clean"


def test_operands_stored_without_a_proxy_fence_race_with_the_wgmma_reads():
    """Generic stores of A and B, a CTA barrier, then the wgmma's async-proxy reads: ordered, but with no
    fence.proxy.async on the path they still race (generic -> async)."""
    kernel = modelcheck.load(FIXTURES / "wgmma_ss_n8.py", NOFENCE=1)
    rep = modelcheck.racecheck(kernel, inputs=_fixture_inputs())
    races = [f for f in rep.findings if f.kind == "data_race"]
    assert {f.details["overlap"]["allocation"] for f in races} == {"a_s", "b_s"}
    for f in races:
        assert f.details["ordering_failure"] == "missing_proxy_bridge"
        assert f.details["proxy_bridge"]["prior_proxy"] == "generic"
        assert f.details["current"]["op"] == "wgmma.mma_async"


def test_wgmma_left_pending_at_exit_is_incomplete():
    """The accumulators read before the wait are an error; the group no wait retired is outstanding at exit."""
    kernel = modelcheck.load(FIXTURES / "wgmma_ss_n8.py", WAIT=1)
    rep = modelcheck.racecheck(kernel, inputs=_fixture_inputs())
    kinds = {f.kind for f in rep.findings}
    assert {"async_register_access_before_wait", "effect_commit_unobserved"} <= kinds
    f = next(f for f in rep.findings if f.kind == "effect_commit_unobserved")
    assert f.message.startswith("wgmma.mma_async issued by warp") and "no wgmma.wait_group covering" in f.message


def test_graph_retires_the_group_at_the_wait():
    h = hb.build(modelcheck.load(FIXTURES / "wgmma_ss_n8.py"), _fixture_inputs())
    g = h.graph
    waits = [(u, v) for u, v, d in g.edges(data=True) if d["kind"] == "group_wait"]
    # four warps, one wgmma each: its completion node -> the warp's wait_group
    assert len(waits) == 4
    assert all(g.nodes[v]["op"] == "wgmma.wait_group" and g.nodes[u]["kind"] == "completion" for u, v in waits)
