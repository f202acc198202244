"""Exports of the happens-before graph: DOT, GraphML, JSON (node-link) and an SVG timeline.

DOT and SVG are written here (quoted and escaped); GraphML goes through
`networkx.generate_graphml` after every attribute is made a scalar (lane masks become
lane lists such as "0-31"); JSON is networkx's node-link form.  The SVG timeline needs
no renderer: warps are horizontal lanes, each barrier generation is a column placed
where it completed, and arrows run from arrivals to generations and on to the waits
they release.  `write(hb, path)` picks the format from the extension and writes through
`common.files.write_output` (exactly that path, never over an input, never through a symlink).
"""
from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape

import networkx as nx

from ir.errors import UsageError

from ..common.files import write_output
from .graph import lane_text

FORMATS = (".dot", ".gv", ".graphml", ".json", ".svg")
_MASKS = ("mask", "joins", "src_mask", "dst_mask", "po_mask")
_SHAPE: dict[str | None, str] = {"sync": "box", "generation": "ellipse", "async_op": "hexagon", "completion": "diamond",
          "memory": "note", "blocked": "octagon"}
_COLOR = {"program_order": "gray40", "arrive": "blue", "observe": "blue", "bar_arrive": "darkgreen",
          "bar_release": "darkgreen", "issue": "purple", "complete": "purple", "complete_tx": "purple",
          "deferred_arrive": "purple", "covers": "purple", "group_wait": "purple", "reads_from": "orange",
          "sc_order": "orange", "awaits": "red", "observe_completion": "purple"}


def scalar_graph(g: nx.DiGraph) -> nx.DiGraph:
    """A copy whose attributes are all str/int/float/bool (lane masks rendered as lane lists)."""
    out = nx.DiGraph()
    out.graph.update({k: v for k, v in g.graph.items() if isinstance(v, (str, int, float, bool))})
    for n, d in g.nodes(data=True):
        out.add_node(str(n), **_scalars(d))
    for u, v, d in g.edges(data=True):
        out.add_edge(str(u), str(v), **_scalars(d))
    return out


def _scalars(d: dict) -> dict:
    out: dict[str, object] = {}
    for k, v in d.items():
        if v is None:
            continue
        if k in _MASKS and isinstance(v, int) and not isinstance(v, bool):
            out[k] = lane_text(v)
        elif isinstance(v, (str, int, float, bool)):
            out[k] = v
        else:
            out[k] = str(v)
    return out


def dot_quote(text) -> str:
    """A DOT double-quoted string: backslashes, quotes and line breaks escaped."""
    s = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{s}"'


