"""Synccheck on the corpus kernels (kernels/): one buggy/fixed pair per finding kind.

For every buggy kernel: the verdict, the finding kind, a key phrase of the message,
and that the Source evidence (details["operation"]) points at the offending line of
the kernel file; its fixed twin is clean.  Phase-A kinds stop at the first error and
come from the simulated run.  Phase-B findings (schedules the run did not take) come
with a non-empty witness schedule that ends at the failing command, and phase A
alone (`check(func, phase_b=False)`) is clean for those kernels — the bug is only
visible by exploring schedules.  The clean kernels mirror the reference tool's own
Synccheck test cases (checker-semantics §7.1).
"""
from __future__ import annotations

import re
import shutil

import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.synccheck import check
from tests.manifest import KERNELS


def load(name: str, **consts):
    return modelcheck.load(KERNELS / f"{name}.py", **consts)


def line_of(name: str, snippet: str, occurrence: int = 1) -> int:
    """1-based line of the `occurrence`-th line of kernels/<name>.py containing `snippet`."""
    lines = [k + 1 for k, text in enumerate((KERNELS / f"{name}.py").read_text().splitlines()) if snippet in text]
    assert len(lines) >= occurrence, (snippet, lines)
    if occurrence == 1:
        assert len(lines) == 1, (snippet, lines)
    return lines[occurrence - 1]


def sync(name: str, **consts):
    return modelcheck.synccheck(load(name, **consts).func)


def only(report, kind: str):
    found = [f for f in report.findings if f.kind == kind]
    assert len(found) == 1, report.format()
    return found[0]


def span_line(op: dict) -> int:
    return op["span"].line


# --------------------------------------------------------------------------- phase A: one error, with its source

# (buggy, fixed twin, kind, key phrase of the message, (snippet, occurrence) of the Source line, loop iterations)
PHASE_A = [
    ("mbar_arrive_before_init", "mbar_arrive_before_init_fixed", "mbarrier_use_before_init",
     "mbarrier.arrive on an mbarrier that is not initialized",
     ("T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))", 1), []),
    ("mbar_wait_before_init", "mbar_wait_before_init_fixed", "mbarrier_use_before_init",
     "mbarrier_wait on an mbarrier that is not initialized",
     ("T.cuda.mbarrier_wait(ready.ptr_to([0]), 0)", 1), []),
    ("mbar_expect_tx_before_init", "mbar_expect_tx_before_init_fixed", "mbarrier_use_before_init",
     "mbarrier.expect_tx on an mbarrier that is not initialized",
     ("T.ptx.mbarrier.expect_tx.shared__cta.b64", 1), []),
    ("mbar_init_race", "mbar_init_race_fixed", "mbarrier_init_not_happens_before_use",
     "mbarrier.init does not happen before mbarrier.arrive on ready[0] generation 0",
     ("T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))", 1), []),
    ("mbar_init_after_handoff", "mbar_init_after_handoff_fixed", "mbarrier_init_not_happens_before_use",
     "mbarrier.init does not happen before mbarrier.arrive on ready[0] generation 0",
     ("T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))", 1), []),
    ("mbar_reinit", "mbar_reinit_fixed", "mbarrier_reinit_without_inval",
     "mbarrier.init on a live barrier without mbarrier.inval", ("T.ptx.mbarrier.init.shared.b64", 1), [1]),
    ("mbar_zero_count", "mbar_zero_count_fixed", "mbarrier_invalid_expected_arrivals",
     "mbarrier.init with expected count 0", ("T.uint32(CONSUMERS - 1)", 1), []),
    ("mbar_parity_two", "mbar_parity_two_fixed", "mbarrier_invalid_phase", "with parity 2",
     ("T.cuda.mbarrier_wait(full.ptr_to([0]), r)", 1), [2]),
    ("mbar_two_lane_arrive", "mbar_two_lane_arrive_fixed", "mbarrier_arrival_overflow",
     "received 2 arrivals, expected 1", ("T.ptx.mbarrier.arrive.shared.b64(ready.ptr_to([0]))", 1), []),
    ("mbar_generation_reuse", "mbar_generation_reuse_fixed", "mbarrier_arrive_before_consumption",
     "mbarrier.arrive on bar[0] started before generation 0 was consumed",
     ("T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))", 2), []),
    ("producer_overtaking", "producer_overtaking_fixed", "mbarrier_arrive_before_consumption",
     "before generation 0 was consumed", ("T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))", 1), [1]),
    ("mbar_unordered_rearm", "mbar_unordered_rearm_fixed", "mbarrier_prior_generation_consumption_not_happens_before",
     "generation 0 consumption does not happen before mbarrier.arrive on full[0] generation 1",
     ("T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))", 2), []),
    ("cp_async_overtaking", "cp_async_overtaking_fixed", "mbarrier_arrive_before_consumption",
     "cp.async.mbarrier.arrive arrival on full[0] landed before generation 0 was consumed",
     ("T.ptx.cp.async_.mbarrier.arrive.noinc", 1), [1]),
    ("bulk_over_delivery", "bulk_over_delivery_fixed", "mbarrier_transaction_over_delivery",
     "completed 32 transaction bytes, expected 16", ("cp.async.bulk.shared::cta.global", 1), []),
    ("named_barrier_count_mismatch", "named_barrier_count_mismatch_fixed", "named_barrier_contract_mismatch",
     "thread count 32 differs from 64", ("T.ptx.bar.sync(1, 32)", 1), []),
    ("named_barrier_double_arrive", "named_barrier_double_arrive_fixed", "named_barrier_arrival_overflow",
     "warp 0 contributes twice to barrier 1 generation 0", ("T.ptx.bar.arrive(1, 64)", 1), [1]),
    ("named_barrier_mixed_alignment", "named_barrier_mixed_alignment_fixed", "aligned_sync_contract_mismatch",
     "mixes aligned and unaligned syncs", ("T.ptx.barrier.sync(3, 64)", 1), []),
    ("shfl_under_lane0", "shfl_under_lane0_fixed", "warp_collective_divergence",
     "cuda.__shfl_sync needs every lane of member mask 0xffffffff active", ("T.cuda.__shfl_sync(", 1), []),
    ("collective_in_while", "collective_in_while_fixed", "warp_collective_divergence",
     "needs every lane of member mask 0xffffffff active; lanes 1..31 (31 lanes) are not",
     ("T.cuda.__shfl_xor_sync(", 1), [0, 0]),
]


