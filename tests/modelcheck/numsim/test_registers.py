"""Asynchronous register results (modelcheck.numsim.registers): tcgen05.ld destinations are
undefined until tcgen05.wait::ld; the issuing thread's read waits for them (a true register
dependency), a write in between is an error with both sites."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS, load_manifest, manifest_inputs

KIND = "async_register_access_before_wait"


def _run(name: str, text: str | None = None):
    entry = load_manifest()["kernels"][name]
    path = KERNELS / entry["file"]
    func = modelcheck.parse(text, str(path)) if text is not None else modelcheck.load(path).func
    return func, manifest_inputs(func, entry, func.constant_values)


def test_write_before_wait_is_an_error_naming_both_sites():
    func, inputs = _run("tmem_ld_write_before_wait")
    res = numsim.run(func, inputs)
    [diag] = res.diagnostics_of(KIND)
    assert diag.status == "error" and diag.details["access"] == "write"
    write, issue = res.sites[diag.details["site"]], res.sites[diag.details["issue_site"]]
    assert "acc[j] = T.float32(0)" in write.text and write.span.line == 39
    assert issue.op == "tcgen05.ld" and issue.span.line == 37
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])   # the asynchronous result lands last
    report = modelcheck.synccheck(func, inputs)
    [finding] = [f for f in report.findings if f.kind == KIND]
    assert finding.details["operation"]["span"].line == 39
    assert finding.details["related_operations"][0]["span"].line == 37


def test_the_wait_delivers_the_loaded_values():
    func, inputs = _run("tmem_ld_write_before_wait_fixed")
    res = numsim.run(func, inputs)
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])


def _fixed_with(before_wait: str, after_wait: str = ""):
    """The fixed twin with statements (at the chunk loop's indentation) just before and after the wait."""
    text = (KERNELS / "tmem_ld_write_before_wait_fixed.py").read_text()
    wait = "                    T.ptx.tcgen05.wait__ld.sync.aligned()\n"
    assert text.count(wait) == 1
    text = text.replace(wait, before_wait + wait + after_wait)
    return _run("tmem_ld_write_before_wait_fixed", text)


def test_a_read_before_the_wait_is_a_true_register_dependency():
    # PTX ISA 9.7.16.6.4.5: the thread's own read of a tcgen05.ld destination is ordered after the load
    func, inputs = _fixed_with("                    for j in range(CHUNK):\n"
                               "                        out[tx, c * CHUNK + j] = acc[j]\n")
    res = numsim.run(func, inputs)
    assert res.verdict == "clean" and not res.diagnostics_of(KIND)
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])
    for report in (modelcheck.synccheck(func, inputs), modelcheck.racecheck(func, inputs)):
        assert KIND not in {f.kind for f in report.findings}


def test_a_write_after_the_dependency_is_not_undone_by_the_wait():
    # the read delivered acc[0]; the write after it is ordered, and the later wait must not restore the load
    func, inputs = _fixed_with("                    out[tx, c * CHUNK] = acc[0]\n"
                               "                    acc[0] = T.float32(7)\n")
    res = numsim.run(func, inputs)
    assert not res.diagnostics_of(KIND)
    expect = inputs["x"].copy()
    expect[:, ::4] = 7
    np.testing.assert_array_equal(res.outputs["out"], expect)


def test_a_read_by_some_lanes_delivers_only_theirs():
    # even lanes read acc[1] early; odd lanes then overwrite it before the wait: an error for them only
    func, inputs = _fixed_with("                    if tx % 2 == 0:\n"
                               "                        out[tx, c * CHUNK + 1] = acc[1]\n"
                               "                    else:\n"
                               "                        acc[1] = T.float32(7)\n")
    res = numsim.run(func, inputs)
    [diag] = res.diagnostics_of(KIND)
    assert diag.details["access"] == "write" and diag.details["registers"] == ["acc[1]"]
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])


@pytest.mark.parametrize("name", ["gemm_ws", "race_tcgen05_handoff_no_after_fence_fixed"])
def test_dropping_wait_ld_where_every_loaded_register_is_read_first_keeps_the_values(name):
    # each epilogue reads its tcgen05.ld registers before touching them otherwise: true dependencies
    entry = load_manifest()["kernels"][name]
    text = (KERNELS / entry["file"]).read_text()
    assert "T.ptx.tcgen05.wait__ld.sync.aligned()" in text
    func, inputs = _run(name)
    dropped, _ = _run(name, text.replace("T.ptx.tcgen05.wait__ld.sync.aligned()", "T.evaluate(0)"))
    with_wait, without = numsim.run(func, inputs), numsim.run(dropped, inputs)
    assert not without.diagnostics_of(KIND)
    for key, value in with_wait.outputs.items():
        np.testing.assert_array_equal(without.outputs[key], value)