def to_dot(hb, highlight=()) -> str:
    g = hb.graph
    hl = set(highlight)
    lines = [f"digraph {dot_quote('hb_' + str(g.graph.get('kernel', 'kernel')))} {{",
             "  rankdir=LR;", '  node [fontname="monospace", fontsize=10];', '  edge [fontsize=8];']
    by_warp: dict[int, list] = {}
    rest = []
    for n, d in g.nodes(data=True):
        if d.get("kind") in ("sync", "memory", "blocked"):
            by_warp.setdefault(d.get("warp", -1), []).append(n)
        else:
            rest.append(n)
    for warp in sorted(by_warp):
        lines.append(f"  subgraph {dot_quote(f'cluster_warp{warp}')} {{")
        lines.append(f"    label={dot_quote(f'warp {warp}')};")
        lines.extend(f"    {_dot_node(n, g.nodes[n], n in hl)}" for n in by_warp[warp])
        lines.append("  }")
    lines.extend(f"  {_dot_node(n, g.nodes[n], n in hl)}" for n in rest)
    for u, v, d in g.edges(data=True):
        attrs = {"label": d["kind"], "color": "red" if (u in hl and v in hl) else _COLOR.get(d["kind"], "black")}
        if not d.get("orders", True):
            attrs["style"] = "dashed"
        if d.get("lane_map") == "any" and d.get("src_mask") and d["src_mask"] != 0xFFFFFFFF:
            attrs["taillabel"] = f"lanes {lane_text(d['src_mask'])}"
        lines.append(f"  {dot_quote(u)} -> {dot_quote(v)} [{_dot_attrs(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_node(n, d: dict, highlighted: bool) -> str:
    label = d.get("label", str(n))
    if d.get("span"):
        label += f"\n{d['span']}"
    attrs = {"label": label, "shape": _SHAPE.get(d.get("kind"), "box")}
    if highlighted:
        attrs.update(color="red", penwidth="2")
    if d.get("kind") == "blocked":
        attrs.update(style="filled", fillcolor="mistyrose")
    return f"{dot_quote(n)} [{_dot_attrs(attrs)}];"


def _dot_attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={dot_quote(v)}" for k, v in attrs.items())


def to_json(hb) -> str:
    data = nx.node_link_data(scalar_graph(hb.graph), edges="links")
    return json.dumps(data, indent=1, sort_keys=True)


# ---------------------------------------------------------------------------------- SVG timeline
_DX, _DY, _LEFT, _TOP = 26, 46, 90, 40
_ARRIVALS = ("arrive", "bar_arrive", "complete_tx", "deferred_arrive", "expect_tx")


def to_svg(hb, highlight=(), max_events: int = 4000, order=None) -> str:
    """Warps as lanes, barrier generations as columns where they completed; `highlight` nodes in red.
    `order`: draw only these nodes, in this order (a witness schedule) instead of the run's."""
    g = hb.graph
    hl = set(highlight)
    if order is not None:
        events = [(k, n) for k, n in enumerate(dict.fromkeys(order)) if n in g]
    else:
        events = sorted((d["seq"], n) for n, d in g.nodes(data=True)
                        if d.get("kind") in ("sync", "memory", "completion") and "seq" in d)
    truncated = len(events) > max_events
    events = events[:max_events]
    warps = sorted({g.nodes[n].get("warp", -1) for _, n in events if g.nodes[n].get("kind") != "completion"}
                   | {d["warp"] for _, d in g.nodes(data=True) if d.get("kind") == "blocked"})
    row = {w: k for k, w in enumerate(warps)}
    async_row = len(warps)
    x = 0
    pos: dict[object, tuple[float, int | None]] = {}    # node -> (column, row; None: a generation's column)
    r: int | None
    for _, n in events:
        x += 1
        d = g.nodes[n]
        r = async_row if d.get("kind") == "completion" else row.get(d.get("warp", -1), async_row)
        pos[n] = (x, r)
    for n, d in g.nodes(data=True):
        if d.get("kind") == "blocked" and order is None:
            x += 1
            pos[n] = (x, row[d["warp"]])
    # a witness schedule may group arrivals into other generations than the run did: no run columns or edges
    gens = [n for n, d in g.nodes(data=True) if d.get("kind") == "generation"] if order is None else []
    for n in gens:
        # the column sits where the generation completed: after its last arrival, else before its first waiter
        ins = [pos[u][0] for u in g.predecessors(n) if u in pos and g.edges[u, n]["kind"] in _ARRIVALS]
        outs = [pos[v][0] for v in g.successors(n) if v in pos and g.nodes[v].get("kind") != "generation"]
        other = [pos[u][0] for u in g.predecessors(n) if u in pos]
        col = max(ins) + 0.5 if ins else (min(outs) - 0.5 if outs else (max(other) + 0.5 if other else None))
        if col is not None:
            pos[n] = (col, None)
    title = ("witness schedule of " if order is not None else "happens-before timeline of ") + \
        str(g.graph.get("kernel", ""))
    width = _LEFT + (x + 2) * _DX
    height = _TOP + (len(warps) + 2) * _DY + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="10">',
           f'<title>{escape(title)}</title>',
           '<defs><marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#555"/></marker></defs>']
    bottom = _TOP + (len(warps) + 1) * _DY
    for k, label in [(row[w], f"warp {w}") for w in warps] + [(async_row, "async")]:
        y = _TOP + k * _DY
        out.append(f'<line x1="{_LEFT}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="6" y="{y + 4}">{escape(label)}</text>')
    for n in gens:
        if n not in pos:
            continue
        gx = _LEFT + pos[n][0] * _DX
        d = g.nodes[n]
        color = "red" if n in hl else "#7a9"
        out.append(f'<line x1="{gx}" y1="{_TOP - 16}" x2="{gx}" y2="{bottom}" stroke="{color}" '
                   f'stroke-dasharray="4,3"><title>{escape(d.get("label", n))}</title></line>')
        out.append(f'<text x="{gx + 2}" y="{bottom + 14}" transform="rotate(30 {gx + 2},{bottom + 14})">'
                   f'{escape(d.get("label", n))}</text>')

    def xy(n, toward=None):
        px, r = pos[n]
        if r is None:   # a generation column: meet it at the other end's height
            r = pos[toward][1] if toward in pos and pos[toward][1] is not None else 0
        return _LEFT + px * _DX, _TOP + r * _DY

    for u, v, d in g.edges(data=True) if order is None else ():
        if u not in pos or v not in pos or d["kind"] == "program_order" or d["kind"] == "next_generation":
            continue
        (x1, y1), (x2, y2) = xy(u, v), xy(v, u)
        color = "red" if (u in hl and v in hl) else "#555"
        dash = "" if d.get("orders", True) else ' stroke-dasharray="2,2"'
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}"{dash} '
                   f'marker-end="url(#arrow)"><title>{escape(d["kind"])}</title></line>')
    for n, (px, r) in pos.items():
        if r is None:
            continue
        d = g.nodes[n]
        cx, cy = _LEFT + px * _DX, _TOP + r * _DY
        fill = {"blocked": "#f44", "completion": "#a6c", "memory": "#fa3"}.get(d.get("kind"), "#48c")
        stroke = ' stroke="red" stroke-width="2"' if n in hl else ""
        tip = d.get("label", n) + (f" @ {d['span']}" if d.get("span") else "")
        out.append(f'<circle cx="{cx}" cy="{cy}" r="5" fill="{fill}"{stroke}><title>{escape(tip)}</title></circle>')
        out.append(f'<text x="{cx - 4}" y="{cy - 8}" font-size="8">{escape(str(d.get("op", ""))[:14])}</text>')
    if order is not None:
        out.append(f'<text x="6" y="{height - 8}">operations in the order of the witness schedule (the run\'s '
                   f'labels; the schedule may group arrivals into other generations)</text>')
    if truncated:
        out.append(f'<text x="6" y="{height - 8}">only the first {max_events} events are drawn</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render(hb, fmt: str, highlight=(), order=None) -> str:
    """`hb` as text in one of FORMATS (the extension, with its dot)."""
    if fmt in (".dot", ".gv"):
        return to_dot(hb, highlight)
    if fmt == ".graphml":
        return "\n".join(nx.generate_graphml(scalar_graph(hb.graph)))
    if fmt == ".json":
        return to_json(hb)
    if fmt == ".svg":
        return to_svg(hb, highlight, order=order)
    raise UsageError(f"unknown graph format {fmt or '(no extension)'!r}; use one of {', '.join(FORMATS)}")


def write(hb, path, highlight=(), order=None, protect=()) -> str:
    """Write `hb` to `path` in the format its extension names (never over a `protect`ed file, never
    through a symlink); returns the format written.  `order` (SVG only): draw these nodes in this order,
    e.g. the run's operations in a finding's witness schedule."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in FORMATS:
        raise UsageError(f"{path}: unknown graph format {ext or '(no extension)'!r}; use one of {', '.join(FORMATS)}")
    write_output(path, render(hb, ext, highlight, order), protect)
    return {".gv": "dot"}.get(ext, ext[1:])