@pytest.mark.parametrize("buggy,fixed,kind,phrase,where,iters", PHASE_A, ids=[c[0] for c in PHASE_A])
def test_phase_a_error_with_source(buggy, fixed, kind, phrase, where, iters):
    report = sync(buggy)
    assert report.verdict == "error", report.format()
    assert [f.kind for f in report.findings if f.status == "error"] == [kind], report.format()
    f = only(report, kind)
    assert phrase in f.message
    op = f.details["operation"]
    assert span_line(op) == line_of(buggy, *where)
    assert op["iters"] == iters
    # phase A stops at the first protocol error: phase B did not run
    assert "verifier_states" not in report.stats
    assert report.format().startswith(f"synccheck ERROR - {len(report.findings)} finding(s); native phase {buggy}, "
                                      "direct execution")
    fixed_report = sync(fixed)
    assert fixed_report.verdict == "clean", fixed_report.format()
    assert fixed_report.findings == []


def test_phase_a_operations_name_the_warp():
    assert only(sync("mbar_init_race"), "mbarrier_init_not_happens_before_use").details["operation"]["warp"] == 1
    assert only(sync("mbar_wait_before_init"), "mbarrier_use_before_init").details["operation"]["warp"] == 0
    assert only(sync("named_barrier_count_mismatch"), "named_barrier_contract_mismatch").details["operation"]["warp"] == 1
    # an async completion's error names the warp that issued the copy
    assert only(sync("bulk_over_delivery"), "mbarrier_transaction_over_delivery").details["operation"]["warp"] == 0


@pytest.mark.parametrize("name", ["mbar_init_race", "mbar_init_after_handoff"])
def test_init_race_relates_the_init(name):
    f = only(sync(name), "mbarrier_init_not_happens_before_use")
    related = f.details["related_operations"]
    assert [span_line(op) for op in related] == [line_of(name, "T.ptx.mbarrier.init.shared.b64")]
    assert related[0]["warp"] == 0


