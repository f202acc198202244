"""Property: for random access/sync programs, Racecheck's vector-clock verdict equals a brute-force
check over the explicit happens-before graph, and every race it reports is a race in that graph.

The explicit examples pin the rules random search reaches only rarely: acquisition by the waiting
lanes only, release by the arriving lanes only, warp_sync relays on either side, reads before writes.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings

import modelcheck
from modelcheck import numsim
from modelcheck.racecheck.replay import Pass

from .programs import Lanes, Step, oracle_races, programs, render

ALL, ONE0, ONE7, BELOW8 = Lanes("all"), Lanes("one", 0), Lanes("one", 7), Lanes("below", 8)


def _trace(nwarps, steps):
    func = modelcheck.parse(render(nwarps, steps), path="<random program>")
    trace = numsim.Trace()
    out = np.zeros(nwarps * 32 * max(1, len(steps)), dtype=np.int32)
    res = numsim.run(func, {"out": out}, observers=(trace,))
    assert res.termination == "completed", (res.termination, render(nwarps, steps))
    return res, trace


def _judge(nwarps, steps):
    res, trace = _trace(nwarps, steps)
    p = Pass(res.stats["warps"], nwarps, trace.sync, trace.accesses)
    p.run()
    return {(r.prior, r.current) for r in p.races}, oracle_races(trace)


def _handoff(lanes, waiters, a=0, b=1):
    return Step("handoff", a, lanes, to_warp=b, wait_lanes=waiters)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
# one lane writes and arrives; lane 7 waits; lanes that did not wait read: race
@example((2, (Step("store", 0, ONE0, 0, False), _handoff(ONE0, ONE7), Step("load", 1, ALL, 0, False))))
# ... the waiter relays with warp_sync: clean
@example((2, (Step("store", 0, ONE0, 0, False), _handoff(ONE0, ONE7), Step("warp_sync", 1),
              Step("load", 1, ALL, 0, False))))
# all lanes write, one arrives without a warp_sync: race; with it: clean
@example((2, (Step("store", 0, ALL, 0), _handoff(ONE0, ALL), Step("load", 1, ALL, 0))))
@example((2, (Step("store", 0, ALL, 0), Step("warp_sync", 0), _handoff(ONE0, ALL), Step("load", 1, ALL, 0))))
# eight lanes write and arrive (count 8): clean
@example((2, (Step("store", 0, BELOW8, 0), _handoff(BELOW8, ALL), Step("load", 1, BELOW8, 0))))
# reads before an unordered write (read/write), and ordered by a CTA barrier
@example((2, (Step("load", 1, ALL, 0), Step("store", 0, ALL, 0))))
@example((2, (Step("load", 1, ALL, 0), Step("cta_sync"), Step("store", 0, ALL, 0))))
# a chain through a third warp
@example((3, (Step("store", 0, ONE0, 1, False), _handoff(ONE0, ONE0, 0, 1), _handoff(ONE0, ONE0, 1, 2),
              Step("load", 2, ONE0, 1, False))))
@pytest.mark.slow
def test_vector_clocks_agree_with_the_happens_before_graph(prog):
    nwarps, steps = prog
    reported, truth = _judge(nwarps, steps)
    assert bool(reported) == bool(truth), (render(nwarps, steps), sorted(reported), sorted(truth))
    assert reported <= truth, (render(nwarps, steps), sorted(reported - truth))


def test_the_examples_cover_both_verdicts():
    """The oracle itself: the pinned handoffs are racy and clean as the rules say."""
    racy = (Step("store", 0, ONE0, 0, False), _handoff(ONE0, ONE7), Step("load", 1, ALL, 0, False))
    relayed = racy[:2] + (Step("warp_sync", 1),) + racy[2:]
    assert _judge(2, racy)[1]
    assert not _judge(2, relayed)[1]
