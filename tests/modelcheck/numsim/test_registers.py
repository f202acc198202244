"""Asynchronous register results (modelcheck.numsim.registers): tcgen05.ld destinations are
undefined until tcgen05.wait::ld, and touching them in between is an error with both sites."""
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


def test_read_before_wait_is_an_error_naming_both_sites_and_reads_an_undefined_value():
    func, inputs = _run("tmem_ld_read_before_wait")
    res = numsim.run(func, inputs)
    [diag] = res.diagnostics_of(KIND)
    assert diag.status == "error" and diag.details["access"] == "read"
    read, issue = res.sites[diag.details["site"]], res.sites[diag.details["issue_site"]]
    assert "out[tx, c * CHUNK + j] = acc[j]" in read.text and read.span.line == 37
    assert issue.op == "tcgen05.ld" and issue.span.line == 35
    assert np.isnan(res.outputs["out"]).all()       # every register read before its wait is undefined
    report = modelcheck.synccheck(func, inputs)
    [finding] = [f for f in report.findings if f.kind == KIND]
    assert finding.details["operation"]["span"].line == 37
    assert finding.details["related_operations"][0]["span"].line == 35


def test_the_wait_delivers_the_loaded_values():
    func, inputs = _run("tmem_ld_read_before_wait_fixed")
    res = numsim.run(func, inputs)
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])


def test_overwriting_a_pending_register_is_an_error_and_the_wait_wins():
    text = (KERNELS / "tmem_ld_read_before_wait_fixed.py").read_text()
    text = text.replace("                    T.ptx.tcgen05.wait__ld.sync.aligned()\n",
                        "                    acc[0] = T.float32(7)\n                    T.ptx.tcgen05.wait__ld.sync.aligned()\n")
    func, inputs = _run("tmem_ld_read_before_wait_fixed", text)
    res = numsim.run(func, inputs)
    [diag] = res.diagnostics_of(KIND)
    assert diag.details["access"] == "write" and diag.details["registers"] == ["acc[0]"]
    np.testing.assert_array_equal(res.outputs["out"], inputs["x"])   # the asynchronous result lands last


@pytest.mark.parametrize("name", ["gemm_ws", "race_tcgen05_handoff_no_after_fence_fixed"])
def test_dropping_wait_ld_from_a_realistic_kernel_is_found(name):
    entry = load_manifest()["kernels"][name]
    text = (KERNELS / entry["file"]).read_text()
    assert "T.ptx.tcgen05.wait__ld.sync.aligned()" in text
    func, inputs = _run(name, text.replace("T.ptx.tcgen05.wait__ld.sync.aligned()", "T.evaluate(0)"))
    for report in (modelcheck.synccheck(func, inputs), modelcheck.racecheck(func, inputs)):
        assert report.verdict == "error"
        assert KIND in {f.kind for f in report.findings}