def test_unordered_rearm_relates_the_consuming_wait():
    f = only(sync("mbar_unordered_rearm"), "mbarrier_prior_generation_consumption_not_happens_before")
    assert f.details["operation"]["warp"] == 0
    (wait,) = f.details["related_operations"]
    assert wait["warp"] == 1
    assert span_line(wait) == line_of("mbar_unordered_rearm", "T.cuda.mbarrier_wait(full.ptr_to([0]), 0)")
    text = sync("mbar_unordered_rearm").format()
    assert "Related: warp 1" in text and "Hint: add back-pressure" in text


def test_the_run_order_is_not_an_ordering():
    """The simulated run executes warp 0's init before warp 1's arrive, and the consumer's wait before
    the producer's re-arm, yet both kernels are errors: only synchronization edges order operations."""
    for name in ("mbar_init_race", "mbar_unordered_rearm"):
        result = numsim.run(load(name).func, numsim.default_inputs(load(name).func))
        assert result.verdict == "clean" and result.termination == "completed"
        assert sync(name).verdict == "error"


@pytest.mark.parametrize("mode,phrase,snippet", [(1, "elect_sync needs every lane", "T.cuda.elect_sync()"),
                                                  (2, "warp_sync needs every lane", "T.cuda.warp_sync()")])
def test_other_collectives_under_lane0(mode, phrase, snippet):
    f = only(sync("shfl_under_lane0", COLLECTIVE=mode), "warp_collective_divergence")
    assert phrase in f.message
    assert span_line(f.details["operation"]) == line_of("shfl_under_lane0", snippet)
    assert sync("shfl_under_lane0_fixed", COLLECTIVE=mode).verdict == "clean"


def test_generation_reuse_consume_constant():
    """native_synccheck_generation_reuse(consume): the same file with CONSUME=1 is clean."""
    assert sync("mbar_generation_reuse", CONSUME=1).verdict == "clean"
    assert sync("mbar_generation_reuse_fixed", CONSUME=0).verdict == "error"


# --------------------------------------------------------------------------- deadlocks in the run

# (buggy, fixed, blocked warps, snippet of the blocked wait per warp, text of the barrier state)
DEADLOCKS = [
    ("bulk_tx_mismatch", "bulk_tx_mismatch_fixed", {0: "T.cuda.mbarrier_wait(full.ptr_to([0]), 0)"},
     "arrivals 1/1, transactions 64/68"),
    ("trailing_warp_count288", "trailing_warp_count256",
     {w: "T.cuda.mbarrier_wait(done.ptr_to([0]), 0)" for w in range(9)}, "arrivals 256/288"),
    ("ring2_producer_phase0", "ring2_producer_phase1",
     {0: "T.cuda.mbarrier_wait(empty.ptr_to([stage]), phase)", 1: "T.cuda.mbarrier_wait(full.ptr_to([stage]), phase)"},
     "arrivals 0/32"),
    ("mbar_lane_elect_starved", "mbar_lane_elect_arrivals",
     {w: "T.cuda.mbarrier_wait(b_data.ptr_to([0]), 0)" for w in range(4)}, "arrivals 0/1"),
    ("hang_wrong_parity", "hang_wrong_parity_fixed",
     {0: "T.cuda.mbarrier_wait(empty.ptr_to([0]), (r + 1) % 2)", 1: "T.cuda.mbarrier_wait(full.ptr_to([0]), (r + 1) % 2)"},
     "completed parity"),
]


@pytest.mark.parametrize("buggy,fixed,blocked,state", DEADLOCKS, ids=[c[0] for c in DEADLOCKS])
def test_deadlock_names_the_blocked_waits(buggy, fixed, blocked, state):
    report = sync(buggy)
    assert report.verdict == "error"
    f = only(report, "deadlock")
    assert f.details["verification"] == "execution"
    got = {b["warp"]: b for b in f.details["blocked"]}
    assert set(got) == set(blocked)
    for w, snippet in blocked.items():
        assert span_line(got[w]["operation"]) == line_of(buggy, snippet)
        assert got[w]["awaits"].startswith("await mbarrier.try_wait on ")
    assert any(state in b.get("state", "") for b in got.values()), f.details["blocked"]
    text = report.format()
    assert f"execution cannot make progress; blocked warps {_ranges(blocked)}" in text
    assert "Barrier state: " in text
    assert sync(fixed).verdict == "clean"


