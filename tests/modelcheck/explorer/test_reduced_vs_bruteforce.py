"""The reduced phase-B search agrees with brute force (issue #5, item 7).

`explorer.verify(programs)` -- per-resource projections with happens-before gating, causal
certificates, sleep sets -- must reach the verdict of `explorer.verify_whole(programs,
sleep_sets=False)`, the unprojected, unreduced search of the same programs: complete,
deadlock, protocol_error or nonconfluent.  Both stop at their first failure, so a program
that can fail in two ways may be reported by either; then both reported kinds must be among
those an all-failures oracle (the unreduced search that does not stop) reaches.  A limit on
either side skips the example.

Programs come (1) from runs of the ring fixture kernel (tests/fixtures/explorer/ring.py)
under random configurations, built the way synccheck builds them -- with synccheck's own
phase-A observers, whose first finding stops the run (phase B then sees the partial run's
programs), or with those observers muted so the run goes on past the bug; and (2) from
hand-written command lists, given the clocks and generations of one random run.
"""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import modelcheck
from modelcheck import explorer
from tests.modelcheck.explorer.support import (FAILURES, RING, agree, all_failures, arrive, bar_arrive, bar_sync, clocked,
                                    compare, expect_tx, init, issue_tx, mb, ring_programs, wait)

SETTINGS = dict(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def check(programs, seen: Counter | None = None, label: str = "", in_property: bool = True):
    reduced, whole, oracle = compare(programs)
    if in_property:
        assume("limit" not in (reduced.status, whole.status))
    else:
        assert "limit" not in (reduced.status, whole.status)
    assert agree(reduced.status, whole.status, oracle), (
        f"{label}: verify says {reduced.status} ({reduced.resource_name}, {reduced.per_resource}), "
        f"verify_whole says {whole.status}, all-failures oracle {oracle}")
    if seen is not None:
        seen[reduced.status] += 1
        seen["deviation"] += reduced.deviation is not None
    return reduced, whole


# ---------------------------------------------------------------------- (1) the ring kernel
@st.composite
def ring_configs(draw):
    producers = draw(st.integers(1, 2))
    consumers = draw(st.integers(1, 3 if producers == 1 else 2))
    off = st.sampled_from([0, 0, -1, 1])                         # mostly right, sometimes one off
    return {"PRODUCERS": producers, "CONSUMERS": consumers,
            "STAGES": draw(st.integers(1, 3)), "ROUNDS": draw(st.integers(1, 4)),
            "FULL_COUNT": max(1, producers + draw(off)), "EMPTY_COUNT": max(1, consumers + draw(off)),
            "PRODUCER_START": draw(st.sampled_from([1, 0])), "CONSUMER_START": draw(st.sampled_from([0, 1])),
            "EMPTY_WAIT": draw(st.sampled_from([1, 0])), "ASYNC": draw(st.sampled_from([0, 1]))}


def test_ring_configurations_reduced_agrees_with_brute_force():
    seen: Counter = Counter()

    @settings(max_examples=160, **SETTINGS)
    @given(config=ring_configs(), halting=st.booleans())
    def prop(config, halting):
        programs, _ = ring_programs(config, halting)
        check(programs, seen, f"ring {config} halting={halting}")

    prop()
    # the property covered clean and failing verdicts, deadlocks and protocol errors
    assert seen["complete"] >= 10, seen
    assert seen["deadlock"] >= 3 and seen["protocol_error"] >= 3, seen


@pytest.mark.parametrize("producers,consumers,stages,rounds", [(1, 1, 1, 4), (1, 1, 2, 4), (1, 3, 2, 4),
                                                               (2, 2, 3, 4), (1, 2, 1, 3)])
@pytest.mark.parametrize("use_async", [0, 1])
def test_correct_rings_are_certified_without_search(producers, consumers, stages, rounds, use_async):
    """The certificates still settle every projection of a correct ring (and agree with brute force)."""
    programs, res = ring_programs({"PRODUCERS": producers, "CONSUMERS": consumers, "STAGES": stages,
                                   "ROUNDS": rounds, "FULL_COUNT": producers, "EMPTY_COUNT": consumers,
                                   "ASYNC": use_async})
    assert res.termination == "completed"
    reduced, whole = check(programs, in_property=False)
    assert reduced.status == whole.status == "complete"
    assert reduced.certified == reduced.projections and reduced.searched == 0 and reduced.deviation is None


# ---------------------------------------------------------------------- (2) random hand-written programs
@st.composite
def random_programs(draw):
    """2-3 warps, 1-2 mbarriers initialized by warp 0 (mostly published by a CTA barrier), then
    random arrives, waits, arrive.expect_tx + bulk copies, expect_tx and named-barrier syncs."""
    nw = draw(st.integers(2, 3))
    bars = [mb(n) for n in "FE"[:draw(st.integers(1, 2))]]
    spec = {w: [] for w in range(nw)}
    for b in bars:
        spec[0].append(init(b, draw(st.integers(1, 2))))
    if draw(st.integers(0, 4)):
        for w in range(nw):
            spec[w].extend(bar_sync(0, 32 * nw))
    for w in range(nw):
        for _ in range(draw(st.integers(1, 4))):
            b = draw(st.sampled_from(bars))
            op = draw(st.sampled_from(["arrive", "arrive", "wait", "wait", "bulk", "expect", "sync", "bar_arrive"]))
            if op == "arrive":
                spec[w].append(arrive(b))
            elif op == "wait":
                spec[w].append(wait(b, draw(st.integers(0, 1))))
            elif op == "bulk":
                spec[w].extend([arrive(b, tx=8), issue_tx(b, 8)])
            elif op == "expect":
                spec[w].append(expect_tx(b, 8))
            elif op == "sync":
                spec[w].extend(bar_sync(1, 64))
            else:
                spec[w].append(bar_arrive(1, 64))
    return spec


def test_random_programs_reduced_agrees_with_brute_force():
    seen: Counter = Counter()

    @settings(max_examples=400, **SETTINGS)
    @given(spec=random_programs(), seed=st.integers(0, 10_000), partial=st.booleans())
    def prop(spec, seed, partial):
        programs = clocked(spec, seed, partial=partial)
        assume(programs is not None and programs.warps)
        check(programs, seen, f"programs {spec} seed={seed}")

    prop()
    assert seen["complete"] and seen["deadlock"] and seen["protocol_error"], seen


# ---------------------------------------------------------------------- (3) hand-built cases
F, E = mb("F"), mb("E")


def run_where(spec, predicate=lambda p: True, tries: int = 200):
    """Programs of the first run (seed 0, 1, ...) that completes and satisfies `predicate`."""
    for seed in range(tries):
        programs = clocked(spec, seed)
        if programs is not None and predicate(programs):
            return programs
    raise AssertionError("no run with the wanted schedule")


def verdicts(programs):
    reduced, whole = check(programs, in_property=False)
    return reduced, whole, all_failures(programs)


def test_named_barrier_grouping_is_nonconfluent():
    """Four warps each bar.sync(1, 64): which two form a generation depends on the schedule."""
    spec = {w: [*bar_sync(0, 128), *bar_sync(1, 64)] for w in range(4)}
    reduced, whole, oracle = verdicts(run_where(spec))
    assert reduced.status == whole.status == "nonconfluent"
    assert oracle == {"nonconfluent"}
    assert len(reduced.failure.witnesses) == 2


def test_cross_resource_deadlock_that_one_schedule_avoids():
    """bar.sync(1, 64) pairs warps in arrival order.  Warp 3 arrives on F only after its sync;
    warp 2 syncs only after F's phase 0.  If warps 0 and 1 pair up first, warp 3's sync waits
    for a partner that waits for warp 3: a deadlock the run (where warp 3 paired first) avoided."""
    spec = {0: [init(F, 1), *bar_sync(0, 128), *bar_sync(1, 64)],
            1: [*bar_sync(0, 128), *bar_sync(1, 64)],
            2: [*bar_sync(0, 128), wait(F, 0), *bar_sync(1, 64)],
            3: [*bar_sync(0, 128), *bar_sync(1, 64), arrive(F)]}
    reduced, whole, oracle = verdicts(run_where(spec))
    assert "deadlock" in oracle
    assert reduced.status in oracle and whole.status in oracle


def test_lapped_vacuous_wait_deadlocks():
    """A parity-1 wait that in the run passed at once after init: nothing orders it before the
    arrival that completes phase 0, after which it waits for phase 1 forever.  (The mbarrier
    certificate used to skip this check when nobody waited on generation 0.)"""
    spec = {0: [init(F, 1), *bar_sync(0, 64), arrive(F)],
            1: [*bar_sync(0, 64), wait(F, 1)]}
    programs = run_where(spec, lambda p: p.warps[1][-1].generation is None)
    reduced, whole, oracle = verdicts(programs)
    assert reduced.status == whole.status == "deadlock"
    assert reduced.certified < reduced.projections


def test_wait_passing_on_the_phase_two_back_is_found():
    """Consumer 1 takes generations 0 and 2 of F, consumer 2 generation 1; consumer 1's second
    wait (parity 0) can pass on generation 0 again.  (The certificate did not require a wait of
    g to come after generation g - 1 completed.)"""
    spec = {0: [init(F, 1), init(E, 1), *bar_sync(0, 96), arrive(F), wait(E, 0), arrive(F), wait(E, 1), arrive(F)],
            1: [*bar_sync(0, 96), wait(F, 0), arrive(E), wait(F, 0)],
            2: [*bar_sync(0, 96), wait(F, 1), arrive(E)]}
    reduced, whole, oracle = verdicts(run_where(spec))
    assert reduced.status != "complete" and whole.status != "complete"
    assert oracle == {"protocol_error", "nonconfluent"}


def test_expect_tx_after_the_last_arrival_can_complete_the_phase_early():
    """Warp 1 arrives before it raises the tx count; if warp 0's arrival comes in between, the
    phase completes without the bytes and the expect_tx lands on the next generation.  (The
    certificate accepted it because the run's totals were exact.)"""
    spec = {0: [init(F, 2), *bar_sync(0, 96), arrive(F)],
            1: [*bar_sync(0, 96), arrive(F), expect_tx(F, 8), issue_tx(F, 8)],
            2: [*bar_sync(0, 96), wait(F, 0)]}
    programs = run_where(spec, lambda p: p.warps[1][3].generation == 0)
    reduced, whole, oracle = verdicts(programs)
    assert reduced.status != "complete" and whole.status != "complete"
    assert "protocol_error" in oracle


def test_wait_on_an_uninitialized_barrier_is_a_use_before_init():
    """Warp 1's parity-1 wait on E passes at once in the run, so nothing orders warp 1 after
    warp 0's inits; in another schedule it waits on E before E is initialized.  (The whole-
    program model used to treat that wait as blocked, not as an error.)"""
    spec = {0: [init(F, 1), init(E, 1), wait(F, 0)],
            1: [wait(E, 1), arrive(F)]}
    reduced, whole, oracle = verdicts(run_where(spec))
    assert reduced.status == whole.status == "protocol_error"
    assert oracle == {"protocol_error"}


def test_projection_that_leaves_the_runs_generations_falls_back_to_the_whole_program():
    """In the run warp 0's first parity-1 wait observed generation 1 of F, which (through F
    itself) ordered its second wait after warp 2's arrival.  In other schedules both waits pass
    at once after init and F ends unconsumed: another final state.  The projection of F cannot
    see that under the run's gating; the search notices the wait observing another generation
    than in the run and verifies the whole program instead."""
    spec = {0: [init(F, 1), *bar_sync(0, 96), wait(F, 1), wait(F, 1)],
            1: [*bar_sync(0, 96), arrive(F)],
            2: [*bar_sync(0, 96), wait(F, 0), arrive(F)]}
    programs = run_where(spec, lambda p: p.warps[0][3].generation == 1)
    reduced, whole, oracle = verdicts(programs)
    assert reduced.status == whole.status == "nonconfluent"
    assert reduced.deviation is not None and reduced.deviation["run_generation"] == 1


def test_every_failure_kind_is_covered_by_the_hand_built_cases():
    kinds = set()
    for spec, pred in [({w: [*bar_sync(0, 128), *bar_sync(1, 64)] for w in range(4)}, None),
                       ({0: [init(F, 1), *bar_sync(0, 64), arrive(F)], 1: [*bar_sync(0, 64), wait(F, 1)]},
                        lambda p: p.warps[1][-1].generation is None),
                       ({0: [init(F, 1), init(E, 1), wait(F, 0)], 1: [wait(E, 1), arrive(F)]}, None)]:
        kinds.add(check(run_where(spec, pred or (lambda p: True)), in_property=False)[0].status)
    assert kinds == set(FAILURES)


# ---------------------------------------------------------------------- the fixes, seen from synccheck
def test_synccheck_reports_the_lapped_vacuous_wait_in_a_ring():
    """The ring whose consumer waits `full` by the wrong start parity, 3 stages, 2 rounds: the run
    completes (each consumer wait passes at once after init), but in another schedule the producer
    completes full[0]'s phase 0 first and the consumer then waits forever.  Synccheck used to call
    it clean."""
    report = modelcheck.synccheck(modelcheck.load(RING, STAGES=3, ROUNDS=2, EMPTY_COUNT=2, PRODUCER_START=0,
                                                  CONSUMER_START=1, EMPTY_WAIT=0))
    assert report.verdict == "error"
    assert [f.kind for f in report.findings] == ["deadlock"]


def test_verify_whole_is_the_unreduced_oracle():
    """verify_whole really is unreduced: without sleep sets it explores at least as many
    transitions as with them, and both agree."""
    programs, _ = ring_programs({"CONSUMERS": 2, "EMPTY_COUNT": 2, "ROUNDS": 3})
    plain = explorer.verify_whole(programs, sleep_sets=False)
    reduced = explorer.verify_whole(programs, sleep_sets=True)
    assert plain.status == reduced.status == "complete"
    assert plain.transitions >= reduced.transitions and plain.states == reduced.states
