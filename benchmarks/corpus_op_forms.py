"""Every distinct (PTX/CUDA op, operand count) form in the printed production corpus, and how
`ir.ops.classify` takes it: modeled, known but unsupported (with the reason), an operand-count error, or
unknown (issue 17 Part A: every form TVM 0.27 prints must classify, none may be a count error).

Usage: python benchmarks/corpus_op_forms.py [CACHE ...]   (default: the corpus cache of
benchmarks/production_corpus.py).  Writes benchmarks/results/corpus_op_forms.json.
"""
from __future__ import annotations

import ast
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402
from benchmarks.corpus.census_ops import call_op  # noqa: E402
from benchmarks.production_corpus import DEFAULT_CACHE  # noqa: E402


def main(argv: list[str]) -> None:
    from ir import ops
    sys.setrecursionlimit(20000)
    caches = [Path(a) for a in argv] or [DEFAULT_CACHE]
    forms: dict = collections.defaultdict(set)
    modules = set()
    for cache in caches:
        for path in sorted(cache.glob("*/*.py")):
            if path.name.endswith(".host.py"):
                continue
            try:
                tree = ast.parse(path.read_text())
            except SyntaxError:
                continue
            modules.add(path.parent.name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    op = call_op(node)
                    if op is not None and not op[0].startswith("T."):
                        forms[op].add(path.parent.name)
    rows = []
    for (name, n), mods in sorted(forms.items()):
        try:
            info = ops.classify(name, ("int32",) * n)
            status = "unknown" if info is None else ("modeled" if info.supported else "unsupported")
            why = "" if info is None else info.why_unsupported
        except ops.OperandCountError as err:
            status, why = "count_error", str(err)
        rows.append({"op": name, "operands": n, "modules": len(mods), "status": status, "why": why})
    counts = collections.Counter(r["status"] for r in rows)
    print(f"{len(modules)} modules, {len(rows)} distinct forms: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for r in rows:
        if r["status"] in ("count_error", "unknown"):
            print(f"  {r['status']}: {r['op']} /{r['operands']} {r['why']}")
    print("wrote", record("corpus_op_forms", {"modules": len(modules), "forms": len(rows), "by_status": dict(counts),
                                             "rows": rows}))


if __name__ == "__main__":
    main(sys.argv[1:])
