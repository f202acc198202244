"""Hopper wgmma in NumSim: numerics against numpy, the register fragments, pending accumulators, the
warpgroup rules, descriptor decoding and the unsupported forms.

Fixtures (tests/fixtures/numsim/wgmma_*.py) load their operands with generic stores in the canonical
layouts and read D back through the fragment map of PTX ISA 9.7.15.5.1.1.1; the expected values are
numpy products of the inputs, never the simulator's own maps.
"""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.descriptors import (LAYOUT_128B, LAYOUT_NONE, DescriptorError, DescriptorUnsupported,
                                           wgmma_descriptor, wgmma_fragment)
from tests.manifest import inputs_builder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"
KERNELS = Path(__file__).resolve().parents[3] / "kernels"
CASES = [("wgmma_ss_n8", 8, np.float16, False), ("wgmma_ss_n256", 256, ml_dtypes.bfloat16, False),
         ("wgmma_rs_n24", 24, ml_dtypes.bfloat16, True)]


def _inputs(n: int, dtype, rs: bool, seed: int = 1):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((64, 16)).astype(dtype)
    b = rng.standard_normal((n, 16)).astype(dtype)
    c = rng.standard_normal((64, n)).astype(np.float32)
    packed = np.ascontiguousarray(a).view(np.uint32) if rs else a      # rs: two elements per word, k even low
    return a, b, c, {"A": packed, "B": b, "C": c, "D": np.zeros((64, n), np.float32)}


def _run(name: str, inputs: dict, **consts):
    return numsim.run(modelcheck.load(FIXTURES / f"{name}.py", **consts).func, inputs)


@pytest.mark.parametrize("name,n,dtype,rs", CASES)
@pytest.mark.parametrize("consts", [{}, {"ACC": 0}, {"SCALE_A": -1}, {"TB": 1}])
def test_one_wgmma_matches_numpy(name, n, dtype, rs, consts):
    """D = scale-a * A . B^T (+ C with scale-d): ss and rs forms, f16 and bf16, N = 8, 24 and 256,
    B K-major and N-major; the products of 16 halves are exact, so D equals the fp32 rounding of the
    float64 sum."""
    a, b, c, inputs = _inputs(n, dtype, rs)
    res = _run(name, inputs, **consts)
    assert res.termination == "completed" and not res.diagnostics
    want = consts.get("SCALE_A", 1) * (a.astype(np.float64) @ b.astype(np.float64).T)
    if consts.get("ACC", 1):
        want = want + c
    np.testing.assert_array_equal(res.outputs["D"], want.astype(np.float32))


