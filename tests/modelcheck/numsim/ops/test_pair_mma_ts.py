"""cta_group::2 MMA with A in Tensor Memory (ops/umma2.py): each CTA's half of A from its own TMEM."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[3] / "fixtures" / "ops2" / "pair_mma_ts.py"


def test_each_cta_reads_its_half_of_a_from_its_own_tmem():
    kernel = modelcheck.load(FIX)
    res = numsim.run(kernel.func, {"out": np.zeros((2, 128), np.float32)})
    assert res.termination == "completed" and res.diagnostics == ()
    # D = A B^T with K = 16 and B all ones: 16 x (A's value) -- 1 in the even CTA, 2 in the odd one
    assert (res.outputs["out"][0] == 16).all() and (res.outputs["out"][1] == 32).all()
    assert modelcheck.synccheck(kernel).verdict == "clean"
    assert modelcheck.racecheck(kernel).verdict == "clean"


def test_a_not_on_lane_0_is_an_invalid_target():
    kernel = modelcheck.load(FIX, LANE=32)
    res = numsim.run(kernel.func, {"out": np.zeros((2, 128), np.float32)})
    assert [d.kind for d in res.diagnostics] == ["tmem_access_invalid_target"]
