"""The one verdict type: order, exit codes, the strings JSON and SARIF show, the prover's outcomes."""
from __future__ import annotations

import json

import pytest

from modelcheck.common import findings as F
from modelcheck.common.verdict import STATUSES, Proof, Verdict, verdict_of


def test_worst_orders_error_incomplete_review_clean():
    assert Verdict.worst([]) is Verdict.CLEAN
    assert Verdict.worst(["review", "clean"]) is Verdict.REVIEW
    assert Verdict.worst([Verdict.REVIEW, "incomplete"]) is Verdict.INCOMPLETE
    assert Verdict.worst(["incomplete", "error", "review"]) is Verdict.ERROR
    with pytest.raises(ValueError):
        Verdict.worst(["fine"])


def test_exit_codes():
    assert [v.exit_code() for v in Verdict] == [0, 0, 2, 1]
    assert Verdict.REVIEW.exit_code(strict=True) == 3 and Verdict.CLEAN.exit_code(strict=True) == 0


def test_members_are_their_strings():
    assert Verdict.ERROR == "error" and f"{Verdict.ERROR}" == "error" and str(Verdict.CLEAN) == "clean"
    assert json.dumps({"verdict": Verdict.INCOMPLETE}) == '{"verdict": "incomplete"}'
    assert {"review": 1}[Verdict.REVIEW] == 1 and Verdict.CLEAN.upper() == "CLEAN"
    assert f"{Proof.REFUTED:<10}|" == "refuted   |"


def test_findings_carry_a_verdict_status():
    f = F.make("synccheck", "deadlock", "stuck", {})
    assert f.status is Verdict.ERROR and f.status in STATUSES
    assert verdict_of([f, F.make("racecheck", "uninitialized_read", "pad", {})]) is Verdict.ERROR
    assert verdict_of([]) is Verdict.CLEAN
    assert all(k.status in STATUSES for k in F.KINDS.values())


def test_a_proof_counts_as_a_verdict():
    assert [p.verdict for p in Proof] == [Verdict.CLEAN, Verdict.ERROR, Verdict.INCOMPLETE]
