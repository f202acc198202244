"""Run kernels/manifest.json: every kernel, every stage whose checker exists."""
from __future__ import annotations

import importlib.util

import pytest

import ir
import modelcheck
from modelcheck import numsim
from tests.manifest import (INPUT_BUILDERS, KERNELS, entries, inputs_builder, load_manifest, manifest_inputs,
                            manifest_overrides, stage_cases)


def test_manifest_lists_every_kernel_file():
    listed = {entry["file"] for _, entry in entries()}
    # kernels/ and the real-syntax corpus in kernels/real/ (its pending/ kernels wait for the front end)
    on_disk = {p.name for p in KERNELS.glob("*.py")} | {f"real/{p.name}" for p in (KERNELS / "real").glob("*.py")}
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
        builder = entry.get("inputs_builder")
        if builder is not None:
            module, sep, function = builder.partition(":")
            assert sep and (INPUT_BUILDERS / f"{module}.py").is_file(), (name, builder)
            assert callable(inputs_builder(entry)), (name, builder)


@pytest.mark.parametrize("name,entry,expect", stage_cases("parse"), ids=lambda x: x if isinstance(x, str) else "")
def test_parse_stage(name, entry, expect):
    path = KERNELS / entry["file"]
    if expect["verdict"] == "ok":
        kernel = modelcheck.load(path, **entry["constants"])
        assert kernel.func.name == entry.get("function", name)
        # the canonical text of every corpus kernel parses back to the same IR
        assert ir.parse(kernel.script(), "printed") == kernel.func
    else:
        with pytest.raises(ir.ParseError):
            modelcheck.load(path, **entry["constants"])


def tirx_authoring_entries() -> list[tuple[str, dict]]:
    """Entries in the apache-tvm-tirx authoring form: all but the real-syntax kernels in other forms."""
    return [(n, e) for n, e in entries() if e.get("real_parsers", {}).get("apache-tvm-tirx-0.1.0a4", "ok") == "ok"]


def _subfolder_authoring_files() -> list[tuple[str, str]]:
    """(file, function) of the authoring-form kernels outside kernels/'s top level, once per file: the real
    parser runs at import, so twins that differ only in constants import the same text, and the top-level
    files are imported by tests/conformance/test_real_parser.py (which also compares the real print)."""
    files = {e["file"]: e.get("function", n) for n, e in tirx_authoring_entries() if "/" in e["file"]}
    return sorted(files.items())


def test_top_level_authoring_kernels_are_the_conformance_tests_kernels():
    # the split above stays exhaustive: every top-level authoring kernel is one the conformance test imports
    top = {e["file"] for _, e in tirx_authoring_entries() if "/" not in e["file"]}
    recorded_rejected = {e["file"] for _, e in entries()
                         if e.get("real_parsers", {}).get("apache-tvm-tirx-0.1.0a4") == "rejects"}
    assert top == {p.name for p in KERNELS.glob("*.py")} - recorded_rejected


@pytest.mark.conformance
@pytest.mark.parametrize("file,function", _subfolder_authoring_files())
def test_real_parser_accepts_kernel(file, function):
    """Every authoring-form corpus kernel is valid TIRx: importing it runs the real parser (the real-syntax
    kernels in the apache-tvm 0.27 forms are checked in tests/conformance/test_real_syntax_corpus.py)."""
    pytest.importorskip("tvm_tirx")
    path = KERNELS / file
    spec = importlib.util.spec_from_file_location(f"_kernel_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)    # @T.function parses (and checks every T.ptx op) at import
    assert getattr(module, function) is not None


def expectation_failure(name: str, verdict: str, kinds: set, expect: dict, text: str = "") -> str | None:
    if verdict != expect["verdict"]:
        return f"{name}: verdict {verdict}, expected {expect['verdict']}\n{text}"
    if "kinds" in expect and set(expect["kinds"]) - kinds:
        return f"{name}: missing kinds {sorted(set(expect['kinds']) - kinds)} in {sorted(kinds)}\n{text}"
    if "any_kind" in expect and not kinds & set(expect["any_kind"]):
        return f"{name}: none of {expect['any_kind']} in {sorted(kinds)}\n{text}"
    return None


@pytest.mark.parametrize("name,entry,expect", stage_cases("numsim"), ids=lambda x: x if isinstance(x, str) else "")
def test_numsim_stage(name, entry, expect):
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    result = numsim.run(kernel.func, manifest_inputs(kernel.func, entry, kernel.constants))
    kinds = {d.kind for d in result.diagnostics}
    failure = expectation_failure(name, result.verdict, kinds, expect, "\n".join(map(str, result.diagnostics)))
    assert failure is None, failure
    # a clean run completes; an error stops the run (unless the entry says the run goes on past it, as
    # with a register read before its async wait); clean kernels report no diagnostics at all
    assert result.termination == expect.get("termination", {"clean": "completed", "review": "completed",
                                                             "error": "error", "incomplete": "incomplete"}
                                            [expect["verdict"]])
    if expect["verdict"] == "clean":
        assert result.diagnostics == ()


@pytest.mark.parametrize("stage,name,entry,expect",
                         [(stage, *case) for stage in ("synccheck", "racecheck") for case in stage_cases(stage)],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_checker_stage(stage, name, entry, expect):
    # one test per kernel and checker: the runs spread over the workers instead of one long test per checker
    checker = getattr(modelcheck, stage)
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    inputs = manifest_inputs(kernel.func, entry, kernel.constants) if entry.get("inputs_builder") else None
    report = checker(kernel.func, inputs=inputs)
    failure = expectation_failure(name, report.verdict, {f.kind for f in report.findings}, expect,
                                  report.format() if report.verdict != expect["verdict"] else "")
    assert failure is None, failure


@pytest.mark.parametrize("name,entry,expect", stage_cases("prove"), ids=lambda x: x if isinstance(x, str) else "")
def test_prove_stage(name, entry, expect):
    """`prove` with the listed symbolic ranges: proved, or refuted at exactly the listed smallest sizes."""
    from modelcheck import prove    # the ProofReport: result and its renderings
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    ranges = {n: (lo, hi) for n, (lo, hi) in expect["symbolic"].items()}
    # the prover runs the kernel at several sizes (TMA byte counts, the refutation sweep, replay):
    # inputs are built for each from the constants at that size
    inputs = (lambda consts: manifest_overrides(entry, consts)) if entry.get("inputs_builder") else None
    report = prove(kernel.func, symbolic=list(ranges), ranges=ranges, inputs=inputs)
    assert report.verdict == expect["verdict"], report.format()
    if "sizes" in expect:
        assert report.counterexample["sizes"] == expect["sizes"], report.format()
        assert report.counterexample.get("confirmed_by"), report.format()
