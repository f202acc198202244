"""as_func on real tvm_tirx objects: findings at the user's own lines, constants named where recoverable.

The fixtures in tests/fixtures/source_map/ are imported through the real apache-tvm-tirx parser; the waits
of their one-phase-off ring are marked `# WAIT empty` / `# WAIT full`.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import ir
import modelcheck

pytest.importorskip("tvm_tirx")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "source_map"


def _import(name: str):
    path = FIXTURES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"source_map_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait_lines(name: str) -> dict[str, int]:
    lines = (FIXTURES / f"{name}.py").read_text(encoding="utf-8").splitlines()
    return {ln.rsplit("# WAIT ", 1)[1]: n for n, ln in enumerate(lines, 1) if "# WAIT " in ln}


def _blocked_spans(report) -> list:
    (deadlock,) = [f for f in report.findings if f.kind == "deadlock"]
    return [b["operation"]["span"] for b in deadlock.details["blocked"]]


def _check_locations(obj, name: str):
    """The deadlock names the fixture's two waits, in the text, the JSON and the SARIF."""
    file = str(FIXTURES / f"{name}.py")
    waits = _wait_lines(name)
    report = modelcheck.synccheck(obj)
    assert report.verdict == "error"
    spans = _blocked_spans(report)
    assert {(s.file, s.line) for s in spans} == {(file, waits["empty"]), (file, waits["full"])}
    text = report.format()
    source = (FIXTURES / f"{name}.py").read_text(encoding="utf-8").splitlines()
    for line in waits.values():
        assert f"{file}:{line}:" in text
        assert source[line - 1].strip() in text            # the excerpt is the user's line, read from the file
    payload = json.loads(json.dumps(report.to_dict()))
    (deadlock,) = [f for f in payload["findings"] if f["kind"] == "deadlock"]
    found = {(b["operation"]["span"]["file"], b["operation"]["span"]["line"]) for b in deadlock["details"]["blocked"]}
    assert found == {(file, waits["empty"]), (file, waits["full"])}
    (result,) = [r for r in report.to_sarif()["runs"][0]["results"] if r["ruleId"] == "deadlock"]
    places = [loc["physicalLocation"] for loc in result["locations"] + result.get("relatedLocations", [])]
    at = {(p["artifactLocation"]["uri"].rsplit("/", 1)[-1], p["region"]["startLine"]) for p in places}
    assert {(f"{name}.py", waits["empty"]), (f"{name}.py", waits["full"])} <= at
    primary = result["locations"][0]["physicalLocation"]
    assert primary["region"]["startLine"] in waits.values()
    return report


def test_a_file_modelcheck_reads_is_the_answer_with_named_constants():
    obj = _import("parity_hang").parity_hang
    func = ir.as_func(obj)
    assert func.path == str(FIXTURES / "parity_hang.py")
    assert func.constant_values == {"ROUNDS": 4}
    assert "is the object's IR" in func.origin
    assert ir.same_ir(func, ir.parse(obj.script()))
    report = _check_locations(obj, "parity_hang")
    assert "source: " + str(FIXTURES / "parity_hang.py") in report.format()
    assert report.to_dict()["stats"]["kernel"]["source"] == func.origin


def test_a_jit_specialization_keeps_its_constexpr_named_at_the_specialized_value():
    jit = _import("parity_hang_jit").parity_hang_jit
    func = ir.as_func(jit.specialize(ROUNDS=6))
    assert func.constant_values == {"ROUNDS": 6}
    assert "at ROUNDS=6" in func.origin
    _check_locations(jit.specialize(ROUNDS=6), "parity_hang_jit")
    proof = modelcheck.prove(jit.specialize(ROUNDS=6), symbolic=["ROUNDS"])
    assert proof.verdict == "refuted"                     # ROUNDS is symbolic: the ring fails from ROUNDS=1 on
    assert "ROUNDS=1" in proof.format()


def test_a_factory_kernel_takes_the_objects_locations_and_says_what_is_printed():
    module = _import("parity_hang_factory")
    func = ir.as_func(module.KERNEL)
    assert func.path == "<parity_hang_factory.script()>"
    assert func.constants == ()                           # the closure's size is folded in the object
    assert func.span is not None and func.span.file == str(FIXTURES / "parity_hang_factory.py")
    assert "19 of 21 statements" in func.origin and "folded" in func.origin
    loops = [n for n in ir.walk(func.body) if isinstance(n, ir.For)]
    assert loops and all(n.span.file == func.path for n in loops)   # tvm_tirx keeps no location for a `for`
    ifs = [n for n in ir.walk(func.body) if isinstance(n, ir.If)]
    assert ifs and all(n.span.file.endswith("parity_hang_factory.py") for n in ifs)   # at their conditions
    report = _check_locations(module.KERNEL, "parity_hang_factory")
    assert "19 of 21 statements" in report.format()
    proof = modelcheck.prove(module.KERNEL, symbolic=["ROUNDS"])
    assert proof.verdict == "incomplete" and "folded" in proof.format()


def test_an_object_that_is_not_a_tvm_object_parses_as_before():
    text = (FIXTURES / "parity_hang.py").read_text(encoding="utf-8")

    class Scripted:
        def script(self):
            return text

    func = ir.as_func(Scripted())
    assert func.path == "<Scripted.script()>" and func.origin == ""
    assert func.constant_values == {"ROUNDS": 4}


def test_an_irmodule_checks_its_function():
    from tvm_tirx.ir import IRModule

    obj = _import("parity_hang").parity_hang
    func = ir.as_func(IRModule({"main": obj}))
    assert func.name == "parity_hang" and func.path == str(FIXTURES / "parity_hang.py")
    assert ir.as_func(IRModule({"main": obj}), kernel_name="main") == func
    with pytest.raises(ir.UsageError, match="no function other"):
        ir.as_func(IRModule({"main": obj}), kernel_name="other")
