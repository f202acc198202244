"""Incomplete verdicts (docs/architecture.md#verdicts-and-exit-codes): a missing binding, an unsupported operation or an exhausted
limit gives `incomplete` with its reason -- never `clean`, whatever else the run showed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REPORT = FIXTURES / "report"
POLL = FIXTURES / "numsim" / "try_wait_poll.py"


def sync(path, inputs=None, **limits):
    return modelcheck.synccheck(modelcheck.load(path), inputs, **limits)


def only_incomplete(report):
    assert report.verdict == "incomplete", report.format()
    (f,) = [f for f in report.findings if f.status == "incomplete"]
    assert f.kind == "analysis_incomplete"
    assert report.verdict != "clean"
    with pytest.raises(modelcheck.CheckFailed, match=r"^synccheck incomplete \(error=0, incomplete=1, review=0\)"):
        report.require_clean()
    return f


def test_missing_scalar_binding_names_the_parameter():
    report = sync(REPORT / "scalar_param.py")
    f = only_incomplete(report)
    assert f.details["reason"] == "missing_input_bindings"
    assert f.details["parameters"] == ["n"]
    assert "n" in f.message
    text = report.format()
    assert text.splitlines()[0] == ("synccheck INCOMPLETE - 1 finding(s); native phase scalar_param, "
                                    "direct execution")
    assert "  [INCOMPLETE] analysis_incomplete: missing input bindings for n" in text
    assert "    Reason: missing_input_bindings" in text


def test_missing_binding_with_other_inputs_given():
    report = sync(REPORT / "scalar_param.py", {"out": np.zeros(32, np.int32)})
    assert only_incomplete(report).details["parameters"] == ["n"]


def test_the_bound_kernel_is_clean():
    assert sync(REPORT / "scalar_param.py", {"out": np.zeros(32, np.int32), "n": 3}).verdict == "clean"


def test_unsupported_operation_names_the_op_and_line():
    path = REPORT / "unsupported_cvt.py"
    report = sync(path)
    f = only_incomplete(report)
    assert f.details["reason"] == "unsupported_operation"
    assert f.details["operation"] == "cvt.rn.f32.f16"
    line = next(n for n, text in enumerate(path.read_text().split("\n"), 1) if "T.ptx.cvt" in text)
    assert "cvt.rn.f32.f16" in f.message and f":{line}:" in f.message
    assert "Reason: unsupported_operation" in report.format()
    assert "verifier states" not in report.format()          # phase B never runs on a partial run


def test_poll_limit_is_a_resource_limit():
    assert sync(POLL).verdict == "clean"
    f = only_incomplete(sync(POLL, max_polls=1))
    assert f.details["reason"] == "resource_limit"


def test_phase_b_state_limit_is_a_resource_limit():
    path = REPORT / "reinit_ring.py"
    full = sync(path)
    assert full.verdict == "clean"
    assert full.stats["searched_projections"] >= 1 and full.stats["verifier_states"] > 2
    report = sync(path, max_states=1)
    f = only_incomplete(report)
    assert f.details["reason"] == "resource_limit"
    assert f.details["resource"] == "fixed_sync_states"
    assert " verifier states / " in report.format().splitlines()[0]


def test_phase_b_transition_limit_is_a_resource_limit():
    f = only_incomplete(sync(REPORT / "reinit_ring.py", max_transitions=1))
    assert (f.details["reason"], f.details["resource"]) == ("resource_limit", "fixed_sync_transitions")


@pytest.mark.parametrize("limits", [{"max_states": 1}, {"max_transitions": 1}, {"max_polls": 1}])
def test_a_limit_never_gives_clean(limits):
    """Every limit, on every kernel of this directory: the verdict is never clean when a limit hit."""
    for path in sorted(REPORT.glob("*.py")):
        report = sync(path, **limits)
        hit = [f for f in report.findings if f.details.get("reason") == "resource_limit"]
        if hit:
            assert report.verdict in ("incomplete", "error")
        elif report.verdict == "clean":
            assert "resource_limit" not in report.format()
