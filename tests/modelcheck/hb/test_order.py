"""Reachability in the happens-before graph agrees with Racecheck's vector clocks.

For every candidate conflicting pair Racecheck judges (its shadow's last write and reads
since, per lane), the graph orders the pair exactly when Racecheck does: ordered pairs
have a (bridged, when proxies differ) path, raced pairs have none.  Run on the buggy and
fixed twins of the race corpus whose ordering comes from barriers, async completions,
warp syncs, proxy fences, release/acquire through memory and tcgen05 ordering.
Racecheck's synthetic records (a tcgen05.dealloc as a write of the allocation) are not
trace records and are left out of the comparison.
"""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import hb
from modelcheck.hb.order import anchor, order, pair_ordering, reachable, search, states_of
from modelcheck.racecheck.replay import Pass
from tests.manifest import KERNELS, entries
from tests.test_manifest import manifest_inputs

TWINS = ["race_atomic_vs_plain", "race_bulk_reload_no_fence", "race_bulk_store_no_fence",
         "race_bulk_store_source_reuse", "race_bulk_store_wrong_fence",
         # wait_group.read retires a bulk store's source reads, not its destination writes
         "race_bulk_store_read_wait_dest", "race_elect_arrive_unjoined",
         "race_fence_acq_rel_not_sc", "race_fence_sc_no_flag", "race_flag_cta_scope", "race_flag_relaxed_store", "race_lane_broadcast",
         "race_read_before_wait", "race_relaxed_try_wait", "race_ring_write_before_wait", "race_write_write",
         "cp_async_overtaking", "mbar_partial_backpressure",
         # tcgen05: commit coverage, pipelined issue order, before/after_thread_sync fences across warps
         "race_tcgen05_handoff_no_after_fence", "race_tcgen05_mma_smem_reuse", "race_tmem_ld_st_no_wait",
         "race_tmem_dealloc_reader", "tmem_double_dealloc",
         # tcgen05.alloc: its address store reaches every lane of the allocating warp, no other warp
         "race_tmem_alloc_slot_unpublished",
         # st.async: its store ordered by the peer's phase, and its complete-tx a release of the issuer's history
         "st_async_read_before_wait", "st_async_note_after_store"]
_ENTRIES = dict(entries())


def _graph(name):
    entry = _ENTRIES[name]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    return hb.build(kernel.func, manifest_inputs(kernel.func, entry, kernel.constants))


def reach_has(reach, state) -> bool:
    return state in set(states_of({state[0]: reach.get(state[0], 0)}))


def _verdicts(h):
    """(Racecheck's raced record pairs, the graph's unordered record pairs) over Racecheck's candidate pairs."""
    trace = h.trace
    p = Pass(h.run.warps, h.run.warps_per_cta, list(trace.sync), list(trace.accesses))
    p.run()
    # Racecheck may add synthetic records of its own: pairs are compared by the trace's records (their seq)
    ours = {id(r) for r in trace.accesses}
    recs = p.records
    candidates = {tuple(row) for row in p.candidates[:, :4].tolist()}
    candidates = {c for c in candidates if id(recs[c[0]]) in ours and id(recs[c[2]]) in ours}
    raced = {(recs[r.prior].seq, recs[r.current].seq) for r in p.races
             if id(recs[r.prior]) in ours and id(recs[r.current]) in ours}
    unordered = set()
    for i, li, j, lj in sorted(candidates):
        if not pair_ordering(h, recs[i], li, recs[j], lj, want_path=False).ordered:
            unordered.add((recs[i].seq, recs[j].seq))
    return raced, unordered, len(candidates), len(recs) != len(trace.accesses)


@pytest.mark.parametrize("name", TWINS)
@pytest.mark.parametrize("fixed", [False, True], ids=["buggy", "fixed"])
def test_reachability_agrees_with_racecheck(name, fixed):
    twin = _ENTRIES[name]["twin"] if fixed else name
    h = _graph(twin)
    raced, unordered, candidates, synthetic = _verdicts(h)
    assert candidates > 0
    assert unordered == raced
    if not synthetic:       # the races of a synthetic record are not in `raced`
        expect = _ENTRIES[twin]["expect"]["racecheck"]
        kinds = set(expect.get("kinds", ())) | set(expect.get("any_kind", ()))
        assert bool(raced) == bool(kinds & {"data_race", "tmem_lifetime_review"})


@pytest.mark.parametrize("name", ["race_bulk_store_no_fence", "race_tcgen05_handoff_no_after_fence_fixed",
                                  "race_lane_broadcast_fixed", "race_flag_relaxed_store_fixed"])
