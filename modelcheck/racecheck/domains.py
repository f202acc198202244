"""Which warps Racecheck's clocks must relate: a launch's clock domains (docs/semantics.md#racecheck-at-grid-scale).

Every edge Racecheck's happens-before follows stays inside a thread-block cluster (a CTA is its own
cluster in a launch without clusters) — barriers, warp syncs, async completions, tcgen05 ordering,
cluster barriers and remote mbarriers — except release/acquire through memory and fence.sc pairs
between different CTAs, and those need morally strong accesses of scope .gpu or .sys on both sides
(`flow.acquire_from_memory`, `common.fence_sc`; the strong-pair rule of `judge` too).  A kernel with
no operation that makes such an access (`cross_cluster_access`) cannot order two warps of different
clusters, so each warp's clock needs only its own cluster's lane columns: accesses of different
clusters are unordered, which is what clocks over every lane of the grid would also say (their columns
of other clusters stay zero).  Otherwise the domain is the whole grid.  The analysis checks the
premise on every record (`Analysis.crossed`: a strong record of scope .gpu or .sys in a split launch),
and Racecheck then runs again with the whole grid as one domain, so the verdict never rests on it.
"""
from __future__ import annotations

import ir

from ..numsim.ops.memory import strong_scope
from ..numsim.trace import ClusterLayout

CROSS_SCOPES = ("gpu", "sys")


def cross_cluster_access(func) -> ir.OpCall | None:
    """The first operation of `func` that may make a morally strong access of scope .gpu or .sys (one that can
    order warps of different clusters), or None."""
    for node in ir.walk(func.body):
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is not None and strong_scope(info) in CROSS_SCOPES:
                return node
    return None


def layout_for(run, whole: bool) -> ClusterLayout:
    """The clock domains of a run (numsim RunInfo): its clusters, or one domain of every warp."""
    return ClusterLayout.whole(run.warps) if whole else run.cluster_layout()
