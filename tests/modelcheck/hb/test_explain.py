"""explain(report, finding) on real Synccheck and Racecheck reports."""
from __future__ import annotations

import pytest

import modelcheck
from modelcheck import hb
from tests.manifest import KERNELS


def _report(name: str, checker: str = "race"):
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    return (modelcheck.racecheck if checker == "race" else modelcheck.synccheck)(kernel)


def _first(report, kind):
    return next(f for f in report.findings if f.kind == kind)


@pytest.mark.parametrize("checker", ["sync", "race"])
def test_deadlock_names_the_blocked_warps_their_barriers_and_the_cycle(checker):
    report = _report("hang_wrong_parity", checker)
    e = hb.explain(report, _first(report, "deadlock"))
    assert e.kind == "deadlock" and e.ordered is None
    items = {item["warp"]: item for item in e.data["blocked"]}
    assert sorted(items) == [0, 1]
    assert (items[0]["barrier"], items[0]["generation"]) == ("empty[0]", 1)
    assert (items[1]["barrier"], items[1]["generation"]) == ("full[0]", 0)
    assert items[0]["would_arrive"] == [1]           # the consumer arrives on empty in the run
    assert sorted(e.data["cycle"]) == [0, 1]
    text = e.format()
    assert "wait-for cycle" in text and "warp 0 awaits empty[0] generation 1" in text
    assert "warp 1 awaits full[0] generation 0" in text
    # the export highlights the blocked waits
    assert all(n.startswith("blocked:") for n in e.path) and len(e.path) == 2


def test_phase_b_deadlock_uses_the_witness():
    """A deadlock only another schedule reaches (phase B): warp 1's contribution is overtaken by warp 2's."""
    report = _report("named_barrier_rendezvous", "sync")
    f = _first(report, "deadlock")
    assert f.details["verification"] == "fixed_sync"
    e = hb.explain(report, f)
    (item,) = e.data["blocked"]
    assert (item["warp"], item["barrier"], item["generation"]) == (1, "named barrier 1", 1)
    assert item["would_arrive"] == [0, 2] and e.data["cycle"] == []
    text = e.format()
    assert "in the run this wait observed generation 0" in text
    assert "warp 0 (finished in the witness schedule)" in text and "witness schedule (5 steps)" in text
    # the witness order over the run's operations, then the one warp 1 is stuck at (highlighted)
    g = hb.build(report.result.func, report.result.inputs).graph
    ops = [(g.nodes[n]["warp"], g.nodes[n]["op"]) for n in e.data["witness_nodes"]]
    assert ops == [(0, "bar.sync"), (2, "bar.sync"), (0, "bar.wait"), (1, "bar.sync"), (2, "bar.wait"),
                   (1, "bar.wait")]
    assert e.path == (e.data["witness_nodes"][-1],)


def test_deadlock_of_a_short_count_says_how_many_arrivals_are_missing():
    report = _report("ring_short_arrival", "sync")
    text = hb.explain(report, _first(report, "deadlock")).format()
    assert "warp 2 awaits full[0] generation 0" in text
    assert "still needs 1 more arrival(s)" in text


def test_race_without_any_path_names_the_missing_arrive_wait_edge():
    report = _report("race_elect_arrive_unjoined")
    e = hb.explain(report, _first(report, "data_race"))
    assert e.ordered is False and e.data["needed"] == "arrive_wait"
    assert "from warp 0 lane 1" in e.summary and "to warp 1 lane 1" in e.summary
    # the reader's side did acquire a generation: just not one the writer's lane released into
    assert "full[0] gen 0" in e.format()


def test_race_between_lanes_names_the_missing_lane_order():
    report = _report("race_lane_broadcast")
    e = hb.explain(report, 1)
    assert e.ordered is False and e.data["needed"] == "lane_order"
    assert "warp_sync" in e.summary


def test_proxy_race_has_a_path_but_no_bridge():
    report = _report("race_bulk_store_no_fence")
    e = hb.explain(report, _first(report, "data_race").id)
    assert e.ordered is False and e.data["needed"] == "proxy_bridge" and e.data["reason"] == "no_bridge"
    assert "fence.proxy.async" in e.summary and e.path      # the unbridged path is shown
    assert any(ln.strip().startswith("--issue-->") for ln in e.lines)


def test_async_lifetime_race_names_the_completion_to_observe():
    # cp_async_overtaking: the producer lane reuses a cp.async destination before observing the earlier copy's
    # completion; its issue is ordered before the reuse, its completion is not
    report = _report("cp_async_overtaking")
    f = next(f for f in report.findings if f.details.get("ordering_failure") == "async_lifetime_not_drained")
    e = hb.explain(report, f)
    assert e.ordered is False and e.data["needed"] == "completion"
    assert "completion of async op" in e.summary and "cp.async" in e.summary
    assert "its issue is ordered before the current access" in e.format()


def test_operation_pair_finding():
    # mbar_init_race: the init by warp 0 is not ordered before warp 1's arrive
    report = modelcheck.synccheck(modelcheck.load(KERNELS / "mbar_init_race.py"))
    e = hb.explain(report, _first(report, "mbarrier_init_not_happens_before_use"))
    assert e.ordered is False
    assert "no happens-before path from w0 mbarrier.init ready[0]" in e.format()


def test_rearm_before_consumption_on_the_seed_kernel():
    # producer_overtaking: the producer re-arms full[0] each round with nothing to wait on; in the run the
    # consumer's waits never pass and it is left blocked
    report = modelcheck.synccheck(modelcheck.load(KERNELS / "producer_overtaking.py"))
    e = hb.explain(report, _first(report, "mbarrier_arrive_before_consumption"))
    assert e.ordered is False and "back-pressure" in e.summary
    text = e.format()
    assert "full[0] generation 1 is mutated by w0 mbarrier.arrive" in text
    assert "blocked on it when the run stopped: warp 1" in text


def test_rearm_with_an_unordered_consumption():
    report = modelcheck.synccheck(modelcheck.load(KERNELS / "mbar_unordered_rearm.py"))
    e = hb.explain(report, _first(report, "mbarrier_prior_generation_consumption_not_happens_before"))
    assert e.ordered is False
    assert "observed by w1 mbarrier.wait full[0] g0" in e.format()
    assert "no happens-before path orders it before the mutation" in e.format()


def test_dealloc_while_a_tcgen05_load_is_in_flight():
    # race_tmem_dealloc_reader: the reader synchronizes with the deallocating warp (fences and a CTA barrier)
    # but never waits for its tcgen05.ld to complete
    report = _report("race_tmem_dealloc_reader")
    e = hb.explain(report, _first(report, "data_race"))
    assert e.ordered is False and e.data["needed"] == "completion"
    assert "tcgen05.dealloc of tmem" in e.format() and "tcgen05.wait::ld" in e.summary


def test_selecting_findings():
    report = _report("race_write_write")
    assert hb.explain(report, report.findings[0].id[:30]).finding_id == report.findings[0].id
    with pytest.raises(ValueError, match="numbered from 1"):
        hb.explain(report, len(report.findings) + 1)
    with pytest.raises(ValueError, match="not in the report"):
        hb.explain(report, "racecheck:nope")