def _ranges(warps) -> str:
    ws = sorted(warps)
    return f"{ws[0]}-{ws[-1]}" if len(ws) > 1 and ws == list(range(ws[0], ws[-1] + 1)) else ", ".join(map(str, ws))


def test_ring_start_phase_is_the_only_difference():
    """ring2_producer_phase0/1 differ in the producer's start phase only (a module constant)."""
    assert sync("ring2_producer_phase1", PRODUCER_START_PHASE=0).verdict == "error"
    assert sync("ring2_producer_phase0", PRODUCER_START_PHASE=1).verdict == "clean"


def test_trailing_warp_count_is_the_only_difference():
    assert sync("trailing_warp_count288", EXPECTED=256).verdict == "clean"
    assert only(sync("trailing_warp_count256", EXPECTED=288), "deadlock")


# --------------------------------------------------------------------------- phase B: schedules the run did not take

# (buggy, fixed, key phrase of the message)
PHASE_B_PROTOCOL = [
    ("named_barrier_group_sizes", "named_barrier_group_sizes_fixed", r"thread count (64|96) differs from (96|64)"),
    ("named_barrier_alignment_schedule", "named_barrier_alignment_schedule_fixed",
     "mixes aligned and unaligned blocking syncs"),
    ("split_expect_tx", "split_expect_tx_fixed", r"full\[0\]"),
]


@pytest.mark.parametrize("buggy,fixed,phrase", PHASE_B_PROTOCOL, ids=[c[0] for c in PHASE_B_PROTOCOL])
def test_phase_b_protocol_error_with_witness(buggy, fixed, phrase):
    func = load(buggy).func
    assert check(func, phase_b=False).verdict == "clean"     # the run itself never violates the protocol
    report = modelcheck.synccheck(func)
    assert report.verdict == "error", report.format()
    f = only(report, "fixed_sync_protocol_error")
    assert re.search(phrase, f.message), f.message
    assert "in a schedule the run did not take" in f.message
    witness = f.details["witness"]
    assert witness
    last = witness[-1]
    # the witness ends at the failing command, which is the finding's Source
    assert last["transition"] == "issue"
    assert f.details["operation"] == last["operation"]
    assert span_line(f.details["operation"]) == span_line(last["operation"])
    assert report.stats["verifier_states"] >= 1 and report.stats["verifier_transitions"] >= len(witness)
    assert "Witness schedule" in report.format()
    assert re.match(rf"synccheck ERROR - 1 finding\(s\); native phase {buggy}, \d+ verifier states / \d+ verifier "
                    r"transitions", report.format())
    assert sync(fixed).verdict == "clean"


def test_group_sizes_witness_mixes_the_two_groups():
    f = only(sync("named_barrier_group_sizes"), "fixed_sync_protocol_error")
    issued = [(s["warp"], s["command"]) for s in f.details["witness"] if s["transition"] == "issue"]
    groups = {"pair" if w < 2 else "trio" for w, _ in issued}
    assert groups == {"pair", "trio"}
    lines = {span_line(s["operation"]) for s in f.details["witness"]}
    assert lines == {line_of("named_barrier_group_sizes", "T.ptx.bar.sync(1, 64)"),
                     line_of("named_barrier_group_sizes", "T.ptx.bar.sync(1, 96)")}


def test_split_expect_tx_witness_arrives_before_the_expect():
    """The schedule the run did not take: warp 1's arrive completes the phase before warp 0's expect_tx."""
    f = only(sync("split_expect_tx"), "fixed_sync_protocol_error")
    witness = f.details["witness"]
    arrive = line_of("split_expect_tx", "T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))")
    expect = line_of("split_expect_tx", "T.ptx.mbarrier.expect_tx.shared__cta.b64")
    lines = [span_line(s["operation"]) for s in witness if s["transition"] == "issue"]
    assert arrive in lines
    assert span_line(f.details["operation"]) == expect == lines[-1]
    assert lines.index(arrive) < len(lines) - 1


