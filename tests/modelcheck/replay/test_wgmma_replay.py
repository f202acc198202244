"""Replay of the wgmma stage-reuse race: the forced schedule holds a wgmma back until the producer's next
TMA load overwrote its stage; the accumulator chain behind it waits for it (issue order), so the replayed
D differs from the default run by wrong values, never by undefined (NaN) ones."""
from __future__ import annotations

import numpy as np

import modelcheck
from modelcheck import replay
from tests.manifest import KERNELS, inputs_builder


def test_early_release_replays_with_the_overwritten_operands():
    kernel = modelcheck.load(KERNELS / "wgmma_gemm_early_release.py")
    inputs = inputs_builder({"inputs_builder": "wgmma:gemm"})(kernel.constants, seed=5)
    race = next(f for f in modelcheck.racecheck(kernel.func, inputs).findings if f.kind == "data_race")
    r = replay(kernel.func, inputs, race)
    assert r.outcome == "reproduced", r.format()
    assert all(s["done"] for s in r.steps)
    assert r.difference_count > 0 and r.read_count > 0
    assert all(np.isfinite(float(d["replayed"])) for d in r.differences), r.differences[:3]
