"""The prover's modules import each other without a circle (a module's own packages excluded: importing a
submodule loads them first anyway)."""
from __future__ import annotations

from tests.test_architecture import graph


def cycles(g: dict[str, set[str]], prefix: str) -> list[list[str]]:
    """The strongly connected components of more than one module among the modules under `prefix`."""
    mods = {m for m in g if m == prefix or m.startswith(prefix + ".")}
    adj = {m: sorted(d for d in g[m] if d in mods and d != m and not m.startswith(d + ".")) for m in sorted(mods)}
    index: dict = {}
    low: dict = {}
    stack: list = []
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in adj:
        if v not in index:
            visit(v)
    return out


def test_the_prover_has_no_import_circle():
    g = graph()
    assert "modelcheck.prover.skeleton" in g and "modelcheck.prover.exprs" in g
    assert cycles(g, "modelcheck.prover") == []


def test_a_circle_is_found():
    g = {"p": set(), "p.a": {"p.b"}, "p.b": {"p.c", "p"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(g, "p") == [["p.a", "p.b", "p.c"]]