def test_phase_b_deadlock_with_witness():
    func = load("named_barrier_rendezvous").func
    assert check(func, phase_b=False).verdict == "clean"
    report = modelcheck.synccheck(func)
    f = only(report, "deadlock")
    assert f.details["verification"] == "fixed_sync"
    (blocked,) = f.details["blocked"]
    assert blocked["warp"] == 1
    first_sync = line_of("named_barrier_rendezvous", "T.ptx.bar.sync(1, 64)", 2)
    assert span_line(blocked["operation"]) == first_sync
    witness = f.details["witness"]
    assert witness
    # warps 0 and 2 completed a generation together before the coordinator's sync
    issued = [(s["warp"], s["kind"]) for s in witness if s["transition"] == "issue"]
    assert (0, "contribute") in issued and (2, "contribute") in issued
    assert issued.index((2, "contribute")) < issued.index((1, "contribute"))
    # the witness ends with the coordinator stuck at the sync it is blocked on
    warp1 = [s for s in witness if s["warp"] == 1]
    assert warp1 and span_line(warp1[-1]["operation"]) == first_sync
    assert "Blocked warps 1: await bar.sync" in report.format()
    assert sync("named_barrier_rendezvous_fixed").verdict == "clean"


def test_phase_b_nonconfluence_with_witnesses():
    func = load("named_barrier_leftover").func
    assert check(func, phase_b=False).verdict == "clean"
    report = modelcheck.synccheck(func)
    f = only(report, "fixed_sync_nonconfluent")
    assert "different protocol states" in f.message
    schedules = f.details["witnesses"]
    assert len(schedules) == 2
    arrive = line_of("named_barrier_leftover", "T.ptx.bar.arrive(1, COUNT)")
    for schedule in schedules:
        # each is a complete schedule: every worker's one arrive
        assert sorted(s["warp"] for s in schedule if s["transition"] == "issue") == [0, 1, 2]
        assert {span_line(s["operation"]) for s in schedule} == {arrive}
    # ... ending with a different worker left alone in generation 1
    assert schedules[0][-1]["warp"] != schedules[1][-1]["warp"]
    assert "Schedule 1" in report.format() and "Schedule 2" in report.format()
    assert sync("named_barrier_leftover_fixed").verdict == "clean"
    assert sync("named_barrier_leftover", COUNT=96).verdict == "clean"


# --------------------------------------------------------------------------- clean mirrors of the reference tests

CLEAN = ["mbar_arrive_before_init_fixed", "mbar_init_race_fixed", "bulk_two_generations", "late_wait_gates_next",
         "bulk_completion_before_expect", "mbar_generation_reuse_fixed", "mbar_lane_elect_arrivals",
         "collective_in_while_fixed", "mbar_depth_two_pipeline", "bulk_many_waiters", "drain_tail",
         "trailing_warp_count256", "ring2_producer_phase1", "bulk_ring", "producer_overtaking_fixed"]


@pytest.mark.parametrize("name", CLEAN)
def test_clean_kernels_run_both_phases(name):
    report = sync(name)
    assert report.verdict == "clean", report.format()
    assert report.findings == []
    assert report.stats["termination"] == "completed"
    assert "verifier_states" in report.stats          # phase B ran (a clean phase A alone is not enough)
    report.require_clean()


def _sync_events(name: str):
    func = load(name).func
    trace = numsim.Trace()
    numsim.Engine(func).run(numsim.default_inputs(func), observers=(trace,))
    return trace.sync


def test_cta_sync_publishes_init_without_fence():
    """native_synccheck_cta_sync_publishes_init: no fence.mbarrier_init anywhere, still clean."""
    assert "fence" not in (KERNELS / "mbar_init_race_fixed.py").read_text().split("from tvm_tirx")[1]
    assert all(e.kind != "fence.mbarrier_init" for e in _sync_events("mbar_init_race_fixed"))


def test_one_warp_clean_effects():
    """native_synccheck_clean: init, arrive (completing generation 0), wait (consuming it)."""
    events = [e for e in _sync_events("mbar_arrive_before_init_fixed") if e.kind.startswith("mbarrier.")]
    assert [e.kind for e in events] == ["mbarrier.init", "mbarrier.arrive", "mbarrier.wait"]
    assert events[1].completed and events[1].generation == 0
    assert events[2].generation == 0


