"""modelcheck.prove: proofs for every size, refutations at the smallest failing size, reports, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import modelcheck
from modelcheck.cli import main
from modelcheck import prove   # the ProofReport: result and its renderings

ROOT = Path(__file__).resolve().parents[3]
KERNELS = ROOT / "kernels"
FIXTURES = ROOT / "tests" / "fixtures" / "prover"


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("kernel", ["ring_pipeline.py", "ring_arith.py"])
def test_d_stage_rings_are_proved_for_every_trip_count(kernel, stages):
    func = modelcheck.load(KERNELS / kernel, STAGES=stages).func
    report = prove(func, symbolic=["ROUNDS"])
    assert report.verdict == "proved", report.format()
    by = {(p.family, p.prop): p.status for p in report.properties}
    for fam in ("full", "empty"):
        for prop in ("P1", "P2", "P3", "P4"):
            assert by[(fam, prop)] == "proved", report.format()


def test_producer_overtaking_is_refuted_at_two_rounds_and_confirmed():
    report = prove(modelcheck.load(KERNELS / "producer_overtaking.py").func, symbolic=["ROUNDS"])
    assert report.verdict == "refuted"
    p3 = next(p for p in report.properties if (p.family, p.prop) == ("full", "P3"))
    assert p3.status == "refuted" and p3.sizes == {"ROUNDS": 2}
    assert p3.finding.kind == "mbarrier_arrive_before_consumption"
    # the fixed twin is proved: the difference is the back-pressure, not the sizes
    assert prove(modelcheck.load(KERNELS / "producer_overtaking_fixed.py").func,
                 symbolic=["ROUNDS"]).verdict == "proved"


def test_a_range_that_excludes_the_failing_sizes_proves():
    """ring_missing_guard deadlocks from ROUNDS=2 on; restricted to ROUNDS = 1 it is fine."""
    func = modelcheck.load(KERNELS / "ring_missing_guard.py").func
    assert prove(func, symbolic=["ROUNDS"], ranges={"ROUNDS": (1, 1)}).verdict == "proved"
    report = prove(func, symbolic=["ROUNDS"], ranges={"ROUNDS": (1, 40)})
    assert report.verdict == "refuted" and report.counterexample["sizes"] == {"ROUNDS": 2}


def test_outside_the_fragment_is_incomplete_with_a_location():
    report = prove(modelcheck.load(FIXTURES / "data_branch.py").func, symbolic=["ROUNDS"])
    assert report.verdict == "incomplete"
    assert report.reasons and "data_branch.py:23:25" in report.reasons[0]
    assert "a branch on a load of flag" in report.reasons[0]
    assert not report.properties


def test_an_unmodeled_operation_anywhere_makes_the_proof_incomplete():
    # the grid sync sits on a path the default constants never take: still never `proved`
    report = prove(modelcheck.load(ROOT / "kernels" / "unreached_grid_sync.py").func, symbolic=["CTAS"])
    assert report.verdict == "incomplete"
    assert "cuda.grid_sync is outside the modeled set" in report.format()


def test_unknown_symbol_is_incomplete_naming_the_constants():
    report = prove(modelcheck.load(KERNELS / "ring_arith.py").func, symbolic=["N"])
    assert report.verdict == "incomplete"
    assert "N is not a module constant" in report.reasons[0] and "ROUNDS" in report.reasons[0]


def test_report_dict_and_text():
    report = prove(modelcheck.load(KERNELS / "producer_overtaking.py").func, symbolic=["ROUNDS"])
    d = json.loads(json.dumps(report.to_dict()))
    assert d["verdict"] == "refuted" and d["symbolic"] == {"ROUNDS": {"lo": 1, "hi": None}}
    assert d["counterexample"]["sizes"] == {"ROUNDS": 2}
    assert d["counterexample"]["confirmed_by"]["kind"] == "mbarrier_arrive_before_consumption"
    assert {p["property"] for p in d["properties"]} == {"P1", "P2", "P3", "P4"}
    assert all(isinstance(p["solver_seconds"], float) for p in d["properties"])
    text = report.format()
    assert text.startswith("prove refuted - producer_overtaking for all ROUNDS in [1, inf]\n")
    assert "counterexample: ROUNDS=2" in text and "confirmed on NumSim at ROUNDS=2" in text


@pytest.mark.parametrize("args,code", [
    (["kernels/ring_arith.py", "--symbolic", "ROUNDS"], 0),
    (["kernels/ring_arith.py", "--symbolic", "ROUNDS", "--max-seconds", "0"], 2),
    (["kernels/producer_overtaking.py", "--symbolic", "ROUNDS=1..8"], 1),
    (["tests/fixtures/prover/data_branch.py", "--symbolic", "ROUNDS"], 2),
    (["kernels/ring_arith.py", "--symbolic", "NOPE"], 64),
    (["kernels/ring_arith.py", "--symbolic", "ROUNDS=9..2"], 64),
])
def test_cli_exit_codes(args, code, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["prove", *args]) == code
    out, err = capsys.readouterr()
    if code == 64:
        assert "--symbolic" in err
    else:
        assert out.startswith("prove ")


def test_cli_json(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["prove", "kernels/ring_arith.py", "--symbolic", "ROUNDS=2..", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "proved" and d["symbolic"] == {"ROUNDS": {"lo": 2, "hi": None}}


def test_identical_consumer_warps_form_one_role_and_the_ring_is_proved():
    """Two consumer warps with the same sync program: one role (the certificate's facts are shown for its first
    warp, the happens-before pairs between the two warps included), and the ring proves for every trip count."""
    from modelcheck.prover.model import Model, role_members, roles
    from modelcheck.prover.skeleton import extract
    func = modelcheck.load(ROOT / "benchmarks" / "kernels" / "ring_family.py", CONSUMERS=2, STAGES=2,
                           ROUNDS=4).func
    m = Model(extract(func, ("ROUNDS",), {c.name: c.value for c in func.constants}), {"ROUNDS": (1, None)}, {})
    role = roles(m)
    assert role[1] == role[2] == 1 and role[0] == 0
    assert role_members(role) == {0: [0], 1: [1, 2]}
    report = prove(func, symbolic=["ROUNDS"])
    assert report.verdict == "proved", report.format()

