"""The op census: which `T.*` ops a printed function calls, and what modelcheck knows of each.

Every `T.ptx.*`, `T.cuda.*` and other `T.*` call in the text (Python's `ast` reads the printed
form); PTX calls are named by their canonical mnemonic (family plus the positional modifiers, as
`ir.build_expr` composes it), each looked up in `ir.ops.classify`, or found among the `T.*` names
the builder handles itself.  Best effort: text that is not Python has no ops.
"""
from __future__ import annotations

import ast
from pathlib import Path

PTX_MNEMONIC = {"cvt_pack": "cvt.pack", "multimem_cp": "multimem.cp", "multimem_ld_reduce": "multimem.ld_reduce",
                "multimem_red": "multimem.red", "multimem_red_async": "multimem.red.async",
                "multimem_st": "multimem.st", "multimem_st_async": "multimem.st.async", "red_async": "red.async",
                "redux_sync": "redux.sync", "st_async": "st.async", "st_bulk": "st.bulk",
                "tensormap_cp_fenceproxy": "tensormap.cp_fenceproxy", "tensormap_replace": "tensormap.replace"}


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def call_op(call: ast.Call) -> tuple[str, int] | None:
    """(op name, operand count) of a `T.*` call: PTX calls by their canonical mnemonic (the family and
    its positional modifiers, the last string being the marker, as `ir.build_expr.ptx_call` composes
    it), `T.cuda.x` as `cuda.x`, other `T.x` as `T.x`; None for anything else."""
    func = call.func
    if isinstance(func, ast.Subscript):   # T.ptx["mnemonic"](...)
        path = _dotted(func.value)
        if path == ["T", "ptx"] and isinstance(func.slice, ast.Constant) and isinstance(func.slice.value, str):
            return func.slice.value, len(call.args)
        return None
    path = _dotted(func)
    if not path or path[0] != "T" or len(path) < 2:
        return None
    if path[1] == "ptx" and len(path) > 2:
        args = list(call.args)
        segs = path[2:]
        if len(segs) == 1 and args and isinstance(args[-1], ast.Constant) and isinstance(args[-1].value, str):
            mods = []
            while args and isinstance(args[-1], ast.Constant) and isinstance(args[-1].value, str):
                mods.append(args.pop().value)
            mods.reverse()
            marker = mods[-1]
            segs = [segs[0]] + [m for m in mods[:-1] if m]
            if "pred" in [m.strip() for m in marker.split(",")] and args:
                args.pop()
        name = ".".join(s[:-1] if s.endswith("_") and s[:-1] in ("async", "and", "or", "not") else s for s in segs)
        return name, len(args)
    if path[1] == "cuda":
        return "cuda." + ".".join(path[2:]), len(call.args)
    return "T." + ".".join(path[1:]), len(call.args)


def line_ops(line: str) -> list[tuple[str, int]]:
    """The ops called on one printed line (best effort: a line that is not a whole statement gives [])."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        try:
            tree = ast.parse(line.strip() + "\n    pass")
        except SyntaxError:
            return []
    return [op for n in ast.walk(tree) if isinstance(n, ast.Call) for op in [call_op(n)] if op]


def category(name: str) -> str:
    """`ptx`, `cuda`, `builtin` (a `T.x` the front end spells) or `tvm/call` (`T.tvm_*`, `T.call_*`)."""
    if name.startswith("T."):
        short = name[2:]
        return "tvm/call" if short.startswith(("tvm_", "call_")) else "builtin"
    return "cuda" if name.startswith("cuda.") else "ptx"


def display_name(name: str) -> str:
    """How the census shows an op: `T.ptx.<mnemonic>` (PTX spelling of the family), `T.cuda.x`, `T.x`."""
    if name.startswith("T."):
        return name
    if name.startswith("cuda."):
        return "T." + name
    head, _, rest = name.partition(".")
    head = PTX_MNEMONIC.get(head, head.replace("_sync", ".sync") if head.endswith("_sync") else head)
    return "T.ptx." + head + ("." + rest if rest else "")


_FRONT_END_NAMES: set[str] | None = None


def front_end_names() -> set[str]:
    """String literals of the builder (ir/build*.py and the modules it hands statements to, ir/typing.py): the T.*
    names it dispatches on."""
    global _FRONT_END_NAMES
    if _FRONT_END_NAMES is None:
        import ir
        names: set[str] = set()
        base = Path(ir.__file__).parent
        paths = sorted(base.glob("build*.py")) + [base / p for p in ("allocations.py", "launch.py", "host.py",
                                                                      "module.py", "signature.py", "typing.py",
                                                                      "scope.py", "dtypes.py")]
        for path in paths:
            try:
                tree = ast.parse(path.read_text())
            except (OSError, SyntaxError):
                continue
            names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        _FRONT_END_NAMES = names
    return _FRONT_END_NAMES


def op_status(name: str, n_operands: int) -> str:
    """What modelcheck knows of an op today: `registry` (ir.ops.classify models it), `registry
    (unsupported: why)`, `registry (operand count differs: ...)`, `front end` (a T.* name the
    builder handles itself, not an op), or `unknown`."""
    from ir import ops
    if name.startswith("T."):
        short = name[2:]
        candidates = [f"tir.{short}"]
    else:
        candidates = [name]
    for cand in candidates:
        try:
            info = ops.classify(cand, ("int32",) * n_operands)
        except ops.OperandCountError as err:
            return f"registry (operand count differs: {err})"
        if info is not None:
            return "registry" if info.supported else f"registry (unsupported: {info.why_unsupported})"
    if name.startswith("T.") and name[2:].split(".")[0] in front_end_names():
        return "front end"
    return "unknown"


def ops_of(text: str) -> dict[str, dict]:
    """{op: {"calls": n, "operands": [counts seen]}} for every T.* call in a printed function."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    out: dict[str, dict] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            op = call_op(node)
            if op is None:
                continue
            name, n = op
            entry = out.setdefault(name, {"calls": 0, "operands": set()})
            entry["calls"] += 1
            entry["operands"].add(n)
    return {k: {"calls": v["calls"], "operands": sorted(v["operands"])} for k, v in out.items()}