def test_fragment_maps_follow_the_ptx_figures():
    """Figure 149: thread 0 holds D(0,0), D(0,1), D(8,0), D(8,1), then the same 8 columns on; lane 5 of
    warp 2 holds rows 32 + 1 (+ 8) and columns 2, 3.  Figure 148: A register j of lane 5 in warp 2."""
    a_rows, a_cols, d_rows, d_cols = wgmma_fragment(0)
    assert [(int(d_rows[i % 4, 0]), int(d_cols[i % 4, 0] + 8 * (i // 4))) for i in range(6)] == \
        [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9)]
    a_rows, a_cols, d_rows, d_cols = wgmma_fragment(2)
    assert [(int(d_rows[i, 5]), int(d_cols[i, 5])) for i in range(4)] == [(33, 2), (33, 3), (41, 2), (41, 3)]
    assert [(int(a_rows[j, 5]), int(a_cols[j, 5])) for j in range(4)] == [(33, 2), (41, 2), (33, 10), (41, 10)]


def test_descriptor_fields():
    v = (0x1230 >> 4) | (128 >> 4) << 16 | (1024 >> 4) << 32 | 1 << 62
    d = wgmma_descriptor(v)
    assert (d.start, d.lbo, d.sbo, d.layout) == (0x1230, 128, 1024, LAYOUT_128B)
    assert wgmma_descriptor(0x40).layout == LAYOUT_NONE
    with pytest.raises(DescriptorError, match="tcgen05 descriptor's version"):
        wgmma_descriptor(v | 1 << 46)          # a tcgen05 (sm_100) descriptor is not a wgmma one
    with pytest.raises(DescriptorUnsupported, match="base offset"):
        wgmma_descriptor(v | 3 << 49)


def test_reading_the_accumulators_before_the_wait_is_found():
    """wait_group 1 leaves the only group pending: the epilogue reads undefined accumulators."""
    _, _, _, inputs = _inputs(8, np.float16, False)
    res = _run("wgmma_ss_n8", inputs, WAIT=1)
    assert res.termination == "completed"
    [diag] = res.diagnostics
    epilogue = [i + 1 for i, ln in enumerate((FIXTURES / "wgmma_ss_n8.py").read_text().splitlines())
                if ln.strip().startswith("D[warp * 16")]
    assert diag.kind == "async_register_access_before_wait" and [diag.span.line] == epilogue
    assert "before wgmma.wait_group: wgmma.mma_async.m64n8k16" in diag.message
    assert np.isnan(res.outputs["D"]).all()


def test_overwriting_an_accumulator_before_the_wait_is_found():
    a, b, c, inputs = _inputs(8, np.float16, False)
    res = _run("wgmma_ss_n8", inputs, CLOBBER=1)
    [diag] = res.diagnostics
    assert diag.kind == "async_register_access_before_wait" and diag.message.startswith("write of acc[0] before")
    # the wait then writes the wgmma's result over the early store
    want = a.astype(np.float64) @ b.astype(np.float64).T + c
    np.testing.assert_array_equal(res.outputs["D"], want.astype(np.float32))


def test_a_partial_warp_is_a_collective_divergence():
    _, _, _, inputs = _inputs(8, np.float16, False)
    res = _run("wgmma_ss_n8", inputs, PARTIAL=1)
    assert res.termination == "error"
    assert [d.kind for d in res.diagnostics] == ["warp_collective_divergence"]
    assert "wgmma.fence.sync.aligned" in res.diagnostics[0].message


def test_half_a_warpgroup_issuing_wgmma_is_a_collective_divergence():
    _, _, _, inputs = _inputs(8, np.float16, False)
    res = _run("wgmma_ss_n8", inputs, HALF=1)
    assert res.termination == "error"
    [diag] = res.diagnostics
    assert diag.kind == "warp_collective_divergence"
    assert (diag.details["executed"], diag.details["missing"]) == ([0, 1], [2, 3])
    mma = [i + 1 for i, ln in enumerate((FIXTURES / "wgmma_ss_n8.py").read_text().splitlines())
           if "wgmma.mma_async" in ln and not ln.startswith("#")]
    assert [diag.span.line] == mma


def test_warps_of_one_warpgroup_must_issue_the_same_wgmma():
    _, _, _, inputs = _inputs(8, np.float16, False)
    res = _run("wgmma_ss_n8", inputs, SKEW=1)
    assert [d.kind for d in res.diagnostics] == ["warp_collective_divergence"]
    assert "different instruction" in res.diagnostics[0].message


@pytest.mark.parametrize("seed", [3, 11])
def test_gemm_kernel_run_matches_numpy(seed):
    """kernels/wgmma_gemm.py (TMA ring, 128B swizzle, 4 K tiles of 4 wgmma each, one group in flight):
    within fp32 rounding of the float64 product (D is rounded once per wgmma)."""
    k = modelcheck.load(KERNELS / "wgmma_gemm.py")
    inputs = inputs_builder({"inputs_builder": "wgmma:gemm"})(k.constants, seed=seed)
    res = numsim.run(k.func, inputs)
    assert res.termination == "completed" and not res.diagnostics
    want = inputs_builder({"inputs_builder": "wgmma:gemm_reference"})(inputs)["D"]
    np.testing.assert_allclose(res.outputs["D"], want, rtol=1e-5, atol=1e-4)
    assert res.stats["async_ops"] >= 2 * 4 * 16      # CTAs x warps x wgmma per warp


def test_gemm_sync_events_retire_groups_in_order():
    """wait_group 1 after tile k retires tile k - 1's group (its four ops) in every consumer warp."""
    k = modelcheck.load(KERNELS / "wgmma_gemm.py")
    trace = numsim.Trace()
    numsim.run(k.func, inputs_builder({"inputs_builder": "wgmma:gemm"})(k.constants), observers=[trace])
    waits = [ev for ev in trace.sync if ev.kind == "wgmma.wait_group" and ev.warp == 0]
    assert [len(ev.details["ops"]) for ev in waits] == [0, 4, 4, 4, 4]
    assert [ev.count for ev in waits] == [1, 1, 1, 1, 0]
