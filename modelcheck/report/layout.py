"""Graph layout with Graphviz: the happens-before timeline and finding paths as SVG.

`dot_available()` says whether the `dot` binary (Debian package `graphviz`) is on PATH;
`timeline_dot(hb, ...)` writes the run's synchronization as DOT -- one row per warp (nodes of a
warp share a rank chain, left to right in program order), barrier generations as ellipses
between the arrivals that complete them and the waits they release -- and `render_svg(dot)`
lays it out with `dot -Tsvg`.  Without `dot` the caller falls back to the hand-laid timeline
of `hb.export.to_svg` (and says so), never to nothing.
"""
from __future__ import annotations

import shutil
import subprocess

from ..hb.export import dot_quote

_ARRIVALS = ("arrive", "bar_arrive", "complete_tx", "deferred_arrive", "expect_tx")
_WAITS = ("observe", "bar_release", "observe_completion")
MAX_EVENTS = 400


def dot_available() -> bool:
    return shutil.which("dot") is not None


def render_svg(dot: str, timeout: float = 60.0) -> str:
    """`dot -Tsvg` of `dot`; RuntimeError when Graphviz is missing or fails."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz `dot` is not on PATH (Debian/Ubuntu: apt-get install graphviz)")
    done = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.strip()[:300]}")
    svg = done.stdout
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _short(d: dict) -> str:
    op = str(d.get("op", d.get("kind", "")))
    bar = d.get("barrier")
    it = d.get("iters")
    text = op + (f"\n{bar}" if bar else "") + (f" it {it}" if it not in (None, "", ()) else "")
    line = str(d.get("span", "")).rpartition(":")[0].rpartition(":")[2]
    return text + (f"\nline {line}" if line else "")


def timeline_dot(hb, highlight=(), order=None, title: str = "", max_events: int = MAX_EVENTS) -> str:
    """The run (or, with `order`, a finding's witness schedule) as a DOT timeline: warps as lanes, generations
    as ellipses, arrive->generation->wait edges; `highlight` nodes and the edges between them in red."""
    g = hb.graph
    hl = set(highlight)
    if order is not None:
        events = [n for n in dict.fromkeys(order) if n in g]
    else:
        events = [n for _, n in sorted((d["seq"], n) for n, d in g.nodes(data=True)
                                      if d.get("kind") in ("sync", "completion") and "seq" in d)]
    events += [n for n, d in g.nodes(data=True) if d.get("kind") == "blocked" and n not in events]
    truncated = len(events) > max_events
    events = events[:max_events]
    shown = set(events)
    lanes: dict = {}
    for n in events:
        d = g.nodes[n]
        lane = "async" if d.get("kind") == "completion" else f"warp {d.get('warp', '?')}"
        lanes.setdefault(lane, []).append(n)
    lines = [f"digraph {dot_quote('timeline')} {{", "  rankdir=LR; newrank=true; nodesep=0.15; ranksep=0.25;",
             f"  label={dot_quote(title + (' (first %d events)' % max_events if truncated else ''))}; labelloc=t;",
             '  node [fontname="Helvetica", fontsize=9, shape=box, style="rounded,filled", fillcolor="#e8f0fb", '
             'height=0.3];', '  edge [fontname="Helvetica", fontsize=8, color="#777777"];']
    for k, (lane, nodes) in enumerate(sorted(lanes.items(), key=lambda kv: (kv[0] == "async", kv[0]))):
        lines.append(f"  subgraph {dot_quote(f'cluster_lane{k}')} {{")
        lines.append(f"    label={dot_quote(lane)}; style=filled; color=\"#f6f6f6\"; fontsize=10;")
        for n in nodes:
            d = g.nodes[n]
            attrs = {"label": _short(d), "tooltip": d.get("label", str(n)) + (f" @ {d['span']}" if d.get("span")
                                                                                else "")}
            if d.get("kind") == "blocked":
                attrs.update(fillcolor="#f8c8c8", shape="octagon")
            if n in hl:
                attrs.update(color="red", penwidth="2")
            lines.append(f"    {dot_quote(n)} [{_attrs(attrs)}];")
        for a, b in zip(nodes, nodes[1:]):         # program order keeps the lane left to right
            lines.append(f"    {dot_quote(a)} -> {dot_quote(b)} [weight=20, color=\"#bbbbbb\", arrowsize=0.5];")
        lines.append("  }")
    gens = set()
    for u, v, d in g.edges(data=True):
        if d.get("kind") in _ARRIVALS and u in shown and g.nodes[v].get("kind") == "generation":
            gens.add(v)
        if d.get("kind") in _WAITS and v in shown and g.nodes[u].get("kind") == "generation":
            gens.add(u)
    for n in sorted(gens) if order is None else ():
        d = g.nodes[n]
        color = ', color="red", penwidth="2"' if n in hl else ""
        label = dot_quote(str(d.get('barrier', n)) + ' g' + str(d.get('generation', '')))
        lines.append(f"  {dot_quote(n)} [label={label}"
                     f", shape=ellipse, fillcolor=\"#e3f4e6\"{color}];")
    for u, v, d in g.edges(data=True) if order is None else ():
        if (u in shown or u in gens) and (v in shown or v in gens) and d.get("kind") in _ARRIVALS + _WAITS:
            red = u in hl and v in hl
            lines.append(f"  {dot_quote(u)} -> {dot_quote(v)} [weight=1, constraint=false"
                         f"{', color=red, penwidth=2' if red else ''}];")
    if order is not None:
        for a, b in zip(events, events[1:]):       # the schedule's order across lanes
            lines.append(f"  {dot_quote(a)} -> {dot_quote(b)} [style=dotted, constraint=false, color=\"#4a7\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def path_dot(hb, path, title: str = "") -> str:
    """A finding's happens-before path (or its blocked warps) as a small left-to-right chain."""
    g = hb.graph
    nodes = [n for n in path if n in g]
    lines = [f"digraph {dot_quote('path')} {{", "  rankdir=LR;", f"  label={dot_quote(title)}; labelloc=t;",
             '  node [fontname="Helvetica", fontsize=9, shape=box, style="rounded,filled", fillcolor="#fdf1dc"];',
             '  edge [fontname="Helvetica", fontsize=8];']
    for n in nodes:
        d = g.nodes[n]
        label = d.get("label", str(n)) + (f"\n{d['span']}" if d.get("span") else "")
        lines.append(f"  {dot_quote(n)} [label={dot_quote(label)}];")
    for a, b in zip(nodes, nodes[1:]):
        kind = g.edges[a, b]["kind"] if g.has_edge(a, b) else ("waits for" if str(a).startswith("blocked") else "")
        lines.append(f"  {dot_quote(a)} -> {dot_quote(b)} [label={dot_quote(kind)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={dot_quote(v)}" for k, v in attrs.items())