def test_bulk_two_generations_binds_each_copy_to_its_generation():
    issues = [e for e in _sync_events("bulk_two_generations") if e.kind == "async.issue"]
    assert [(e.generation, e.tx) for e in issues] == [(0, 16), (1, 16)]


def test_completion_lands_before_expect():
    """native_synccheck_tma_completion_before_expect: init, arrive, completion issue, complete_tx, wait,
    arrive, wait — the copy bound to generation 1 lands before its expect_tx."""
    events = [e for e in _sync_events("bulk_completion_before_expect")
              if e.kind not in ("fence.mbarrier_init", "warp.exit")]
    assert [e.kind for e in events] == ["mbarrier.init", "mbarrier.arrive", "async.issue", "mbarrier.complete_tx",
                                        "mbarrier.wait", "mbarrier.arrive", "mbarrier.wait"]
    assert events[2].generation == 1 and events[3].details["bound_generation"] == 1
    assert [e.generation for e in events if e.kind == "mbarrier.wait"] == [0, 1]


def test_depth_two_pipeline_effects():
    """native_mbarrier_depth_two_pipeline: 4 init, 8 arrive, 6 observing waits (plus 2 vacuous ones)."""
    events = _sync_events("mbar_depth_two_pipeline")
    kinds = [e.kind for e in events]
    assert kinds.count("mbarrier.init") == 4 and kinds.count("mbarrier.arrive") == 8
    waits = [e for e in events if e.kind == "mbarrier.wait"]
    assert len([w for w in waits if w.generation is not None]) == 6
    assert len([w for w in waits if w.generation is None]) == 2


def test_many_waiters_stay_small():
    """tma_completion_many_waiters: 16 warps wait one completion; at most 32 states / 64 transitions."""
    report = sync("bulk_many_waiters")
    assert report.stats["numsim"]["warps"] == 16
    assert report.stats["verifier_states"] <= 32 and report.stats["verifier_transitions"] <= 64


def test_drain_tail_waits_the_last_release_of_every_slot():
    """test_native_drain_tail checks exact generation numbers: the producer's loop waits free[r % 2] from
    round 2 on (generations 0, 1, 0 of free[0], free[1], free[0]); the drain then observes the last
    release of each slot: free[0] generation 2 and free[1] generation 1 (ROUNDS = 5)."""
    waits = [e for e in _sync_events("drain_tail") if e.kind == "mbarrier.wait" and e.warp == 0]
    assert [e.generation for e in waits] == [0, 0, 1, 2, 1]
    assert waits[-2].barrier != waits[-1].barrier


def test_late_waiter_is_not_lapped():
    """The slow consumer observes every generation of `full` (the producer's empty wait gates the copies)."""
    events = _sync_events("late_wait_gates_next")
    late = [e.generation for e in events if e.kind == "mbarrier.wait" and e.warp == 2]
    assert late == [0, 1, 2]


# --------------------------------------------------------------------------- ids, reports, CLI

def test_finding_ids_are_stable_across_runs_and_file_moves(tmp_path):
    first = [f.id for f in sync("mbar_two_lane_arrive").findings]
    assert first == [f.id for f in sync("mbar_two_lane_arrive").findings]
    moved = tmp_path / "elsewhere.py"
    shutil.copy(KERNELS / "mbar_two_lane_arrive.py", moved)
    assert [f.id for f in modelcheck.synccheck(modelcheck.load(moved).func).findings] == first
    assert first[0].startswith("synccheck:mbarrier_arrival_overflow:")


@pytest.mark.parametrize("buggy,where", [(c[0], c[4]) for c in PHASE_A[:6]] +
                         [("named_barrier_group_sizes", None)])
def test_sarif_points_at_the_source_line(buggy, where):
    report = sync(buggy)
    f = [x for x in report.findings if x.status == "error"][0]
    sarif = report.to_sarif()
    result = sarif["runs"][0]["results"][0]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == span_line(f.details["operation"])
    if where is not None:
        assert region["startLine"] == line_of(buggy, *where)
    assert result["ruleId"] == f.kind
    d = report.to_dict()
    assert d["verdict"] == "error" and d["findings"][0]["kind"] == f.kind


