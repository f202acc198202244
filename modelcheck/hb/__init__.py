"""The happens-before graph of one run: build, query, explain, export
(docs/architecture.md#happens-before-graph-and-replay).

Entry points: `build(kernel, inputs=None, **limits)` runs NumSim once and returns a
`HappensBefore` (its `.graph` is a networkx DiGraph); `from_trace(trace, run)` does
the same for a recorded trace; `explain(report, finding)` says why a finding's two
accesses are (not) ordered, or what a deadlock's blocked warps wait for; `write(hb,
path)` exports DOT, GraphML, JSON or an SVG timeline.  Built on demand, never by a
check.  The only networkx user of modelcheck.
"""
from __future__ import annotations

from .build import RunNotStarted, build
from .explain import Explanation, explain
from .export import FORMATS, to_dot, to_json, write
from .graph import EDGE_KINDS, NODE_KINDS, HappensBefore, Recorder, from_trace
from .order import Ordering, anchor, pair_ordering

__all__ = ["build", "RunNotStarted", "from_trace", "explain", "Explanation", "write", "FORMATS", "to_dot", "to_json",
           "HappensBefore", "Recorder", "EDGE_KINDS", "NODE_KINDS", "Ordering", "anchor", "pair_ordering"]
