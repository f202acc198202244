"""Exports: DOT escaping, GraphML and JSON round trips, the SVG timeline."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

import modelcheck
from modelcheck import hb
from modelcheck.hb.export import dot_quote, scalar_graph
from tests.manifest import KERNELS


@pytest.fixture(scope="module")
def ring():
    return hb.build(modelcheck.load(KERNELS / "bulk_two_generations.py"))


def _same(a: nx.DiGraph, b: nx.DiGraph):
    assert set(a.nodes) == set(b.nodes) and set(a.edges) == set(b.edges)
    for n in a.nodes:
        assert a.nodes[n] == b.nodes[n], n
    for u, v in a.edges:
        assert a.edges[u, v] == b.edges[u, v], (u, v)


def test_dot_quote_escapes():
    assert dot_quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


def _dot_strings_balanced(text: str) -> bool:
    """Every line's double quotes, after removing escaped characters, pair up."""
    return all(re.sub(r"\\.", "", line).count('"') % 2 == 0 for line in text.splitlines())


def test_dot_has_every_node_and_edge_with_hostile_labels(ring):
    g = ring.graph
    node = next(iter(g.nodes))
    old = g.nodes[node]["label"]
    g.nodes[node]["label"] = 'say "hi" \\ then\nnewline'
    try:
        text = hb.to_dot(ring)
    finally:
        g.nodes[node]["label"] = old
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    assert _dot_strings_balanced(text)
    assert 'say \\"hi\\" \\\\ then\\nnewline' in text
    assert sum(1 for line in text.splitlines() if " -> " in line) == g.number_of_edges()
    for n in g.nodes:
        assert f'{dot_quote(n)} [' in text


def test_graphml_round_trip(ring, tmp_path):
    path = tmp_path / "hb.graphml"
    assert hb.write(ring, path) == "graphml"
    back = nx.read_graphml(path)
    _same(scalar_graph(ring.graph), back)
    # lane masks are written as lane lists
    arrive = next(d for _, d in back.nodes(data=True) if d.get("op") == "mbarrier.arrive")
    assert arrive["lanes"] == "0" and arrive["mask"] == "0"


def test_json_round_trip(ring, tmp_path):
    path = tmp_path / "hb.json"
    assert hb.write(ring, path) == "json"
    data = json.loads(path.read_text())
    back = nx.node_link_graph(data, edges="links")
    _same(scalar_graph(ring.graph), back)
    assert back.graph["kernel"] == "bulk_two_generations"


def test_svg_timeline(ring, tmp_path):
    path = tmp_path / "hb.svg"
    assert hb.write(ring, path, highlight=[n for n, d in ring.graph.nodes(data=True) if d["kind"] == "async_op"]) \
        == "svg"
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "warp 0" in texts and "async" in texts
    gens = [n for n, d in ring.graph.nodes(data=True) if d["kind"] == "generation"]
    columns = [t for t in root.iter(f"{ns}line") if t.get("stroke-dasharray") == "4,3"]
    assert len(columns) == len(gens) == 2
    # the generation columns are ordered like the generations
    xs = {c.find(f"{ns}title").text: float(c.get("x1")) for c in columns}
    assert xs["full[0] gen 0"] < xs["full[0] gen 1"]


def test_unknown_extension(ring, tmp_path):
    with pytest.raises(ValueError, match="unknown graph format"):
        hb.write(ring, tmp_path / "hb.png")