def test_cli_exit_codes(capsys):
    from modelcheck.cli import main
    assert main(["sync", str(KERNELS / "named_barrier_group_sizes.py")]) == 1
    assert "fixed_sync_protocol_error" in capsys.readouterr().out
    assert main(["sync", str(KERNELS / "named_barrier_group_sizes_fixed.py")]) == 0
    assert "synccheck CLEAN" in capsys.readouterr().out


def test_early_completion_over_delivery_is_reported_at_the_arrive():
    """A copy that lands before its phase's expect_tx and brings more bytes than the expect_tx announces
    is an over-delivery (reference: "completed 16 transaction bytes, expected 8"), not a hang."""
    report = sync("bulk_completion_before_expect", EXPECT=8)
    f = only(report, "mbarrier_transaction_over_delivery")
    assert f.message == "completed 16 transaction bytes, expected 8"
    assert span_line(f.details["operation"]) == line_of("bulk_completion_before_expect", "T.uint32(EXPECT)")
    assert "deadlock" not in {x.kind for x in report.findings}


def test_lapped_consumer_is_a_phase_b_deadlock():
    """Reference bug B8(b): back-pressure from one consumer only.  Every re-arm happens after *a* consuming
    wait (phase A is clean), but the lagging consumer can be lapped: phase B finds the deadlock."""
    func = load("mbar_partial_backpressure").func
    assert check(func, phase_b=False).verdict == "clean"
    report = modelcheck.synccheck(func)
    f = only(report, "deadlock")
    assert f.details["verification"] == "fixed_sync"
    (blocked,) = f.details["blocked"]
    assert blocked["warp"] == 2
    assert span_line(blocked["operation"]) == line_of("mbar_partial_backpressure", "T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)")
    witness = f.details["witness"]
    rearms = [s for s in witness if s["warp"] == 0 and s["kind"] == "arrive"]
    assert len(rearms) == 4            # the producer got through every round ...
    lagging = [s for s in witness if s["warp"] == 2 and s["kind"] == "wait"]
    assert len(lagging) < 4            # ... while warp 2 did not
    assert sync("mbar_partial_backpressure_fixed").verdict == "clean"


DEFERRED_REARM = """
from tvm_tirx.script import tirx as T

@T.function
def deferred_rearm(g: T.Tensor((256,), T.int32), out: T.Tensor((256,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 96) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                s = T.alloc_tensor(ty_args=[T.Tensor((256,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.uint32(32))
                T.cuda.cta_sync()
                if warp == 0:
                    T.ptx.cp.async_.ca.shared.global_(s.ptr_to([lane * 4]), g.ptr_to([lane * 4]), 16)
                    T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64(full.ptr_to([0]))
                    T.ptx.bar.sync(1, 64)
                    T.ptx.cp.async_.ca.shared.global_(s.ptr_to([128 + lane * 4]), g.ptr_to([128 + lane * 4]), 16)
                    T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64(full.ptr_to([0]))
                elif warp == 1:
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 0)
                    T.cuda.mbarrier_wait(full.ptr_to([0]), 1)
                    for k in T.unroll(8):
                        out[lane * 8 + k] = s[lane * 8 + k]
                else:
                    for k in range(4):
                        T.cuda.nano_sleep(1000)
                    T.ptx.bar.sync(1, 64)
"""


def test_deferred_arrival_needs_the_prior_consumption_to_happen_before_its_issue():
    """Like mbar_unordered_rearm, with the re-arm made by deferred arrivals (cp.async.mbarrier.arrive): the
    consumer observed generation 0 first in the run, but no synchronization orders that before the issue of
    the arrivals that land on generation 1."""
    func = modelcheck.parse(DEFERRED_REARM)
    f = only(modelcheck.synccheck(func), "mbarrier_prior_generation_consumption_not_happens_before")
    assert f.message == ("generation 0 consumption does not happen before cp.async.mbarrier.arrive arrival on "
                         "full[0] generation 1")
    assert f.details["operation"]["warp"] == 0 and f.details["related_operations"][0]["warp"] == 1