def test_lane_mask_fixpoint_agrees_with_the_state_search(name):
    """`reachable` (lane masks to a fixpoint, what ordering queries use) and `search` (breadth-first over
    single states, what paths come from) give the same answer for every anchor pair of a run."""
    h = _graph(name)
    recs = h.trace.accesses[:40]
    checked = 0
    for i, a in enumerate(recs):
        for b in recs[i + 1:]:
            la = 0 if a.lanes is None or a.actor >= 0 else int(a.lanes.nonzero()[0][-1])
            lb = 0 if b.lanes is None or b.actor >= 0 else int(b.lanes.nonzero()[0][0])
            A, B = anchor(h, a, la), anchor(h, b, lb)
            if not A.start or not B.end:
                continue
            for gates in ((), ("proxy:shared",), ("tc_before", "tc_after")):
                fast = any(reach_has(reachable(h, A.start, gates), e) for e in B.end)
                slow = bool(search(h, A.start, B.end, gates)[0])
                assert fast == slow, (a, b, gates)
                checked += 1
    assert checked >= 9


def test_paths_are_real_paths_of_the_graph():
    """The path returned for an ordered pair walks edges of the graph that carry happens-before."""
    h = _graph("race_read_before_wait_fixed")
    g = h.graph
    recs = h.trace.accesses
    writes = [r for r in recs if r.kind == "write" and r.space == "shared"]
    reads = [r for r in recs if r.kind == "read" and r.space == "shared" and r.warp != writes[0].warp]
    lane = 0 if writes[0].lanes is None or writes[0].lanes[0] else int(writes[0].lanes.nonzero()[0][0])
    o = pair_ordering(h, writes[0], lane, reads[0], lane)
    assert o.ordered and o.reason == "path" and len(o.path) >= 3
    kinds = [k for _, _, k in o.path[1:]]
    assert "observe" in kinds or "bar_release" in kinds
    for (u, _, _), (v, _, k) in zip(o.path, o.path[1:]):
        assert u == v and k == "warp_sync" or g.edges[u, v]["orders"] and g.edges[u, v]["kind"] == k


def test_lane_order_needs_a_warp_sync():
    """Two lanes of one warp: unordered without a lane-order edge, ordered through the fixed twin's warp sync."""
    for name, ordered in (("race_lane_broadcast", False), ("race_lane_broadcast_fixed", True)):
        h = _graph(name)
        recs = h.trace.accesses
        w = next(r for r in recs if r.kind == "write" and r.space == "shared")
        r = next(r for r in recs if r.kind == "read" and r.space == "shared" and r.seq > w.seq)
        lanes = [int(k) for k in r.lanes.nonzero()[0]] if r.lanes is not None else list(range(32))
        wl = 0 if w.lanes is None else int(w.lanes.nonzero()[0][0])
        other = next(k for k in lanes if k != wl)
        o = order(h, anchor(h, w, wl), anchor(h, r, other))
        assert o.ordered is ordered, name


def test_a_commit_carries_its_issuers_bridges_on_kda_fwd():
    """kda_fwd_no_async_fence: the A = q~ k~^T mma's operand reads reach the prep warps' generic rewrite through the
    state keepers, who observe that mma's commit, fence (fence.proxy.async) and arrive, and through the MMA warp's
    later commit: a proxy fence on the causality path, so those pairs are bridged (PTX ISA 8.9.5); the mmas whose
    completion reaches the rewrite only through their own commit (which bridges nothing) still race, and the graph
    agrees with Racecheck on every one."""
    h = _graph("kda_fwd_no_async_fence")
    trace = h.trace
    p = Pass(h.run.warps, h.run.warps_per_cta, list(trace.sync), list(trace.accesses))
    p.run()
    recs = p.records
    proxy = [r for r in p.races if r.how[1] == "missing_proxy_bridge"]
    assert len(proxy) > 1000
    for r in proxy:
        o = pair_ordering(h, recs[r.prior], r.prior_lane, recs[r.current], r.current_lane, want_path=False)
        assert not o.ordered, (recs[r.prior], recs[r.current])


@pytest.mark.parametrize("fence", [0, 1])
def test_a_commit_relays_a_proxy_bridge(fence):
    """tests/fixtures/racecheck/tcgen_commit_bridge_relay.py: generic stores, fence, arrive; the waiter's tcgen05.cp
    and commit; the commit's waiter reloads the tile with a bulk copy.  With the fence the graph orders every pair
    (bridged through the commit), without it the stores race with the copy into TMEM and with the bulk copy, as
    Racecheck says."""
    path = KERNELS.parent / "tests" / "fixtures" / "racecheck" / "tcgen_commit_bridge_relay.py"
    func = modelcheck.load(path, FENCE=fence).func
    words = np.arange(512, dtype=np.uint32)
    h = hb.build(func, {"img": words * 3 + 1, "fresh": words + 7, "out": np.zeros(512, np.uint32)})
    raced, unordered, candidates, _ = _verdicts(h)
    assert candidates > 0 and unordered == raced
    assert bool(raced) == (fence == 0)
