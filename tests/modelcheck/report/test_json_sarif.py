"""`to_dict()` (docs/architecture.md#reports: exactly its keys, JSON-safe, stable) and `to_sarif()` (SARIF 2.1.0:
one rule per kind, results with physical and related locations).  jsonschema is not a
dependency, so the SARIF structure is checked by hand against the 2.1.0 schema's required
properties and types."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import modelcheck
from modelcheck.report.sarif import artifact_uri
from tests.manifest import KERNELS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REPORT = FIXTURES / "report"
RING = FIXTURES / "explorer" / "ring.py"
BUGGY = KERNELS / "producer_overtaking.py"
FIXED = KERNELS / "producer_overtaking_fixed.py"
PHASE_B_DEADLOCK = {"STAGES": 3, "ROUNDS": 2, "EMPTY_COUNT": 2, "PRODUCER_START": 0, "CONSUMER_START": 1,
                    "EMPTY_WAIT": 0}
TOP_KEYS = ["schema_version", "checker", "verdict", "summary", "findings", "stats", "input"]
FINDING_KEYS = ["id", "status", "kind", "message", "details"]
LEVELS = {"error": "error", "incomplete": "warning", "review": "note"}


def sync(path, **consts):
    return modelcheck.synccheck(modelcheck.load(path, **consts))


REPORTS = {
    "overtaking": lambda: sync(BUGGY),
    "fixed": lambda: sync(FIXED),
    "related": lambda: sync(REPORT / "unordered_rearm.py"),
    "deadlock": lambda: sync(REPORT / "blocked_ranges.py"),
    "phase_b": lambda: sync(RING, **PHASE_B_DEADLOCK),
    "incomplete": lambda: sync(REPORT / "scalar_param.py"),
}


@pytest.fixture(scope="module", params=sorted(REPORTS))
def report(request):
    return REPORTS[request.param]()


# ---------------------------------------------------------------------- to_dict
def test_to_dict_has_exactly_the_design_keys(report):
    d = report.to_dict()
    assert list(d) == TOP_KEYS
    assert d["schema_version"] == modelcheck.report.SCHEMA_VERSION
    assert d["checker"] == "synccheck"
    assert d["verdict"] == report.verdict
    assert d["summary"] == f"synccheck {report.verdict.upper()} ({len(report.findings)} findings)"
    assert sorted(d["input"]) == ["digest", "scalars", "sources"]
    assert isinstance(d["input"]["digest"], str) and isinstance(d["input"]["scalars"], dict)
    for key in ("wall_time_s", "accesses", "verifier_states", "verifier_transitions"):
        assert key in d["stats"], key
    assert isinstance(d["stats"]["wall_time_s"], float)
    assert [list(f) for f in d["findings"]] == [FINDING_KEYS] * len(report.findings)
    assert [f["id"] for f in d["findings"]] == [f.id for f in report.findings]
    assert [f["status"] for f in d["findings"]] == [f.status for f in report.findings]


def test_to_dict_is_json_safe(report):
    d = report.to_dict()
    text = json.dumps(d, sort_keys=True, allow_nan=False)       # no tuples/numpy/sets/NaN left behind
    assert json.loads(text) == d


def test_to_dict_is_stable_across_runs():
    def dump(r):
        d = r.to_dict()
        for key in [k for k in d["stats"] if "wall_time" in k]:
            del d["stats"][key]
        d["stats"].get("numsim", {}).pop("wall_time_s", None)
        return json.dumps(d, sort_keys=True)

    for make in (REPORTS["phase_b"], REPORTS["related"]):
        assert dump(make()) == dump(make())


def test_phase_b_stats_are_the_header_numbers():
    r = REPORTS["fixed"]()
    s = r.to_dict()["stats"]
    assert (s["verifier_states"], s["verifier_transitions"]) == (3, 22)
    direct = REPORTS["overtaking"]().to_dict()["stats"]
    assert (direct["verifier_states"], direct["verifier_transitions"]) == (0, 0)


def test_scalars_are_recorded(tmp_path):
    func = modelcheck.load(REPORT / "scalar_param.py").func
    import numpy as np
    r = modelcheck.synccheck(func, {"out": np.zeros(32, np.int32), "n": 3})
    d = r.to_dict()
    assert d["verdict"] == "clean"
    assert d["input"]["scalars"] == {"n": 3}
    assert len(d["input"]["digest"]) == 64
    other = modelcheck.synccheck(func, {"out": np.zeros(32, np.int32), "n": 4}).to_dict()
    assert other["input"]["digest"] != d["input"]["digest"]


# ---------------------------------------------------------------------- SARIF 2.1.0
def _region_ok(region: dict) -> None:
    for key in ("startLine", "startColumn", "endLine", "endColumn"):
        assert isinstance(region[key], int) and region[key] >= 1, (key, region)
    assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])


def _location_ok(loc: dict) -> None:
    phys = loc["physicalLocation"]
    assert isinstance(phys["artifactLocation"]["uri"], str) and phys["artifactLocation"]["uri"]
    _region_ok(phys["region"])


def check_sarif(sarif: dict, report) -> None:
    json.dumps(sarif, allow_nan=False)
    assert sarif["version"] == "2.1.0"
    assert "sarif-2.1.0" in sarif["$schema"]
    assert isinstance(sarif["runs"], list) and len(sarif["runs"]) == 1
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rules = driver["rules"]
    kinds = sorted({f.kind for f in report.findings})
    assert [r["id"] for r in rules] == kinds                      # one rule per kind, no duplicates
    for rule in rules:
        assert isinstance(rule["shortDescription"]["text"], str)
        assert rule["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
    results = run["results"]
    assert len(results) == len(report.findings)
    for result, f in zip(results, report.findings):
        assert result["ruleId"] == f.kind
        assert result["level"] == LEVELS[f.status]
        assert result["message"]["text"] == f.message
        assert result["partialFingerprints"]["modelcheckFindingId"] == f.id
        for loc in result.get("locations", []):
            _location_ok(loc)
        ids = []
        for loc in result.get("relatedLocations", []):
            _location_ok(loc)
            assert isinstance(loc["message"]["text"], str)
            assert isinstance(loc["id"], int) and loc["id"] >= 0
            ids.append(loc["id"])
            assert loc["physicalLocation"] != result["locations"][0]["physicalLocation"]
        assert len(ids) == len(set(ids))                          # ids unique within the result


def test_sarif_structure(report):
    check_sarif(report.to_sarif(), report)


def test_sarif_primary_location_is_the_source_operation():
    r = REPORTS["overtaking"]()
    (result,) = r.to_sarif()["runs"][0]["results"]
    (loc,) = result["locations"]
    op = r.findings[0].details["operation"]
    span = op["span"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == artifact_uri(span.file)  # relative to the working directory, as code scanning maps it
    assert loc["physicalLocation"]["region"]["startLine"] == span.line
    assert loc["physicalLocation"]["region"]["startColumn"] == span.col
    assert "relatedLocations" not in result                      # nothing else is involved


def test_sarif_related_locations_are_the_other_operations():
    r = REPORTS["related"]()
    (result,) = r.to_sarif()["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 28
    (rel,) = result["relatedLocations"]
    assert rel["physicalLocation"]["region"]["startLine"] == 31
    assert rel["physicalLocation"]["region"]["startColumn"] == 25
    assert "warp 1" in rel["message"]["text"]


def test_sarif_deadlock_points_at_the_blocked_wait():
    r = REPORTS["deadlock"]()
    (result,) = r.to_sarif()["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 25
    # the three blocked warps wait at the same place: no related location repeats it
    assert "relatedLocations" not in result


def test_sarif_of_a_clean_report_has_no_results():
    sarif = REPORTS["fixed"]().to_sarif()
    assert sarif["runs"][0]["results"] == [] and sarif["runs"][0]["tool"]["driver"]["rules"] == []
