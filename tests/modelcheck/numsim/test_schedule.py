"""NumSim's forced schedules (modelcheck.numsim.schedule): the gate holds scheduled operations until their
step, counts occurrences the way a default run's trace does, and reports a schedule it cannot follow."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.schedule import Schedule, Step, occurrences
from tests.manifest import KERNELS

OVERTAKING = modelcheck.load(KERNELS / "producer_overtaking.py").func
RELAXED = modelcheck.load(KERNELS / "race_relaxed_try_wait.py").func
ARRIVE, WAIT = 4, 5            # producer_overtaking: the producer's arrive and the consumer's wait sites


def _out():
    return {"out": np.zeros(4, np.int32)}


def test_default_run_has_no_schedule_and_deadlocks_the_lapped_consumer():
    res = numsim.run(OVERTAKING, _out())
    assert res.schedule is None
    assert res.diagnostics[0].kind == "deadlock" and list(res.outputs["out"]) == [0, 0, 0, 0]


def test_occurrences_count_each_warps_events_per_site_and_kind():
    trace = numsim.Trace()
    numsim.run(OVERTAKING, _out(), observers=(trace,))
    occ = occurrences(trace.sync, trace.accesses)
    arrives = [occ[id(e)] for e in trace.sync if e.kind == "mbarrier.arrive"]
    assert arrives == [(0, ARRIVE, "mbarrier.arrive", k) for k in range(4)]
    writes = [occ[id(r)] for r in trace.accesses if r.kind == "write"]
    assert writes == [(0, 3, "write", k) for k in range(4)]


def test_forced_order_lets_the_consumer_read_the_next_round():
    steps = (Step("sync", 0, ARRIVE, "mbarrier.arrive", 0),
             Step("reach", 0, ARRIVE, "mbarrier.arrive", 1),
             Step("sync", 1, WAIT, "mbarrier.wait", 0),
             Step("sync", 0, ARRIVE, "mbarrier.arrive", 1))
    res = numsim.run(OVERTAKING, _out(), schedule=Schedule(steps))
    assert res.schedule["followed"] and res.schedule["order"] == [0, 1, 2, 3]
    # round 0 reads the producer's round-1 value, then round 1 reads round 3's: the consumer was lapped
    assert list(res.outputs["out"]) == [17, 37, 0, 0]


def test_held_operations_wait_for_the_last_step():
    """Holding every arrive after the first until the consumer's first wait keeps producer and consumer in
    step for one round; after the last step everything runs as in the default schedule."""
    steps = (Step("sync", 0, ARRIVE, "mbarrier.arrive", 0), Step("sync", 1, WAIT, "mbarrier.wait", 0))
    held = frozenset((0, ARRIVE, "mbarrier.arrive", k) for k in (1, 2, 3))
    res = numsim.run(OVERTAKING, _out(), schedule=Schedule(steps, held))
    assert res.schedule["followed"]
    assert list(res.outputs["out"])[0] == 17   # the producer wrote round 1's slot before it was held


def test_polls_do_not_count_as_occurrences_and_reach_holds_the_waiter():
    """The consumer's try_wait loop polls; with `reach` it is held at its first try_wait until the producer
    arrived, so its first poll succeeds (the default run polls twice first)."""
    ins = numsim.default_inputs(RELAXED, {"x": "random:2"})
    steps = (Step("reach", 1, 9, "mbarrier.wait", 0), Step("sync", 0, 7, "mbarrier.arrive", 0),
             Step("sync", 1, 9, "mbarrier.wait", 0))
    default = numsim.run(RELAXED, ins)
    forced = numsim.run(RELAXED, ins, schedule=Schedule(steps))
    assert default.stats["polls"] == 2 and forced.stats["polls"] == 0
    assert forced.schedule["followed"]
    np.testing.assert_array_equal(forced.outputs["out"], default.outputs["out"])


def test_a_schedule_that_cannot_be_followed_stops_incomplete_naming_held_warps():
    # the consumer's wait first: it blocks on the barrier, while the producer's arrive is held for step 2
    steps = (Step("sync", 1, WAIT, "mbarrier.wait", 0), Step("sync", 0, ARRIVE, "mbarrier.arrive", 0))
    res = numsim.run(OVERTAKING, _out(), schedule=Schedule(steps))
    assert res.termination == "incomplete" and res.verdict == "incomplete"
    stuck = res.diagnostics_of("schedule_stuck")[0]
    assert stuck.details["step"] == 0
    held = {b["warp"]: b["held_by_schedule"] for b in stuck.details["blocked"]}
    assert held == {0: True, 1: False}
    assert not res.schedule["followed"] and res.schedule["next"] == 0


def test_a_schedule_leading_into_a_deadlock_is_a_deadlock():
    """Every warp blocked on a barrier (none held by the schedule): a real deadlock of that order."""
    steps = (Step("sync", 0, ARRIVE, "mbarrier.arrive", 0), Step("sync", 0, ARRIVE, "mbarrier.arrive", 1),
             Step("sync", 1, WAIT, "mbarrier.wait", 0))
    res = numsim.run(OVERTAKING, _out(), schedule=Schedule(steps))
    assert res.diagnostics[0].kind == "deadlock"
    assert [b["warp"] for b in res.diagnostics[0].details["blocked"]] == [1]


def test_completions_on_a_scheduled_barrier_land_at_their_step():
    """bulk_ring: the first bulk copy's completion is delivered only once consumer warp 1 has reached its first
    full wait (named by the copy's issue, or by barrier and bytes); the outputs stay those of the default run."""
    func = modelcheck.load(KERNELS / "bulk_ring.py").func
    ins = numsim.default_inputs(func, {"src": "random:4", "bias": "random:5"})
    trace = numsim.Trace()
    default = numsim.run(func, ins, observers=(trace,))
    occ = occurrences(trace.sync, trace.accesses)
    issue = next(e for e in trace.sync if e.kind == "async.issue")
    wait = next(e for e in trace.sync if e.kind == "mbarrier.wait" and e.warp == 1 and e.barrier == issue.barrier)
    for landing in (Step("complete", *occ[id(issue)]), Step("complete", barrier=issue.barrier, tx=int(issue.tx))):
        steps = (Step("reach", *occ[id(wait)]), landing, Step("sync", *occ[id(wait)]))
        seen = numsim.Trace()
        res = numsim.run(func, ins, observers=(seen,), schedule=Schedule(steps, barriers=frozenset({issue.barrier})))
        assert res.schedule["followed"] and res.schedule["order"] == [0, 1, 2] and res.verdict == "clean"
        kinds = [(e.kind, e.warp) for e in seen.sync if e.barrier == issue.barrier and e.generation == 0
                 and e.kind in ("mbarrier.complete_tx", "mbarrier.wait")]
        assert kinds[0] == ("mbarrier.complete_tx", 0) and ("mbarrier.wait", 1) in kinds
        for name in default.outputs:
            np.testing.assert_array_equal(res.outputs[name], default.outputs[name])


def _own_order(trace) -> Schedule:
    """The default run's own order as a forced schedule: every warp's sync operation, and every completion
    that lands on a barrier (named by its issue), in the order they happened."""
    occ = occurrences(trace.sync, trace.accesses)
    issues = {e.details.get("op"): occ[id(e)] for e in trace.sync if e.kind == "async.issue"}
    steps = []
    for e in trace.sync:
        if id(e) in occ and e.kind != "mbarrier.poll":
            steps.append(Step("sync", *occ[id(e)]))
        elif e.details.get("async") and e.kind in ("mbarrier.arrive", "mbarrier.complete_tx") \
                and e.details.get("op") in issues:
            steps.append(Step("complete", *issues[e.details["op"]]))
    return Schedule(tuple(steps))


@pytest.mark.parametrize("name", ["ring_pipeline", "bulk_ring", "mma_ts", "smem_reduce",
                                  "named_barrier_rendezvous_fixed", "race_relaxed_try_wait_fixed",
                                  "tmem_double_dealloc_fixed", "cp_async_overtaking_fixed"])
def test_following_the_default_runs_own_order_changes_nothing(name):
    """A differential check of the gate: the default order, forced step by step (each completion held until
    its turn), is followed exactly and computes exactly the default run's outputs."""
    from tests.manifest import load_manifest
    from tests.test_manifest import manifest_inputs
    entry = load_manifest()["kernels"][name]
    func = modelcheck.load(KERNELS / entry["file"], **entry["constants"]).func
    ins = manifest_inputs(func, entry, {c.name: c.value for c in func.constants})
    trace = numsim.Trace()
    default = numsim.run(func, ins, observers=(trace,))
    schedule = _own_order(trace)
    forced = numsim.run(func, ins, schedule=schedule)
    assert len(schedule.steps) > 2
    assert forced.schedule["followed"] and not forced.schedule["out_of_order"], forced.diagnostics
    assert forced.schedule["order"] == list(range(len(schedule.steps)))
    for out in default.outputs:
        np.testing.assert_array_equal(forced.outputs[out], default.outputs[out])
