"""Synccheck on thread-block clusters (docs/semantics.md#clusters): the init of a barrier a peer CTA uses must
be made visible to the cluster (fence.mbarrier_init + a cluster barrier), and a CTA must not exit while a peer
may still access its shared memory — judged by happens-before, not by the simulated run's order."""
from __future__ import annotations

from pathlib import Path

import modelcheck
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cluster"


def only(report, kind: str):
    found = [f for f in report.findings if f.kind == kind]
    assert len(found) == 1, report.format()
    return found[0]


def test_peer_arrive_before_the_init_is_visible():
    f = only(modelcheck.synccheck(modelcheck.load(KERNELS / "cluster_init_not_visible.py")),
             "cluster_barrier_init_not_visible")
    assert f.details["operation"]["cta"] == 1 and f.details["barrier_cta"] == 0
    assert f.details["operation"]["span"].line == 27        # the remote arrive
    assert f.details["related_operations"][0]["span"].line == 22     # the init
    assert modelcheck.synccheck(modelcheck.load(KERNELS / "cluster_init_not_visible_fixed.py")).verdict == "clean"


def test_a_relaxed_cluster_arrive_carries_only_what_the_init_fence_published():
    bad = modelcheck.synccheck(modelcheck.load(FIX / "relaxed_without_fence.py"))
    only(bad, "cluster_barrier_init_not_visible")
    assert modelcheck.synccheck(modelcheck.load(FIX / "relaxed_without_fence.py", FENCE=1)).verdict == "clean"


def test_exit_before_a_peer_read_is_found_by_happens_before():
    """Rank 0 exits after rank 1's read in the run, but nothing orders the read before that exit."""
    f = only(modelcheck.synccheck(modelcheck.load(FIX / "one_way_read_exit.py")), "cluster_exit_while_peer_access")
    assert f.details["exiting_cta"] == 0 and f.details["accessing_cta"] == 1
    assert "ld.shared::cluster" in f.message and f.details["operation"]["span"].line == 21


def test_exit_early_kernel_and_its_fix():
    only(modelcheck.synccheck(modelcheck.load(KERNELS / "cluster_exit_early.py")), "cluster_exit_while_peer_access")
    assert modelcheck.synccheck(modelcheck.load(KERNELS / "cluster_exit_early_fixed.py")).verdict == "clean"


def test_multicast_with_per_destination_accounting_is_clean_in_every_schedule():
    report = modelcheck.synccheck(modelcheck.load(KERNELS / "tma_multicast_tx_fixed.py"))
    assert report.verdict == "clean", report.format()
    only(modelcheck.synccheck(modelcheck.load(KERNELS / "tma_multicast_tx.py")), "deadlock")
