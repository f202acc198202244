"""setmaxnreg accounting (issue 17 item 3): counts, directions, warpgroup participation, the register pool."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import registers_budget

KERNEL = Path(__file__).resolve().parents[3] / "kernels" / "ws_setmaxnreg.py"


def _run(**consts):
    kernel = modelcheck.load(KERNEL, **consts)
    x = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    return numsim.run(kernel.func, {"x": x, "out": np.zeros((4, 256), np.float32)}), x


def test_clean_kernel_matches_numpy():
    res, x = _run()
    assert res.termination == "completed" and not res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], x * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("consts, kind, line", [
    ({"PARTIAL": 1}, "setmaxnreg_incomplete_warpgroup", 39),
    ({"PRODUCER_REGS": 96}, "register_oversubscription", 49),
    ({"PRODUCER_REGS": 44}, "setmaxnreg_invalid_count", 39),
    ({"PRODUCER_REGS": 232}, "setmaxnreg_invalid_direction", 39),   # a dec above the launch's 168
    ({"CONSUMER_REGS": 256}, "register_oversubscription", 49),
])
def test_seeded_bugs_are_found_at_their_line(consts, kind, line):
    res, _ = _run(**consts)
    assert [d.kind for d in res.diagnostics] == [kind]
    assert res.diagnostics[0].span.line == line


def test_incomplete_warpgroup_names_the_warps():
    res, _ = _run(PARTIAL=1)
    d = res.diagnostics[0]
    assert d.details["executed"] == [0] and d.details["missing"] == [1, 2, 3]


def test_initial_limit_is_the_pool_share():
    assert registers_budget.initial_limit(384) == 168      # 65536 / 384 = 170.7 -> 168
    assert registers_budget.initial_limit(128) == 256
    assert registers_budget.initial_limit(256) == 256


def test_prove_is_incomplete_naming_setmaxnreg():
    report = modelcheck.prove(modelcheck.load(KERNEL), ["ROUNDS"])
    assert report.verdict == "incomplete" and "setmaxnreg" in report.reasons[0]
    assert "ws_setmaxnreg.py:39:" in report.reasons[0]


def test_a_first_inc_below_the_pool_share_is_not_judged():
    # the launch's allocation is the compiled register count, at most the pool share (168 for 384 threads);
    # the kernel text does not give it, so an inc to 160 may well raise it: no direction error
    res, _ = _run(CONSUMER_REGS=160)
    assert res.termination == "completed" and not res.diagnostics


def test_a_later_inc_below_the_tracked_limit_is_still_an_error():
    text = KERNEL.read_text()
    inc = "T.ptx.setmaxnreg.inc.sync.aligned.u32(CONSUMER_REGS)"
    assert text.count(inc) == 1
    indent = text.split(inc)[0].rsplit("\n", 1)[1]
    func = modelcheck.parse(text.replace(inc, inc + "\n" + indent + "T.ptx.setmaxnreg.inc.sync.aligned.u32(200)"),
                            path=str(KERNEL))
    x = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    res = numsim.run(func, {"x": x, "out": np.zeros((4, 256), np.float32)})
    assert [d.kind for d in res.diagnostics] == ["setmaxnreg_invalid_direction"]
    assert res.diagnostics[0].details["current"] == 232
