"""Racecheck on distributed shared memory (docs/semantics.md#clusters): a peer's ld/st/atom through a
shared::cluster address is an access of the peer's allocation, ordered only by synchronization — a default
cluster barrier (release arrive, acquire wait) orders it, a relaxed one does not."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cluster"


def races(report):
    return [f for f in report.findings if f.kind == "data_race"]


@pytest.mark.parametrize("consts", [{}, {"RELAXED": 1}])
def test_a_remote_read_not_ordered_after_the_peer_write_races(consts):
    report = modelcheck.racecheck(modelcheck.load(FIX / "unsynced_remote_read.py", **consts))
    found = races(report)
    assert found, report.format()
    assert all(f.details["ordering_failure"] == "missing_inter_actor_sync" for f in found)
    assert all("smem tile" in f.message for f in found)


def test_a_cluster_barrier_orders_the_peer_write_before_the_read():
    assert modelcheck.racecheck(modelcheck.load(FIX / "unsynced_remote_read.py", SYNC=1)).verdict == "clean"


@pytest.mark.parametrize("path", [FIX / "remote_atomics.py", KERNELS / "cluster_exit_early_fixed.py",
                                  KERNELS / "tma_multicast_tx_fixed.py"])
def test_synchronized_cluster_kernels_are_clean(path):
    report = modelcheck.racecheck(modelcheck.load(path))
    assert report.verdict == "clean", report.format()
