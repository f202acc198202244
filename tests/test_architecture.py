"""Imports point one way: ir -> numsim -> checkers -> report/CLI (STYLE.md items 1-2).

The rules are data; `violations()` is checked against the real tree and against a
synthetic graph that breaks each rule, so this test can fail.
"""
from __future__ import annotations

import ast
import functools
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
    ("modelcheck.prover", "modelcheck.synccheck"),  # ... and by Synccheck (its package) on the specialized kernel
}
TOP = ("modelcheck.cli", "modelcheck.__main__", "modelcheck.report",
       "modelcheck.portfolio")   # nothing below imports these
THIRD_PARTY_OWNERS = {"z3": ("modelcheck.prover",), "networkx": ("modelcheck.hb",),
                      "dask": ("modelcheck.portfolio.executors",), "distributed": ("modelcheck.portfolio.executors",)}
FACADE = "modelcheck"   # modelcheck/__init__.py re-exports the public API from every stage
# shared leaves below NumSim: modules of modelcheck.common that import nothing of modelcheck, so NumSim may use them
LEAVES = ("modelcheck.common.verdict", "modelcheck.common.ranges")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """Each source file parsed once per session: the rules below walk the whole tree several times."""
    return ast.parse(path.read_text(), str(path))


def imports_of(path: Path) -> set[str]:
    tree = _tree(path)
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = _from_package(node, package)
            out.add(mod)
            # `from . import x` imports a submodule
            out.update(f"{mod}.{alias.name}" for alias in node.names)
    return out


def _from_package(node: ast.ImportFrom, package: str) -> str:
    """The module an `from X import ...` statement imports from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def names_from(path: Path, source: str, name: str | None = None) -> set[str]:
    """The names `path` (module `name`, by default from its place in the tree) imports with
    `from <source> import name` (relative forms included)."""
    tree = _tree(path)
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and _from_package(node, package) == source for alias in node.names}


def shadowed(facade: Path, modules) -> set[str]:
    """Names the facade binds at its top level (def, class, assignment) that are also its submodules' names: an
    import of such a name from the facade gets the function, not the package."""
    bound = set()
    for node in ast.parse(facade.read_text(), str(facade)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in bound if f"{FACADE}.{n}" in modules}


def shadowing_violations(shadows: set[str], imported: dict[str, set[str]]) -> list[str]:
    """`imported`: module -> the names it imports from the facade."""
    return sorted(f"{mod} -> {FACADE}.{n}: gets the facade's {n}, which shadows the package {FACADE}.{n}; import "
                  f"from the package ({FACADE}.{n})" for mod, names in imported.items() if mod != FACADE
                  for n in names & shadows)


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
            if _under(mod, "modelcheck.numsim") and _under(dep, "modelcheck") and not _under(dep, "modelcheck.numsim") \
                    and not any(_under(dep, leaf) for leaf in LEAVES) and dep != "modelcheck.common":
                out.append(f"{mod} -> {dep}: numsim emits events and knows nothing of the checkers")
            if any(_under(mod, leaf) for leaf in LEAVES) and _under(dep, "modelcheck"):
                out.append(f"{mod} -> {dep}: a shared leaf imports nothing of modelcheck")
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


def test_every_allowed_cross_edge_is_used():
    """An allowance nothing needs any more is removed, not kept."""
    g = graph()
    used = {(_stage(mod), _stage(dep)) for mod, deps in g.items() for dep in deps}
    assert sorted(ALLOWED_CROSS - used) == []


def test_leaves_import_nothing_of_modelcheck():
    assert violations({"modelcheck.common.verdict": {"enum"}, "modelcheck.numsim.engine": {"modelcheck.common.verdict"}}) == []
    assert violations({"modelcheck.common.verdict": {"modelcheck.numsim"}}) == [
        "modelcheck.common.verdict -> modelcheck.numsim: a shared leaf imports nothing of modelcheck"]
    assert len(violations({"modelcheck.numsim.engine": {"modelcheck.common.findings"}})) == 1


def test_nothing_imports_a_facade_name_that_shadows_a_package():
    """modelcheck/__init__.py defines functions named like its packages (synccheck, racecheck, replay); a module
    that imports such a name from the facade goes through the top layer, whatever its import line suggests."""
    g = graph()
    shadows = shadowed(ROOT / "modelcheck" / "__init__.py", g)
    assert {"synccheck", "racecheck", "replay"} <= shadows
    imported = {module_name(p): names_from(p, FACADE) for p in (ROOT / "modelcheck").rglob("*.py")}
    assert shadowing_violations(shadows, imported) == []
    # the rule fails on such an import (the prover once confirmed refutations this way)
    assert shadowing_violations(shadows, {"modelcheck.prover.confirm": {"synccheck", "kernel"}}) == [
        "modelcheck.prover.confirm -> modelcheck.synccheck: gets the facade's synccheck, which shadows the package "
        "modelcheck.synccheck; import from the package (modelcheck.synccheck)"]


def test_a_relative_import_from_the_facade_is_seen(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("from .. import synccheck\nfrom ..synccheck import check\nfrom modelcheck import replay\n")
    assert names_from(src, FACADE, "modelcheck.prover.x") == {"synccheck", "replay"}


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
