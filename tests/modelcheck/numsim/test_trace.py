"""The exact sync-event trace of the producer-overtaking pair (issue #3: "the trace of the
producer-overtaking kernels lists every sync event with its generation and source line").

Each event is (kind, warp, barrier, generation, parity, source line, loop-iteration vector).
Source lines are looked up by the unique text of the statement in the kernel file, so the
expectation names the statement while the test still compares exact line numbers.
"""
from __future__ import annotations

import numpy as np

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS


def line_of(kernel: str, snippet: str) -> int:
    lines = [k + 1 for k, text in enumerate((KERNELS / f"{kernel}.py").read_text().splitlines()) if snippet in text]
    assert len(lines) == 1, (kernel, snippet, lines)
    return lines[0]


def traced(kernel: str):
    k = modelcheck.load(KERNELS / f"{kernel}.py")
    trace = numsim.Trace()
    res = numsim.run(k.func, {"out": np.zeros(4, np.int32)}, observers=[trace])
    names = {}                                   # mbarrier address -> the buffer its init names
    for e in trace.sync:
        if e.kind == "mbarrier.init":
            text = res.sites[e.site].text
            names[e.barrier] = text[text.index("(") + 1:text.index(".ptr_to")]
    rows = []
    sync = [e for e in trace.sync if e.kind != "warp.exit"]      # (a warp's exit names no site)
    for e in sync:
        if e.barrier is None:
            bar = None
        elif e.barrier[0] == "named":
            bar = f"named {e.barrier[2]}"
        else:
            bar = names[e.barrier]
        rows.append((e.kind, e.warp, bar, e.generation, e.parity, res.sites[e.site].span.line, e.iters))
    assert [e.seq for e in trace.sync] == sorted(e.seq for e in trace.sync)
    assert all(res.sites[e.site].span.file.endswith(f"{kernel}.py") for e in sync)
    return res, trace, rows


def prologue(kernel: str) -> list:
    init_full = line_of(kernel, "init.shared.b64(full")
    fence = line_of(kernel, "fence.mbarrier_init")
    cta = line_of(kernel, "cta_sync")
    rows = [("mbarrier.init", 0, "full", 0, None, init_full, ())]
    if kernel.endswith("_fixed"):
        rows.append(("mbarrier.init", 0, "empty", 0, None, line_of(kernel, "init.shared.b64(empty"), ()))
    return rows + [
        ("fence.mbarrier_init", 0, None, None, None, fence, ()),
        # warp 0 contributes first and blocks; warp 1 completes generation 0 and runs on
        ("bar.sync", 0, "named 0", 0, None, cta, ()),
        ("bar.sync", 1, "named 0", 0, None, cta, ()),
        ("bar.wait", 1, "named 0", 0, None, cta, ()),
        ("bar.wait", 0, "named 0", 0, None, cta, ()),
    ]


def test_trace_of_producer_overtaking_fixed():
    kernel = "producer_overtaking_fixed"
    res, trace, rows = traced(kernel)
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], [7, 17, 27, 37])
    wait_empty = line_of(kernel, "mbarrier_wait(empty")
    arrive_full = line_of(kernel, "arrive.shared.b64(full")
    wait_full = line_of(kernel, "mbarrier_wait(full")
    arrive_empty = line_of(kernel, "arrive.shared.b64(empty")
    expected = prologue(kernel)
    for r in range(4):
        expected += [
            # round 0's empty wait is the vacuous parity-1 wait after init: it observes no generation
            ("mbarrier.wait", 0, "empty", None if r == 0 else r - 1, (r + 1) % 2, wait_empty, (r,)),
            ("mbarrier.arrive", 0, "full", r, None, arrive_full, (r,)),
            ("mbarrier.wait", 1, "full", r, r % 2, wait_full, (r,)),
            ("mbarrier.arrive", 1, "empty", r, None, arrive_empty, (r,)),
        ]
    assert rows == expected
    arrives = [e for e in trace.sync if e.kind == "mbarrier.arrive"]
    assert all(e.completed and e.count == 1 and e.lane_list() == [0] for e in arrives)
    assert [e.count for e in trace.sync if e.kind == "mbarrier.init"] == [1, 1]


def test_trace_of_producer_overtaking():
    kernel = "producer_overtaking"
    res, trace, rows = traced(kernel)
    arrive_full = line_of(kernel, "arrive.shared.b64(full")
    wait_full = line_of(kernel, "mbarrier_wait(full")
    # nothing holds the producer back: it re-arms `full` four times (generations 0..3) before the
    # consumer's round-0 wait is looked at again, and that wait never passes, so it has no event
    expected = prologue(kernel) + [("mbarrier.arrive", 0, "full", r, None, arrive_full, (r,)) for r in range(4)]
    assert rows == expected
    assert all(e.completed for e in trace.sync if e.kind == "mbarrier.arrive")
    [d] = res.diagnostics
    assert d.kind == "deadlock" and res.termination == "error"
    [blocked] = d.details["blocked"]
    assert blocked["warp"] == 1 and blocked["iters"] == [0]
    assert blocked["awaits"] == "await mbarrier.try_wait on full[0]; phase 0"
    assert res.sites[blocked["site"]].span.line == wait_full and d.span.line == wait_full
