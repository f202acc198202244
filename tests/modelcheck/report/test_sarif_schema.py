"""SARIF that GitHub code scanning accepts (issue 16 item 4): valid against the official SARIF 2.1.0 schema
(vendored under tests/fixtures/sarif, never downloaded), one run with automationDetails, a location on every
result (an incomplete one at the kernel's def line), rules whose help is the kind's docs page."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import modelcheck
from modelcheck.cli import main
from modelcheck.report import kinds
from tests.manifest import INPUT_BUILDERS, KERNELS

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "sarif" /
                     "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def _valid(sarif: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    (run,) = sarif["runs"]
    assert run["automationDetails"]["id"].startswith("modelcheck/") and run["automationDetails"]["id"].endswith("/")
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for result in run["results"]:
        (loc,) = result["locations"]
        assert loc["physicalLocation"]["artifactLocation"]["uri"]
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
        assert rules[result["ruleId"]]["help"]["text"]


def test_the_schema_rejects_what_code_scanning_rejects():
    """The validator is live: a result without a message and a region at line 0 are errors."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"ruleId": "r", "locations": [{"physicalLocation": {
                                             "artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}]}]}
    messages = [e.message for e in VALIDATOR.iter_errors(bad)]
    assert any("'message' is a required property" in m for m in messages)
    with pytest.raises(AssertionError):
        _valid(bad)


def test_sarif_of_a_kda_bug_validates_and_has_one_result_per_bug(tmp_path, capsys):
    out = tmp_path / "kda.sarif"
    kernel = KERNELS / "kda_fwd_single_m_o.py"
    rc = main(["check", str(kernel), "--inputs", f"{INPUT_BUILDERS / 'kda.py'}:kda_fwd", "--sarif", str(out)])
    text = capsys.readouterr().out
    assert rc == 1
    sarif = json.loads(out.read_text())
    _valid(sarif)
    (run,) = sarif["runs"]
    assert run["automationDetails"]["id"] == "modelcheck/check/"
    ids = [r["partialFingerprints"]["modelcheckFindingId"] for r in run["results"]]
    assert len(ids) == len(set(ids)) and len(ids) == text.count("[ERROR]") + text.count("[REVIEW]") + \
        text.count("[INCOMPLETE]")
    data_race = [r for r in run["rules"]] if "rules" in run else run["tool"]["driver"]["rules"]
    for rule in data_race:
        page = kinds.page(rule["id"])
        if page is not None:
            assert rule["help"]["text"] == page


def test_an_incomplete_result_points_at_the_kernel_def_line(tmp_path, capsys):
    kernel = KERNELS / "tma_store.py"           # its tensor map is missing: the analysis is incomplete
    out = tmp_path / "inc.sarif"
    assert main(["race", str(kernel), "--sarif", str(out)]) == 2
    sarif = json.loads(out.read_text())
    _valid(sarif)
    (result,) = sarif["runs"][0]["results"]
    assert result["level"] == "warning" and result["properties"]["status"] == "incomplete"
    func = modelcheck.load(kernel).func
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == func.span.line
    assert "def tma_store" in kernel.read_text().splitlines()[func.span.line - 1]


def test_several_kernels_make_one_run(tmp_path, capsys):
    out = tmp_path / "all.sarif"
    files = [str(KERNELS / "producer_overtaking.py"), str(KERNELS / "producer_overtaking_fixed.py"),
             str(KERNELS / "hang_wrong_parity.py")]
    assert main(["sync", *files, "--sarif", str(out)]) == 1
    sarif = json.loads(out.read_text())
    _valid(sarif)
    (run,) = sarif["runs"]
    assert run["automationDetails"]["id"] == "modelcheck/sync/"
    assert set(run["properties"]["verdicts"]) == {"producer_overtaking", "producer_overtaking_fixed",
                                                  "hang_wrong_parity"}
    assert {r["properties"]["kernel"] for r in run["results"]} == {"producer_overtaking", "hang_wrong_parity"}
