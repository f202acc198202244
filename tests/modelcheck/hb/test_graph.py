"""Graph shape: the nodes and edges the builder makes for small corpus kernels.

Counts are derived from the kernels' source (in the comments), so a builder that drops,
duplicates or mislabels an edge, or ignores lanes, fails here.
"""
from __future__ import annotations

from collections import Counter

import pytest

import modelcheck
from modelcheck import hb
from modelcheck.hb.graph import EDGE_KINDS, FULL, NODE_KINDS
from tests.manifest import KERNELS


def _build(name: str, **consts):
    return hb.build(modelcheck.load(KERNELS / f"{name}.py", **consts))


def _kinds(h):
    g = h.graph
    return (Counter(d["kind"] for _, d in g.nodes(data=True)), Counter(d["kind"] for *_, d in g.edges(data=True)))


def _edges(h, kind):
    return [(u, v, d) for u, v, d in h.graph.edges(data=True) if d["kind"] == kind]


def test_every_node_and_edge_kind_is_registered():
    h = _build("cp_async_overtaking_fixed")
    nodes, edges = _kinds(h)
    assert set(nodes) <= set(NODE_KINDS)
    assert set(edges) <= set(EDGE_KINDS)
    for _, _, d in h.graph.edges(data=True):
        assert d["lane_map"] in ("same", "any")


def test_producer_overtaking_fixed_ring():
    # 2 inits + fence by tx 0; cta_sync = 2 bar.sync + 2 bar.wait; 4 rounds of (wait, arrive) per warp
    h = _build("producer_overtaking_fixed")
    nodes, edges = _kinds(h)
    assert nodes == {"sync": 3 + 4 + 16, "generation": 4 + 4 + 1}
    # the producer's round-0 empty wait is the vacuous parity-1 wait: it observes nothing
    assert edges["observe"] == 7 and edges["arrive"] == 8
    assert edges["bar_arrive"] == 2 and edges["bar_release"] == 2 and edges["init"] == 2
    assert edges["next_generation"] == 3 + 3
    g = h.graph
    # every arrive is lane 0's alone (if lane == 0): it releases only lane 0's history
    for u, v, d in _edges(h, "arrive"):
        assert d["src_mask"] == 1 and g.nodes[u]["mask"] == 1 and g.nodes[v]["kind"] == "generation"
    # generation g of full is observed by the consumer's round-g wait, of empty by the producer's round-g+1 wait
    for u, v, d in _edges(h, "observe"):
        gen, wait = g.nodes[u], g.nodes[v]
        assert wait["op"] == "mbarrier.wait" and d["dst_mask"] == FULL
        assert wait["generation"] == gen["generation"]
        assert int(wait["iters"]) == gen["generation"] + (gen["barrier"] == "empty[0]")
        assert wait["warp"] == (1 if gen["barrier"] == "full[0]" else 0)


def test_program_order_is_per_lane():
    # race_elect_arrive_unjoined_fixed: lane 0 of warp 0 arrives after a warp_sync; the other lanes skip the
    # arrive, so their program order runs from the warp_sync straight to the next node
    h = _build("race_elect_arrive_unjoined_fixed")
    g = h.graph
    arrive = next(n for n, d in g.nodes(data=True) if d.get("op") == "mbarrier.arrive")
    assert g.nodes[arrive]["mask"] == 1
    into = [d for u, v, d in _edges(h, "program_order") if v == arrive]
    assert len(into) == 1 and into[0]["src_mask"] == 1
    sync = next(n for n, d in g.nodes(data=True) if d.get("op") == "warp_sync")
    assert g.nodes[sync]["joins"] == FULL
    # the lanes that did not arrive have no program-order edge through the arrive
    for u, _v, d in _edges(h, "program_order"):
        if u == arrive:
            assert d["src_mask"] == 1


def test_named_barrier_all_to_all():
    # warps 0,1 meet on barrier 1 (64 threads), warps 1,2 on barrier 2: each generation has two contributions
    # and releases exactly its two participants
    h = _build("named_barrier_rendezvous_fixed")
    g = h.graph
    nodes, edges = _kinds(h)
    assert nodes == {"sync": 8, "generation": 2} and edges["bar_arrive"] == 4 and edges["bar_release"] == 4
    for gen in (n for n, d in g.nodes(data=True) if d["kind"] == "generation"):
        ident = g.nodes[gen]["barrier"]
        arrivers = sorted(g.nodes[u]["warp"] for u in g.predecessors(gen))
        released = sorted(g.nodes[v]["warp"] for v in g.successors(gen))
        assert arrivers == released == ([0, 1] if ident == "named barrier 1" else [1, 2])
    # warp 1: sync(1) contribution -> resume -> sync(2) contribution -> resume, in program order
    w1 = [g.nodes[n]["op"] for _, n in h.lane_nodes[(1, 0)]]
    assert w1 == ["bar.sync", "bar.wait", "bar.sync", "bar.wait"]


