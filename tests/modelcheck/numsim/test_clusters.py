"""Thread-block clusters in NumSim (issue 17 item 1; docs/semantics.md#clusters): the launch's clusters and
ranks, shared::cluster addresses into a peer's shared memory, remote atomics and mbarrier arrivals, multicast
TMA per destination, the cluster barrier and the end of a CTA's shared memory at its exit."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim
from modelcheck.numsim.memory import CLUSTER_WINDOW, cluster_address, split_cluster
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cluster"


def run(path, inputs=None, **consts):
    func = modelcheck.load(path, **consts).func
    return numsim.run(func, numsim.default_inputs(func, inputs))


def only(res, kind):
    found = [d for d in res.diagnostics if d.kind == kind]
    assert len(found) == 1, res.diagnostics
    return found[0]


def test_cluster_addresses_name_a_rank_and_a_shared_address():
    a = cluster_address(3, 0x480)
    assert a >= CLUSTER_WINDOW and split_cluster(a) == (3, 0x480)
    assert split_cluster(0x480) == (None, 0x480)
    assert cluster_address(0, cluster_address(2, 0x480)) == cluster_address(0, 0x480)   # mapa of a mapped address


def test_ranks_and_places_follow_the_cluster_shape():
    res = run(FIX / "ranks.py")
    assert res.termination == "completed" and res.stats["cluster"] == (2, 2, 1)
    out = res.outputs["out"]
    for by in range(2):
        for bx in range(4):
            cx, cy = bx % 2, by % 2
            assert list(out[by, bx]) == [cx + 2 * cy, cx, cy, 4], (bx, by)


def test_a_grid_that_is_not_whole_clusters_cannot_launch():
    text = (FIX / "ranks.py").read_text().replace('"blockIdx.x", 4', '"blockIdx.x", 3')
    func = modelcheck.parse(text, path="ranks3.py")
    res = numsim.run(func, numsim.default_inputs(func, None))
    d = only(res, "launch_exceeds_hardware_limits")
    assert "not a multiple of the cluster dimension" in d.message and d.details["cluster"] == [2, 2, 1]


def test_dsmem_reads_the_peer_tile_and_records_the_peer_allocation():
    trace = numsim.Trace()
    func = modelcheck.load(KERNELS / "cluster_exit_early_fixed.py").func
    res = numsim.run(func, numsim.default_inputs(func, None), observers=(trace,))
    assert res.verdict == "clean"
    out = res.outputs["out"]
    for bx in range(4):
        assert list(out[bx, :3]) == [(bx ^ 1) * 100 + t for t in range(3)]
    # allocation ids: `out` is 0, then one `tile` per CTA (1 + cta); every shared read is of the peer's tile
    reads = [r for r in trace.accesses if r.kind == "read" and r.space == "shared"]
    assert len(reads) == 4 and all(r.alloc == 1 + (r.cta ^ 1) for r in reads)


def test_remote_atomics_land_in_rank_zero():
    res = run(FIX / "remote_atomics.py")
    assert res.verdict == "clean"
    assert list(res.outputs["out"]) == [64, 0, 64, 0]


def test_multicast_tma_writes_every_cta_of_the_mask():
    src = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    res = run(KERNELS / "tma_multicast_tx_fixed.py", {"src": src})
    assert res.verdict == "clean"
    assert np.array_equal(res.outputs["out"][0], src[:8]) and np.array_equal(res.outputs["out"][1], src[:8])


def test_multicast_byte_accounting_is_per_destination():
    """The issuer's barrier receives one box's bytes, not the cluster's: arming it for two never completes."""
    res = run(KERNELS / "tma_multicast_tx.py")
    d = only(res, "deadlock")
    awaits = {b["warp"]: b for b in d.details["blocked"]}
    assert "full[0]" in awaits[0]["awaits"] and "transactions 1024/2048" in awaits[0]["state"]
    assert "barrier.cluster.wait" in awaits[1]["awaits"]


def test_a_cluster_barrier_some_cta_never_reaches_is_a_deadlock():
    d = only(run(FIX / "barrier_never_reached.py"), "deadlock")
    blocked = {b["warp"]: b["awaits"] for b in d.details["blocked"]}
    assert "barrier.cluster.wait" in blocked[0] and "awaiting warps [1]" in blocked[0]
    assert "mbarrier" in blocked[1]


def test_an_aligned_cluster_arrive_needs_the_whole_warp():
    d = only(run(FIX / "divergent_cluster_arrive.py"), "warp_collective_divergence")
    assert d.span.line == 13


def test_a_local_arrive_on_a_peer_barrier_is_an_invalid_address():
    d = only(run(FIX / "local_arrive_remote.py"), "invalid_address")
    assert "shared::cluster" in d.message and d.span.line == 21


def test_a_generic_sink_arrive_reaches_the_peer_barrier():
    """No state space and no state (`mbarrier.arrive.b64 _, [addr]`): the address may be in the shared::cluster
    window (PTX's sink form leaves .shared::cluster optional), so each CTA's wait completes on its peer's arrival."""
    r = modelcheck.synccheck(ir.parse_file(FIX / "generic_arrive_remote.py"))
    assert r.verdict == "clean", [f.message for f in r.findings]


def test_a_read_of_an_exited_peer_is_an_error_of_the_run():
    d = only(run(KERNELS / "cluster_exit_early.py"), "cluster_exit_while_peer_access")
    assert d.span.line == 24 and d.details["peer_cta"] == 1


def test_one_cta_cluster_tma_is_shared_cta():
    """A TMA load into shared::cluster on a cluster of one lands in the CTA's own memory (no longer a gap)."""
    from tests.test_real_syntax import entries, inputs_builder
    entry = dict(entries())["tma_ring1_cluster_pre"]
    func = modelcheck.load(KERNELS / entry["file"]).func
    res = numsim.run(func, numsim.default_inputs(func, inputs_builder(entry)({})))
    assert res.verdict == "clean" and res.stats["cluster"] == (1, 1, 1)


def test_multicast_commit_arrives_on_every_cta_of_the_mask():
    res = run(FIX / "commit_multicast.py")
    assert res.verdict == "clean" and list(res.outputs["out"]) == [1, 1]
    # a mask of rank 0 alone leaves rank 1's barrier without its arrival: rank 1 hangs
    text = (FIX / "commit_multicast.py").read_text().replace("T.uint16(3))", "T.uint16(1))")
    func = modelcheck.parse(text, path="commit_one.py")
    d = only(numsim.run(func, numsim.default_inputs(func, None)), "deadlock")
    assert any(b["cta"] == 1 and "done[0]" in b["awaits"] for b in d.details["blocked"])
