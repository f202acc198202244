"""The prover confirms a refutation by replaying the confirming finding at the failing size (docs/architecture.md#prover)."""
from __future__ import annotations

import modelcheck
from tests.manifest import KERNELS


def test_refuted_producer_overtaking_is_replayed_at_the_smallest_failing_size():
    k = modelcheck.load(KERNELS / "producer_overtaking.py")
    report = modelcheck.prove(k.func, symbolic=["ROUNDS"])
    assert report.verdict == "refuted"
    refuted = [p for p in report.properties if p.status == "refuted"]
    assert refuted and all(p.replay is not None for p in refuted)
    p3 = next(p for p in refuted if p.prop == "P3")
    assert p3.sizes == {"ROUNDS": 2}
    assert p3.replay["outcome"] == "reproduced" and "outputs_differ" in p3.replay["effects"]
    # at ROUNDS=2 the consumer reads round 1's value (17) for round 0
    assert {"output": "out", "index": [0], "default": 0, "replayed": 17} in p3.replay["differences"]
    assert "saw the value of iteration 1" in p3.replay["headline"]
    assert "replay: reproduced (overtaking)" in report.format()
    assert report.to_dict()["counterexample"]["replay"]["outcome"] == "reproduced"


def test_modelcheck_replay_facade_takes_a_kernel():
    k = modelcheck.load(KERNELS / "producer_overtaking.py")
    r = modelcheck.replay(k, None, modelcheck.synccheck(k).findings[0])
    assert isinstance(r, modelcheck.ReplayReport) and r.outcome == "reproduced"
