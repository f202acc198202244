"""`modelcheck graph KERNEL.py --out FILE [--finding N]`."""
from __future__ import annotations

import json

import networkx as nx
import pytest

from modelcheck.cli import EXIT_USAGE, main
from tests.manifest import KERNELS

RING = str(KERNELS / "producer_overtaking_fixed.py")
HANG = str(KERNELS / "hang_wrong_parity.py")


@pytest.mark.parametrize("ext", ["dot", "graphml", "json", "svg"])
def test_formats_by_extension(tmp_path, capsys, ext):
    out = tmp_path / f"hb.{ext}"
    assert main(["graph", RING, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"wrote {ext.upper()} to {out}" in text and "32 nodes, 54 edges" in text
    assert out.stat().st_size > 0
    if ext == "graphml":
        assert nx.read_graphml(out).number_of_nodes() == 32
    if ext == "json":
        assert len(json.loads(out.read_text())["nodes"]) == 32


def test_const_changes_the_graph(tmp_path, capsys):
    assert main(["graph", RING, "--const", "ROUNDS=2", "--out", str(tmp_path / "hb.json")]) == 0
    # two rounds: 3 + 4 + 8 sync operations, 2 + 2 + 1 generations
    assert "20 nodes" in capsys.readouterr().out


def test_finding_is_explained_and_highlighted(tmp_path, capsys):
    out = tmp_path / "hb.dot"
    assert main(["graph", HANG, "--out", str(out), "--finding", "1", "--checker", "sync"]) == 0
    text = capsys.readouterr().out
    assert "wait-for cycle" in text and "warp 0 awaits empty[0] generation 1" in text
    dot = out.read_text()
    assert '"blocked:w0" [' in dot and 'color="red"' in dot


def test_finding_as_json(tmp_path, capsys):
    assert main(["graph", HANG, "--out", str(tmp_path / "hb.json"), "--finding", "1", "--checker", "sync",
                 "--json"]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out[out.index("{"):])
    assert payload["kind"] == "deadlock" and sorted(payload["data"]["cycle"]) == [0, 1]


@pytest.mark.parametrize("args,message", [
    (["--out", "hb.png"], "the extension chooses the format"),
    (["--out", "hb.dot", "--finding", "7"], "is not between 1 and"),
    (["--out", "hb.dot", "--const", "NOPE=1"], "not a module constant"),
])
def test_usage_errors(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", HANG, *args]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_svg_of_a_phase_b_deadlock_draws_the_witness(tmp_path, capsys, monkeypatch):
    """The hand-laid timeline (what `graph` writes without Graphviz)."""
    from modelcheck.report import layout
    monkeypatch.setattr(layout, "dot_available", lambda: False)
    out = tmp_path / "hb.svg"
    kernel = str(KERNELS / "named_barrier_rendezvous.py")
    assert main(["graph", kernel, "--out", str(out), "--finding", "1", "--checker", "sync"]) == 0
    assert "witness schedule (6 operations of the run)" in capsys.readouterr().out
    svg = out.read_text()
    assert svg.count("<circle") == 6 and svg.count('stroke="red"') == 1
    assert "<title>witness schedule of named_barrier_rendezvous</title>" in svg


def test_svg_with_graphviz_draws_the_witness(tmp_path, capsys):
    from modelcheck.report import layout
    if not layout.dot_available():
        pytest.skip("Graphviz dot is not installed")
    out = tmp_path / "hb.svg"
    kernel = str(KERNELS / "named_barrier_rendezvous.py")
    assert main(["graph", kernel, "--out", str(out), "--finding", "1", "--checker", "sync"]) == 0
    svg = out.read_text()
    assert svg.count('class="node"') == 6 and "witness schedule of named_barrier_rendezvous" in svg


def test_missing_tensor_map_is_a_usage_error(tmp_path, capsys):
    assert main(["graph", str(KERNELS / "tma_copy_128b.py"), "--out", str(tmp_path / "hb.dot")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no value for tmap" in err and "--inputs BUILDER.py:FUNCTION" in err and not (tmp_path / "hb.dot").exists()
