"""`modelcheck states` and explorer.reductions: what the verifier explored under each reduction."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import modelcheck
from modelcheck.cli import EXIT_USAGE, main
from modelcheck.explorer import reductions
from modelcheck.synccheck import phase_a
from tests.manifest import KERNELS

RING = str(Path(__file__).resolve().parents[2] / "benchmarks" / "kernels" / "ring_family.py")
PROJECTIONS = ["full[0]", "full[1]", "empty[0]", "empty[1]", "named barrier 0"]


def programs_of(**consts):
    a = phase_a(modelcheck.load(RING, **consts).func)
    assert a.programs is not None and not a.findings
    return a.programs


@pytest.fixture(scope="module")
def two_consumer_rows():
    programs = programs_of(PRODUCERS=1, CONSUMERS=2, STAGES=2, ROUNDS=6)
    return programs, {row["config"]: row for row in reductions.measure(programs)}


def test_certificates_settle_every_projection_of_a_clean_ring_in_one_state(two_consumer_rows):
    programs, rows = two_consumer_rows
    a = rows["a"]
    assert a["status"] == "complete"
    assert [p["resource"] for p in a["per_projection"]] == PROJECTIONS
    assert all(p["method"] == "certificate" and p["states"] == 1 for p in a["per_projection"])
    assert a["states"] == len(PROJECTIONS) == a["certified"] and a["searched"] == 0
    # a certificate counts each command of its projection once
    assert a["transitions"] == programs.size() == sum(p["transitions"] for p in a["per_projection"])


def test_each_reduction_explores_less_than_the_unreduced_search(two_consumer_rows):
    _, rows = two_consumer_rows
    assert all(row["status"] == "complete" for row in rows.values())
    a, b, c, d = (rows[k] for k in "abcd")
    # the searches enumerate the orders of the two consumers' concurrent waits and arrivals
    assert all(p["method"] == "search" and p["states"] > 2 for p in b["per_projection"] + c["per_projection"])
    assert a["states"] < b["states"]
    # sleep sets prune transitions, not states
    assert b["states"] == c["states"] and b["transitions"] < c["transitions"]
    # projection with happens-before gating beats the product of all warps' programs
    assert c["states"] < d["states"] and c["transitions"] < d["transitions"]
    assert d["projections"] == 1 and d["per_projection"] == []


def test_a_limit_is_reported_as_a_limit_not_as_a_count():
    programs = programs_of(PRODUCERS=1, CONSUMERS=3, STAGES=2, ROUNDS=8)
    rows = {row["config"]: row for row in reductions.measure(programs, "acd", max_states=30)}
    assert rows["a"]["status"] == "complete" and rows["a"]["states"] == 5
    for key in "cd":
        assert rows[key]["status"] == "limit" and rows[key]["limit"] == "fixed_sync_states"
        assert reductions.describe(rows[key]).startswith("> limit (fixed_sync_states")
    assert rows["c"]["stopped_at"] == "full[0]" and len(rows["c"]["per_projection"]) == 1
    with pytest.raises(ValueError, match="unknown configuration"):
        reductions.measure(programs, "ax")


def test_states_command_prints_every_configuration_and_projection(capsys):
    code = main(["states", RING, "--const", "CONSUMERS=2", "--const", "STAGES=2", "--const", "ROUNDS=6"])
    out = capsys.readouterr().out
    assert code == 0
    assert "explorer states - ring_family: 3 warp(s)" in out and "5 projection(s)" in out
    for key, label in reductions.CONFIGURATIONS.items():
        assert f"({key}) {label}" in out
    lines = out.splitlines()
    for name in PROJECTIONS:
        row = next(line for line in lines if line.startswith(name + " "))
        cells = [c.split() for c in row.split("|")[1:]]
        assert len(cells) == 3                       # (a), (b), (c)
        assert cells[0][:2] == ["certificate", "1"]  # method, states
        assert cells[1][0] == cells[2][0] == "search" and int(cells[1][1]) > 1
    summary = {m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
               for m in re.finditer(r"^\((\w)\) .*?\s([\d,]+)\s+([\d,]+)\s+[\d.]+\s+complete$", out, re.M)}
    assert set(summary) == set("abcd")
    assert summary["a"][0] == 5 and summary["d"][0] > summary["c"][0] > summary["a"][0]


def test_states_command_json_and_config_selection(capsys):
    code = main(["states", RING, "--const", "CONSUMERS=2", "--const", "ROUNDS=4", "--configs", "a,d", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["kernel"] == "ring_family" and payload["warps"] == 3
    assert payload["projections"][-1] == "named barrier 0" and len(payload["projections"]) == 9
    assert [row["config"] for row in payload["configurations"]] == ["a", "d"]
    assert payload["configurations"][0]["states"] == 9


def test_states_command_limit_and_usage(capsys):
    assert main(["states", RING, "--const", "CONSUMERS=3", "--const", "STAGES=2", "--const", "ROUNDS=8",
                 "--configs", "c", "--max-states", "30"]) == 2      # the first configuration stopped: incomplete
    out = capsys.readouterr().out
    assert "> limit (fixed_sync_states in full[0])" in out and "not explored" in out
    assert main(["states", RING, "--configs", "xyz"]) == EXIT_USAGE
    assert "--configs" in capsys.readouterr().err


def test_states_command_needs_a_phase_a_that_completes(capsys):
    code = main(["states", str(KERNELS / "hang_wrong_parity.py")])
    err = capsys.readouterr().err
    assert code == 1
    assert "did not give sync programs" in err and "deadlock" in err