def test_bulk_copy_issue_completion_generation():
    # two tiles: lane 0 arrive.expect_tx + cp.async.bulk g2s per tile, the warp waits each generation
    h = _build("bulk_two_generations")
    g = h.graph
    nodes, edges = _kinds(h)
    assert nodes["async_op"] == 2 and nodes["completion"] == 2 and nodes["generation"] == 2
    assert edges["issue"] == edges["complete"] == edges["complete_tx"] == 2
    for op in (n for n, d in g.nodes(data=True) if d["kind"] == "async_op"):
        assert g.nodes[op]["transit"] is False and g.nodes[op]["op"] == "bulk.g2s"
        (issue,) = g.predecessors(op)
        (done,) = g.successors(op)
        (gen,) = g.successors(done)
        assert g.nodes[issue]["op"] == "async.issue" and g.nodes[done]["kind"] == "completion"
        # the copy lands on the generation its issue was bound to
        assert g.nodes[gen]["generation"] == g.nodes[op]["generation"]


def test_bulk_store_group_wait():
    # race_bulk_store_no_fence_fixed: a bulk shared->global store, committed and waited by lane 0 of warp 0
    h = _build("race_bulk_store_no_fence_fixed")
    g = h.graph
    (op,) = [n for n, d in g.nodes(data=True) if d["kind"] == "async_op"]
    ((done, wait, d),) = _edges(h, "group_wait")
    assert list(g.predecessors(done)) == [op]
    assert g.nodes[wait]["op"] == "bulk.wait_group" and d["dst_mask"] == 1
    fences = [n for n, d in g.nodes(data=True) if d.get("op") == "fence.proxy.async"]
    assert len(fences) == 4 and all(g.nodes[f]["space"] == "shared::cta" for f in fences)


def test_memory_synchronization_edges():
    # st.release by lane 0 read by warp 1's polling ld.acquire: exactly the read that saw the flag set
    h = _build("race_flag_relaxed_store_fixed")
    (edge,) = _edges(h, "reads_from")
    u, v, d = edge
    g = h.graph
    assert g.nodes[u]["op"] == "write.release" and g.nodes[v]["op"] == "read.acquire"
    assert g.nodes[u]["warp"] == 0 and g.nodes[v]["warp"] == 1 and d["src_mask"] == 1
    # a fence.sc pair is ordered when the run forces it: P's load of the old turn after its fence, Q's store of
    # turn before its own; two fence.sc with no such access between them stay unordered
    h2 = _build("race_fence_acq_rel_not_sc_fixed")
    (sc,) = _edges(h2, "sc_order")
    assert h2.graph.nodes[sc[0]]["warp"] == 0 and h2.graph.nodes[sc[1]]["warp"] == 1
    assert not _edges(_build("race_fence_acq_rel_not_sc"), "sc_order")
    assert not _edges(_build("race_fence_sc_no_flag"), "sc_order")


def test_deadlocked_run_has_blocked_nodes_awaiting_generations():
    h = _build("hang_wrong_parity")
    g = h.graph
    blocked = {d["warp"]: n for n, d in g.nodes(data=True) if d["kind"] == "blocked"}
    assert sorted(blocked) == [0, 1]
    awaited = {w: next(g.successors(n)) for w, n in blocked.items()}
    assert g.nodes[awaited[0]]["barrier"] == "empty[0]" and g.nodes[awaited[0]]["generation"] == 1
    assert g.nodes[awaited[1]]["barrier"] == "full[0]" and g.nodes[awaited[1]]["generation"] == 0
    assert all(not g.edges[blocked[w], awaited[w]]["orders"] for w in blocked)


def test_build_without_bindings_is_an_input_error():
    func = modelcheck.load(KERNELS / "producer_overtaking_fixed.py").func
    with pytest.raises(modelcheck.numsim.InputError, match="out"):
        hb.build(func, {})
