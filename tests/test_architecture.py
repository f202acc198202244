"""Imports point one way: ir -> numsim -> checkers -> report/CLI (STYLE.md items 1-2).

The rules are data; `violations()` is checked against the real tree and against a
synthetic graph that breaks each rule, so this test can fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ir", "modelcheck", "grammars")

# Checker stages: each may import ir, numsim and modelcheck.common, never another checker,
# except for the edges listed in ALLOWED_CROSS.
CHECKERS = ("modelcheck.synccheck", "modelcheck.racecheck", "modelcheck.explorer", "modelcheck.prover",
            "modelcheck.hb", "modelcheck.replay")
ALLOWED_CROSS = {
    ("modelcheck.synccheck", "modelcheck.explorer"),  # phase B searches the fixed sync programs
    ("modelcheck.prover", "modelcheck.replay"),     # a refutation is confirmed by replay on NumSim
    ("modelcheck.prover", "modelcheck.synccheck"),  # ... and by Synccheck on the specialized kernel
    ("modelcheck.replay", "modelcheck.explorer"),   # replay follows explorer witness schedules
    ("modelcheck.hb", "modelcheck.explorer"),
}
TOP = ("modelcheck.cli", "modelcheck.__main__", "modelcheck.report")   # nothing below imports these
THIRD_PARTY_OWNERS = {"z3": ("modelcheck.prover",), "networkx": ("modelcheck.hb",)}
FACADE = "modelcheck"   # modelcheck/__init__.py re-exports the public API from every stage


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            # `from . import x` imports a submodule
            out.update(f"{mod}.{alias.name}" for alias in node.names)
    return out


def graph() -> dict[str, set[str]]:
    g = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            g[module_name(path)] = imports_of(path)
    return g


def _under(mod: str, prefix: str) -> bool:
    return mod == prefix or mod.startswith(prefix + ".")


def _stage(mod: str) -> str | None:
    return next((c for c in CHECKERS if _under(mod, c)), None)


def violations(g: dict[str, set[str]]) -> list[str]:
    out = []
    for mod, deps in g.items():
        for dep in deps:
            if _under(mod, "ir") and _under(dep, "modelcheck"):
                out.append(f"{mod} -> {dep}: ir must not import modelcheck")
            if _under(mod, "modelcheck.numsim") and _under(dep, "modelcheck") and not _under(dep, "modelcheck.numsim"):
                out.append(f"{mod} -> {dep}: numsim emits events and knows nothing of the checkers")
            src, dst = _stage(mod), _stage(dep)
            if src and dst and src != dst and (src, dst) not in ALLOWED_CROSS:
                out.append(f"{mod} -> {dep}: checkers do not import each other (share through modelcheck.common)")
            if mod != FACADE and not any(_under(mod, t) for t in TOP) and any(_under(dep, t) for t in TOP):
                out.append(f"{mod} -> {dep}: only the top layer imports report/CLI")
            for lib, owners in THIRD_PARTY_OWNERS.items():
                if _under(dep, lib) and not any(_under(mod, o) for o in owners):
                    out.append(f"{mod} -> {dep}: only {', '.join(owners)} may import {lib}")
    return sorted(out)


def test_real_tree_has_no_backward_imports():
    g = graph()
    assert "ir.build" in g and "modelcheck.cli" in g
    assert violations(g) == []


def test_rules_catch_each_kind_of_backward_edge():
    bad = {
        "ir.build": {"modelcheck.kernel"},
        "modelcheck.numsim.engine": {"modelcheck.synccheck.phase_a"},
        "modelcheck.synccheck.report": {"modelcheck.racecheck.shadow"},
        "modelcheck.racecheck.shadow": {"modelcheck.cli"},
        "modelcheck.numsim.memory": {"z3"},
        "modelcheck.synccheck.explore": {"networkx"},
    }
    found = violations(bad)
    assert len(found) == 6, found
    assert violations({"modelcheck.prover.ring": {"z3", "modelcheck.replay"}, "modelcheck.cli": {"modelcheck.synccheck"},
                       "modelcheck": {"modelcheck.cli"}}) == []


def test_relative_imports_resolve(tmp_path):
    assert "ir.nodes" in imports_of(ROOT / "ir" / "printer.py")
    assert "ir.errors" in imports_of(ROOT / "ir" / "syntax.py")
