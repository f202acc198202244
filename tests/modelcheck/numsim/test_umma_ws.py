"""tcgen05.mma.ws, the weight-stationary MMA (PTX ISA 9.7.16.10.9.3; docs/semantics.md#tcgen05-and-tmem):
D = A*B (+ D) with D in data path D (M = 128), E (M = 64: N folded in halves over lanes 0-63 / 64-127) or
G (M = 32: quarters over the four lane slabs), A from shared memory or from TMEM (one copy of A per part of D,
TVM's batched A fold), checked against numpy."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from ir import ops
from modelcheck import numsim
from modelcheck.numsim.descriptors import InstrDescriptor, SmemDescriptor
from tests.modelcheck.numsim.test_tcgen05 import LAYOUT_CODE, image

FIX = Path(__file__).parent.parent.parent / "fixtures" / "numsim" / "mma_ws.py"
K = 16


def _case(m, n, ts, accumulate, seed, zcm=0, **extra):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, K)).astype(ml_dtypes.bfloat16)
    parts = 128 // m
    dc = n // parts
    a_lay, b_lay = ("K", 128, 16, 1024), ("K", 0, 128, 256)
    a_img, b_img = image(a, *a_lay), image(b, *b_lay)
    a_img = np.concatenate([a_img, np.zeros(-a_img.size % 128, np.uint32)])
    b_img = np.concatenate([b_img, np.zeros(-b_img.size % 128, np.uint32)])
    # A in TMEM: row i of A in lane i + m*p of every part p, two bf16 per column (low half the even k)
    a_tmem = np.zeros((128, K // 2), np.uint32)
    a_tmem[:] = np.tile(a.view(np.uint16).reshape(m, K // 2, 2).view(np.uint32).reshape(m, K // 2), (parts, 1))
    d0 = rng.standard_normal((128, dc)).astype(np.float32)
    consts = dict(WA=a_img.size, WB=b_img.size, DC=dc, AC=K // 2, TS=int(ts), ZCM=zcm)
    func = modelcheck.load(FIX, **consts).func
    inputs = {"a_img": a_img, "b_img": b_img, "d_init": d0.view(np.uint32), "a_tmem": a_tmem,
              "a_hi": SmemDescriptor.encode(0, a_lay[2], a_lay[3], LAYOUT_CODE[a_lay[1]]),
              "b_hi": SmemDescriptor.encode(0, b_lay[2], b_lay[3], LAYOUT_CODE[b_lay[1]]),
              "idesc": InstrDescriptor.encode(m, n, 1, 1, 1), "acc": int(accumulate),
              "out": np.zeros((128, dc), np.uint32), **extra}
    return func, inputs, a, b, d0


@pytest.mark.parametrize("m, n, ts, accumulate", [(128, 64, False, True), (64, 128, False, False),
                                                  (64, 256, True, True), (32, 256, False, True),
                                                  (32, 128, True, False)])
def test_ws_layouts_and_numerics_match_numpy(m, n, ts, accumulate):
    func, inputs, a, b, d0 = _case(m, n, ts, accumulate, seed=m * 1000 + n + ts)
    res = numsim.run(func, inputs)
    assert res.verdict == "clean", res.diagnostics
    prod = a.astype(np.float64) @ b.astype(np.float64).T          # (m, n)
    parts, dc = 128 // m, n // (128 // m)
    want = d0.astype(np.float64).copy()
    for p in range(parts):                                           # part p of N: lanes m*p .. m*p + m - 1
        want[m * p:m * (p + 1)] = prod[:, p * dc:(p + 1) * dc] + (want[m * p:m * (p + 1)] if accumulate else 0)
    np.testing.assert_allclose(res.outputs["out"].view(np.float32), want.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_ws_descriptor_shapes_are_checked():
    func, inputs, *_ = _case(64, 128, False, True, seed=1)
    inputs["idesc"] = InstrDescriptor.encode(64, 96, 1, 1, 1)          # N = 96: not a .ws shape
    res = numsim.run(func, inputs)
    assert [d.kind for d in res.diagnostics] == ["invalid_descriptor"], res.diagnostics
    assert "tcgen05.mma.ws needs 64, 128 or 256" in res.diagnostics[0].message


def test_a_non_zero_column_mask_is_unmodeled_naming_the_op():
    func, inputs, *_ = _case(64, 128, False, True, seed=2, zcm=1 << 39)
    report = modelcheck.synccheck(func, inputs)
    assert report.verdict == "incomplete"
    assert "zero-column mask" in report.findings[0].message


@pytest.mark.parametrize("op, supported", [
    ("tcgen05.mma.ws.cta_group::1.kind::f16", True),
    ("tcgen05.mma.ws.cta_group::1.kind::tf32.collector::b2::use", True),
    ("tcgen05.mma.ws.cta_group::1.kind::f16.collector::a::fill", False),
    ("tcgen05.mma.ws.cta_group::1.kind::i8", False),
])
def test_ws_forms(op, supported):
    info = ops.classify(op, ("uint32", "uint64", "uint64", "uint32", "bool", "uint64"))
    assert info.supported is supported, info.why_unsupported
