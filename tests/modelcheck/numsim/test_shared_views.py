"""A shared view declared past the end of its pool (apache-tvm 0.27 prints such output-staging views): the launch's
shared memory is the pool's declared size, and only an access past the pool is out of bounds."""
from __future__ import annotations

import numpy as np

import modelcheck
from modelcheck import numsim
from tests.manifest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "numsim" / "oversized_view.py"


def _run(far: int):
    func = modelcheck.load(FIXTURE, FAR=far).func
    return numsim.run(func, {"out": np.zeros(32, np.float32)})


def test_a_view_declared_past_its_pool_does_not_enlarge_the_launch():
    res = _run(0)
    assert res.verdict == "clean", [d.message for d in res.diagnostics]
    assert res.outputs["out"].tolist() == [float(31 - i) for i in range(32)]


def test_an_access_past_the_pool_through_the_view_is_out_of_bounds():
    res = _run(1)
    assert [d.kind for d in res.diagnostics] == ["oob"]
    assert "stage[20000]" in res.diagnostics[0].message
