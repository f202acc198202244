"""Run kernels/manifest.json: every kernel, every stage whose checker exists."""
from __future__ import annotations

import pytest

import ir
import modelcheck
from tests.manifest import KERNELS, entries, load_manifest, stage_cases


def test_manifest_lists_every_kernel_file():
    listed = {entry["file"] for _, entry in entries()}
    on_disk = {p.name for p in KERNELS.glob("*.py")}
    assert listed == on_disk


def test_buggy_kernels_have_a_fixed_twin():
    manifest = load_manifest()["kernels"]
    for name, entry in manifest.items():
        twin = entry.get("twin")
        if entry.get("bug"):
            assert twin in manifest, f"{name}: buggy kernel without a listed fixed twin"
            assert not manifest[twin].get("bug"), f"{name}: its twin {twin} is marked buggy too"
            assert manifest[twin]["twin"] == name, f"{twin} does not point back to {name}"


def test_expectations_are_well_formed():
    stages = {"parse", "numsim", "synccheck", "racecheck", "prove"}
    for name, entry in entries():
        assert set(entry["expect"]) <= stages, name
        for stage, expect in entry["expect"].items():
            if expect is None:
                continue
            assert "verdict" in expect, (name, stage)
            assert not ("kinds" in expect and "any_kind" in expect), (name, stage)


@pytest.mark.parametrize("name,entry,expect", stage_cases("parse"), ids=lambda x: x if isinstance(x, str) else "")
def test_parse_stage(name, entry, expect):
    path = KERNELS / entry["file"]
    if expect["verdict"] == "ok":
        kernel = modelcheck.load(path, **entry["constants"])
        assert kernel.func.name == name
        # the canonical text of every corpus kernel parses back to the same IR
        assert ir.parse(kernel.script(), "printed") == kernel.func
    else:
        with pytest.raises(ir.ParseError):
            modelcheck.load(path, **entry["constants"])


def _checker(stage: str):
    return getattr(modelcheck, stage, None)


@pytest.mark.parametrize("stage", ["synccheck", "racecheck"])
def test_checker_stages(stage):
    checker = _checker(stage)
    cases = stage_cases(stage)
    if checker is None:
        pytest.skip(f"modelcheck.{stage} is not implemented yet ({len(cases)} manifest expectations wait for it)")
    failures = []
    for name, entry, expect in cases:
        kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
        report = checker(kernel.func, inputs=None)
        kinds = {f.kind for f in report.findings}
        if report.verdict != expect["verdict"]:
            failures.append(f"{name}: verdict {report.verdict}, expected {expect['verdict']}\n{report.format()}")
        elif "kinds" in expect and set(expect["kinds"]) - kinds:
            failures.append(f"{name}: missing kinds {sorted(set(expect['kinds']) - kinds)}")
        elif "any_kind" in expect and not kinds & set(expect["any_kind"]):
            failures.append(f"{name}: none of {expect['any_kind']} in {sorted(kinds)}")
    assert not failures, "\n".join(failures)
