"""When a bulk shared->global copy reports its source read: at issue.

The hardware may read a bulk store's source any time from issue until
`cp.async.bulk.wait_group.read` retires it, so NumSim reports the read right after the
`async.issue` event (a reuse of the source in that window then follows the read in the
trace) while the data moves, and the destination write is reported, at completion.
"""
from __future__ import annotations

import numpy as np

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS, inputs_builder, load_manifest

FIXTURES = KERNELS.parent / "tests" / "fixtures" / "numsim"


def _events_and_records(func, inputs):
    trace = numsim.Trace()
    res = numsim.run(func, inputs, observers=[trace])
    assert res.verdict == "clean", res.diagnostics
    return res, trace


def _check_timing(trace, store_kind: str):
    issues = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == store_kind]
    assert issues
    for issue in issues:
        op = issue.details["op"]
        done = next(e for e in trace.sync if e.kind == "async.complete" and e.details.get("op") == op)
        reads = [r for r in trace.accesses if r.actor == op and r.kind == "read"]
        writes = [r for r in trace.accesses if r.actor == op and r.kind == "write"]
        assert reads and writes
        assert all(r.space == "shared" and r.proxy == "async" for r in reads)
        # the source read directly follows its issue; the destination write comes with the completion
        assert all(issue.seq < r.seq < done.seq for r in reads)
        assert not [e for e in trace.sync if issue.seq < e.seq < min(r.seq for r in reads)]
        assert all(w.space == "global" and max(r.seq for r in reads) < w.seq < done.seq for w in writes)


def test_bulk_store_reports_its_source_read_at_issue():
    func = modelcheck.load(FIXTURES / "bulk_s2g.py").func
    g = np.arange(64, dtype=np.int32) * 3
    res, trace = _events_and_records(func, {"g": g, "out": np.full(64, -5, np.int32),
                                            "seen": np.zeros(2, np.int32)})
    _check_timing(trace, "bulk.s2g")
    np.testing.assert_array_equal(res.outputs["out"][16:48], g[16:48] * 2)     # the data still moves


def test_tensor_store_reports_its_source_read_at_issue():
    kernel = modelcheck.load(KERNELS / "tma_store.py")
    entry = load_manifest()["kernels"]["tma_store"]
    inputs = numsim.default_inputs(kernel.func, dict(inputs_builder(entry)(dict(kernel.constants))))
    _, trace = _events_and_records(kernel.func, inputs)
    _check_timing(trace, "tma.s2g")
