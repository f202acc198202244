"""The scheduler's account of a run stopped by a budget (numsim/runtime.py `spin_note`): a spin on a flag
another launch sets (tests/fixtures/numsim/flag_from_other_launch.py) names the wait it polled at, so a
spin nothing in the launch ends is told apart from a run that is merely long."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import budget

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "numsim" / "flag_from_other_launch.py"
ITEMS = 8


def _run(flags, **limits):
    func = modelcheck.load(FIXTURE).func
    src = np.arange(ITEMS, dtype=np.int32) + 5
    inputs = {"flags": np.asarray(flags, dtype=np.int32), "src": src, "out": np.zeros(ITEMS, np.int32)}
    return numsim.run(func, inputs, **limits), src


def _line_of(text: str) -> int:
    return next(i for i, ln in enumerate(FIXTURE.read_text().splitlines(), 1) if text in ln)


def test_released_flags_complete_and_are_consumed():
    res, src = _run(np.ones(ITEMS), max_polls=200)
    assert res.termination == "completed", [str(d) for d in res.diagnostics]
    assert list(res.outputs["out"]) == list(src * 2)
    assert not res.outputs["flags"].any()            # the consumer resets each flag it took


def test_flags_released_in_part_poll_until_the_first_unset_one():
    flags = np.zeros(ITEMS)
    flags[:3] = 1
    res, src = _run(flags, max_polls=200)
    d = next(d for d in res.diagnostics if d.kind == "analysis_incomplete")
    assert res.termination == "incomplete" and d.details["limit"] == "polls"
    assert list(res.outputs["out"][:3]) == list(src[:3] * 2) and not res.outputs["out"][3:].any()


def test_a_spin_nothing_in_the_launch_ends_is_named_at_the_stop():
    res, _ = _run(np.zeros(ITEMS), max_polls=200)
    d = next(d for d in res.diagnostics if d.kind == "analysis_incomplete")
    assert res.termination == "incomplete" and d.details["reason"] == "resource_limit"
    line = _line_of("T.cuda.nano_sleep")
    assert f"flag_from_other_launch.py:{line} (nanosleep)" in d.message, d.message
    assert "the last poll of 1 warp(s): a wait that had not ended" in d.message
    top = d.details["polls_at"][0]
    assert top["op"] == "nanosleep" and top["warps_last_polling"] == 1 and top["polls"] > 100
    assert top["span"].endswith(f"flag_from_other_launch.py:{line}:" + top["span"].rsplit(":", 1)[-1])


def test_a_budget_stop_without_polls_adds_no_note(monkeypatch):
    monkeypatch.setattr(budget, "CHECK_EVERY", 1)     # the step budget is checked every step, not every 16,384
    res, _ = _run(np.ones(ITEMS), max_steps=5)
    d = next(d for d in res.diagnostics if d.kind == "analysis_incomplete")
    assert d.details["limit"] == "steps" and "polls were at" not in d.message and "polls_at" not in d.details
