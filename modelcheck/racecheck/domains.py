"""Which warps Racecheck's clocks must relate: a launch's clock domains (docs/semantics.md#racecheck-at-grid-scale).

Every edge Racecheck's happens-before follows stays inside a thread-block cluster (a CTA is its own
cluster in a launch without clusters) — barriers, warp syncs, async completions, tcgen05 commits,
cluster barriers and remote mbarriers — except three, which need morally strong accesses of scope
.gpu or .sys on both sides (`flow.acquire_from_memory`, `common.fence_sc`):

- a release (st/atom/red .release or .acq_rel, or a relaxed/volatile write after the lane's
  fence.acq_rel or fence.sc) read by a strong load: release/acquire through memory;
- fence.sc pairs the run forces;
- fenced tcgen05 work published by any strong write (only with tcgen05 operations).

(Two strong accesses of different CTAs are ordered by their strength, not by clocks: `judge`.)  So
a kernel with no strong .gpu/.sys access, or with one but without release writes, fences
acq_rel/sc and tcgen05 operations (`cross_cluster_ordering`), cannot order warps of different
clusters: each warp's clock needs only its cluster's lane columns, and accesses of different clusters
are unordered, as clocks over every lane of the grid would also say (their other clusters' columns
stay zero).  Otherwise the domain is the whole grid.  The analysis checks the premise where knowledge
moves (`flow.CrossedDomains`), and Racecheck then runs again with the whole grid as one domain, so
the verdict never rests on this census.
"""
from __future__ import annotations

import ir

from ..numsim.ops.memory import strong_access
from ..numsim.trace import ClusterLayout

_CROSS_SCOPES = ("gpu", "sys")
_RELEASING = ("release", "acq_rel")
_FENCES = ("fence.acq_rel", "fence.sc", "cuda.thread_fence")


def cross_cluster_ordering(func) -> str | None:
    """Why `func` may order warps of different clusters (naming the operations and their line), or None."""
    strong = release = fence = tcgen = None
    for node in ir.walk(func.body):
        if not isinstance(node, ir.OpCall):
            continue
        info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
        if info is None:
            continue
        acc = strong_access(info)
        if acc is not None and acc[1] in _CROSS_SCOPES:
            strong = strong or node
            if acc[0] in _RELEASING and info.name != "ld":
                release = release or node
        elif info.name in _FENCES:
            fence = fence or node
        elif info.name.startswith("tcgen05"):
            tcgen = tcgen or node
    publisher = release or fence or tcgen
    if strong is None or publisher is None:
        return None
    return _at(strong) if publisher is strong else f"{_at(strong)} with {_at(publisher)}"


def _at(node) -> str:
    line = getattr(node.span, "line", None) if node.span is not None else None
    return f"{node.op}" + (f" (line {line})" if line is not None else "")


def layout_for(run, whole: bool) -> ClusterLayout:
    """The clock domains of a run (numsim RunInfo): its clusters, or one domain of every warp."""
    return ClusterLayout.whole(run.warps) if whole else run.cluster_layout()
