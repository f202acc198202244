"""modelcheck.replay: a finding's schedule on NumSim next to the default schedule."""
from __future__ import annotations

import json

import numpy as np
import pytest

import modelcheck
from modelcheck import replay   # the ReplayReport: result and its renderings
from modelcheck.replay import PlanError
from tests.manifest import KERNELS


def _kernel(name: str, **consts):
    return modelcheck.load(KERNELS / f"{name}.py", **consts)


def _error(report, kind: str):
    return next(f for f in report.findings if f.status == "error" and f.kind == kind)


def test_producer_overtaking_consumer_reads_the_next_rounds_value():
    k = _kernel("producer_overtaking")
    finding = _error(modelcheck.synccheck(k.func), "mbarrier_arrive_before_consumption")
    r = replay(k.func, None, finding)
    assert r.outcome == "reproduced" and r.method == "overtaking"
    # the witness order: the producer is held at its re-arm of generation 1, the consumer observes
    # generation 0 in between, then the re-arm runs
    assert [s["label"].split(":")[0] for s in r.steps] == [
        "warp 0 reaches the re-arm of full[0] (generation 1) and is held there", "warp 1", "warp 0"]
    assert all(s["done"] for s in r.steps)
    # the default schedule deadlocks before the consumer reads anything; the forced one makes it read
    # round 1's value (1 * 10 + 7) for round 0
    assert r.default.errors()[0]["kind"] == "deadlock"
    assert {"output": "out", "index": [0], "default": 0, "replayed": 17} in r.differences
    first = r.reads[0]
    assert first["read"]["warp"] == 1 and first["read"]["iters"] == [0] and first["allocation"] == "slot"
    assert [(w["warp"], w["iters"]) for w in first["saw"]] == [(0, [1])]
    assert first["default_saw"] is None
    text = r.format()
    assert "out[0]: default 0, replayed 17" in text
    assert "a value from iteration 1, read in iteration 0" in text
    assert "protocol violation on the forced schedule: mbarrier_arrive_before_consumption" in text


def test_fixed_twin_has_nothing_to_replay_and_its_run_matches():
    """The fixed kernel computes what the buggy one should: [7, 17, 27, 37] under NumSim."""
    k = _kernel("producer_overtaking_fixed")
    assert modelcheck.synccheck(k.func).verdict == "clean"
    assert list(modelcheck.numsim.run(k.func, {"out": np.zeros(4, np.int32)}).outputs["out"]) == [7, 17, 27, 37]


def test_phase_b_deadlock_witness_is_followed_step_by_step():
    k = _kernel("mbar_partial_backpressure")
    finding = _error(modelcheck.synccheck(k.func), "deadlock")
    r = replay(k.func, None, finding)
    assert r.method == "witness" and r.outcome == "reproduced"
    assert len(r.steps) == len(finding.details["witness"]) and all(s["done"] for s in r.steps)
    assert r.default.termination == "completed"
    deadlock = r.forced.errors()[0]
    assert deadlock["kind"] == "deadlock" and [b["warp"] for b in deadlock["details"]["blocked"]] == [2]
    # the lapped consumer (warp 2) never gets its last two rounds
    assert [(d["index"], d["default"], d["replayed"]) for d in r.differences] == [([1, 2], 27, 0), ([1, 3], 37, 0)]


def test_a_bare_witness_list_replays_like_its_finding():
    k = _kernel("mbar_partial_backpressure")
    finding = _error(modelcheck.synccheck(k.func), "deadlock")
    a = replay(k.func, None, finding)
    b = replay(k.func, None, finding.details["witness"])
    assert b.finding is None and b.outcome == a.outcome and b.differences == a.differences


def test_protocol_error_witness_raises_the_error_on_numsim():
    k = _kernel("named_barrier_group_sizes")
    r = replay(k.func, None, _error(modelcheck.synccheck(k.func), "fixed_sync_protocol_error"))
    assert r.outcome == "reproduced" and "error:named_barrier_contract_mismatch" in r.effects
    assert r.default.termination == "completed" and r.forced.termination == "error"


def test_data_race_runs_the_pair_the_other_way_round():
    k = _kernel("race_read_before_wait")
    inputs = modelcheck.numsim.default_inputs(k.func, {"src": "random:5"})
    race = _error(modelcheck.racecheck(k.func, inputs), "data_race")
    r = replay(k.func, inputs, race)
    assert r.method == "reversed_pair" and r.outcome == "reproduced"
    assert "outputs_differ" in r.effects
    # the consumer's early read of the tile now sees the producer's write instead of the initial zeros
    read = next(x for x in r.reads if x["allocation"] == "tile")
    assert read["default_saw"] == [None] and read["saw"][0]["warp"] == race.details["current"]["warp"]


