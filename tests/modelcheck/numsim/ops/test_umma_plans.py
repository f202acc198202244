"""Kept MMA issue plans (ops/umma.py `_plans`): a run that reuses them gives the values, sync events and access
records of a run that plans every issue afresh."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.descriptors import InstrDescriptor, SmemDescriptor
from modelcheck.numsim.ops import umma, umma2
from tests.manifest import KERNELS, load_manifest, manifest_inputs

FIX = Path(__file__).parents[3] / "fixtures" / "numsim" / "mma_plan_reuse.py"


def _inputs(rounds: int, iters: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    k = modelcheck.load(FIX, ROUNDS=rounds, ITERS=iters)
    c = k.constants
    words = lambda w: rng.standard_normal((rounds * iters, 2 * w)).astype(ml_dtypes.bfloat16).view(np.uint32)  # noqa: E731
    masks = np.array([0, 0, 0x0000FF00, 0x0000FF00, 0, 0xF0000001][: rounds * iters] * 4, np.uint32)[: rounds * iters]
    return k.func, {"a_img": words(c["WA"]), "b_img": words(c["WB"]), "masks": masks,
                    "a_hi": SmemDescriptor.encode(0, 16, 1024, 2), "b_hi": SmemDescriptor.encode(0, 128, 256, 0),
                    "idesc": InstrDescriptor.encode(128, c["N"], 1, 1, 1),
                    "out": np.zeros((rounds, 128, c["N"]), np.uint32)}


def _observed(func, inputs, out="out"):
    trace = numsim.Trace()
    res = numsim.run(func, inputs, observers=[trace])
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    sync = [(e.seq, e.kind, e.cta, e.warp, e.site, e.iters, e.barrier, e.tx, repr(e.details)) for e in trace.sync]
    acc = [(r.seq, r.space, r.alloc, r.kind, np.asarray(r.offsets).tolist(), r.size, r.proxy, r.actor)
           for r in trace.accesses]
    return res.outputs[out], sync, acc


@pytest.mark.parametrize("rounds, iters", [(2, 3), (1, 6)])
def test_kept_plans_change_nothing(monkeypatch, rounds, iters):
    func, inputs = _inputs(rounds, iters)
    kept = _observed(func, inputs)
    made = {"plans": 0}

    def fresh(rt):      # a new dict per issue: every issue planned afresh
        made["plans"] += 1
        return {}

    monkeypatch.setattr(umma, "_plans", fresh)
    afresh = _observed(func, inputs)
    assert made["plans"] == rounds * iters
    np.testing.assert_array_equal(kept[0], afresh[0])
    assert kept[1] == afresh[1]
    assert kept[2] == afresh[2]
    assert (kept[0] != 0).any()


def test_plans_are_kept_and_renewed_with_the_allocation(monkeypatch):
    func, inputs = _inputs(2, 3)
    seen: list = []
    real = umma._plans

    def spy(rt):
        d = real(rt)
        seen.append(len(d))
        return d

    monkeypatch.setattr(umma, "_plans", spy)
    numsim.run(func, inputs)
    # masks 0, 0, m1 | m1, 0, m2 under one allocation each: plans made for 0, m1 then (new TMEM version) m1, 0, m2
    assert seen == [0, 1, 1, 2, 3, 4]


def test_kept_pair_plans_change_nothing(monkeypatch):
    """cta_group::2 (ops/umma2.py): the 2-CTA cluster GEMM's MMAs, plans kept vs made afresh."""
    entry = load_manifest()["kernels"]["gemm_2cta_clc"]
    k = modelcheck.load(KERNELS / entry["file"])
    inputs = manifest_inputs(k.func, entry, k.constants)
    kept = _observed(k.func, inputs, "D")
    made = {"plans": 0}

    def fresh(rt):
        made["plans"] += 1
        return {}

    monkeypatch.setattr(umma2, "_plans", fresh)
    afresh = _observed(k.func, inputs, "D")
    assert made["plans"] > 2
    np.testing.assert_array_equal(kept[0], afresh[0])
    assert kept[1] == afresh[1]
    assert kept[2] == afresh[2]
    assert (kept[0] != 0).any()
