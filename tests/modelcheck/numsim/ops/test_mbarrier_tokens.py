"""State-token mbarrier waits (PTX ISA 9.7.13.15.16): the token an arrive returns names (barrier, phase); a
wait on it completes when that phase has; tokens PTX leaves undefined are `mbarrier_invalid_phase`."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from ir import ops
from modelcheck import numsim
from modelcheck.numsim.ops.mbarrier import token_of
from modelcheck.numsim.sync import MBarrier

KERNEL = Path(__file__).parents[4] / "kernels" / "mbar_token_wait.py"


@pytest.mark.parametrize("op, n", [("mbarrier.try_wait.shared::cta.b64", 3), ("mbarrier.try_wait.shared::cta.b64", 4),
                                   ("mbarrier.test_wait.shared::cta.b64", 3)])
def test_token_waits_are_modeled(op, n):
    info = ops.classify(op, ("uint32", "handle", "uint64", "uint32")[:n])
    assert info.supported and [o.name for o in info.operands][:3] == ["wait_complete", "addr", "state"]


def test_token_carries_barrier_init_and_phase():
    bar = MBarrier(0, 0x418)
    bar.init(1)
    t = token_of(bar, 5)
    assert t >> 63 == 1 and t & 0xFFFF_FFFF == 5 and (t >> 32) & 0xFF_FFFF == 0x418 and (t >> 56) & 0x7F == 1


def test_token_handoff_runs_and_checks_clean():
    kernel = modelcheck.load(KERNEL)
    res = numsim.run(kernel.func, {"out": np.zeros(3, np.int32)})
    assert res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["out"], [7, 17, 27])
    assert modelcheck.synccheck(kernel).verdict == "clean"
    assert modelcheck.racecheck(kernel).verdict == "clean"


@pytest.mark.parametrize("consts, words", [({"STALE": 1}, "stale state token: it names phase 0"),
                                           ({"OTHER_BAR": 1}, "with a state token of the barrier at")])
def test_undefined_tokens_are_invalid_phase(consts, words):
    kernel = modelcheck.load(KERNEL, **consts)
    rep = modelcheck.synccheck(kernel)
    assert rep.verdict == "error"
    f = next(f for f in rep.findings if f.kind == "mbarrier_invalid_phase")
    assert words in f.message