def test_reversing_an_init_race_uses_the_barrier_before_its_init():
    k = _kernel("mbar_init_race")
    r = replay(k.func, None, _error(modelcheck.synccheck(k.func), "mbarrier_init_not_happens_before_use"))
    assert r.outcome == "reproduced" and "error:mbarrier_use_before_init" in r.effects


def test_a_race_ordered_in_execution_cannot_be_reversed_and_says_so():
    """A release/acquire race through a flag: in execution the reader waits for the flag, so NumSim (whose
    memory is sequentially consistent) cannot run the read first -- the replay stops, naming the held and
    spinning warps, quickly (a spinning warp is parked, not polled a million times)."""
    k = _kernel("race_flag_relaxed_store")
    r = replay(k.func, None, _error(modelcheck.racecheck(k.func), "data_race"))
    assert r.outcome == "schedule_not_followed"
    stuck = next(d for d in r.forced.diagnostics if d["kind"] == "schedule_stuck")
    held = {b["warp"]: b for b in stuck["details"]["blocked"]}
    assert held[0]["held_by_schedule"] and "spins" in held[1]["awaits"]
    assert r.stats["forced_warp_instructions"] < 20_000
    assert "cannot run them the other way round" in r.format()


def test_schedule_independent_findings_show_the_default_run():
    k = _kernel("oob_store")
    r = replay(k.func, None, _error(modelcheck.synccheck(k.func), "oob"))
    assert r.outcome == "default_schedule" and r.effects == ["error:oob"] and r.steps == []


def test_report_is_json_safe_and_round_trips():
    k = _kernel("producer_overtaking")
    r = replay(k.func, None, modelcheck.synccheck(k.func).findings[0])
    d = json.loads(r.to_json())
    assert d["checker"] == "replay" and d["outcome"] == "reproduced" and d["method"] == "overtaking"
    assert d["finding"]["kind"] == "mbarrier_arrive_before_consumption"
    assert d["differences"][0] == {"output": "out", "index": [0], "default": 0, "replayed": 17}
    assert replay(k.func, None, modelcheck.synccheck(k.func).findings[0].to_dict()).outcome == "reproduced"


def test_a_finding_of_another_kernel_is_a_plan_error():
    other = _kernel("mbar_partial_backpressure")
    finding = _error(modelcheck.synccheck(other.func), "deadlock")
    with pytest.raises(PlanError, match="not an operation of the default run"):
        replay(_kernel("producer_overtaking_fixed").func, None, finding)


def test_bad_arguments():
    k = _kernel("producer_overtaking")
    with pytest.raises(TypeError):
        replay(k.func, None, None)
    with pytest.raises(TypeError):
        replay(k.func, None, 3)
    with pytest.raises(modelcheck.numsim.InputError, match="needs inputs"):
        replay(_kernel("race_write_write").func, {}, [])


def test_nonconfluent_witnesses_end_with_different_leftovers():
    k = _kernel("named_barrier_leftover")
    finding = _error(modelcheck.synccheck(k.func), "fixed_sync_nonconfluent")
    r = replay(k.func, None, finding)
    assert len(r.alternatives) == 1 and r.outcome == r.alternatives[0].outcome == "reproduced"
    assert "final_states_differ" in r.effects
    first, second = r.final_barriers["named barrier 1"], r.alternatives[0].final_barriers["named barrier 1"]
    assert first != second and "32/64 threads arrived" in first and "32/64 threads arrived" in second
    assert "witness 2: replay REPRODUCED" in r.format()


def test_a_rearm_nobody_waits_for_shows_the_protocol_violation_of_the_default_run():
    k = _kernel("mbar_generation_reuse")
    r = replay(k.func, None, _error(modelcheck.synccheck(k.func), "mbarrier_arrive_before_consumption"))
    assert r.method == "default_schedule" and r.effects == ["protocol:mbarrier_arrive_before_consumption"]
    assert "protocol violation on the default schedule" in r.format() and "forced schedule" not in r.format()


def test_an_async_side_is_delayed_at_its_completion_with_what_tracks_it():
    """cp_async_overtaking's write/write race between round 0's and round 1's cp.async of one lane: the forced
    schedule lets round 1's copy land first and delays round 0's (and the lane's later cp.async.mbarrier.arrive,
    which reports it complete), so round 0's bytes win and the consumer stores other values."""
    k = _kernel("cp_async_overtaking")
    inputs = modelcheck.numsim.default_inputs(k.func, {"g": "random:3"})
    race = _error(modelcheck.racecheck(k.func, inputs), "data_race")
    r = replay(k.func, inputs, race)
    assert r.outcome == "reproduced" and "completes only after that" in r.explanation
    assert [s["done"] for s in r.steps] == [True, True, True]
    assert not r.forced.schedule["out_of_order"] and "outputs_differ" in r.effects
