"""Findings at the user's own lines for real tvm / tvm_tirx objects.

`ir.as_func(obj)` parses the text a real object prints (`obj.script()`); on its own, every span
would point into that printed text, which the user never wrote.  The objects know better: each
statement carries the user's source location (apache-tvm-tirx: `stmt.loc`, a `SourceLoc`;
apache-tvm 0.27, tirx-lite traced kernels included: `stmt.span`, an `ir.Span`).  `from_object`
uses them in the first of two ways that applies:

1. The user's file itself.  When every located statement comes from one file that modelcheck
   parses, and that file's kernel is the same IR as the printed one (`canonical`, host prelude
   included), the file's own parse is returned: exact spans, and module constants and
   `T.constexpr` parameters stay named (so `prove` can make them symbolic).  A constant whose
   printed value differs from the file's (a `@T.jit` specialization, a global changed before the
   decorator ran) is read off the printed IR where the file uses it bare, and the file is parsed
   again with those values; the result must again be the same IR, or this way does not apply.
2. The printer's own annotations.  The object is printed once more with every located statement
   annotated (`script(obj_to_annotate=...)`): the printer puts a marker comment on the printed line
   of a simple statement and on its own line just above a compound one.  Every IR node whose span
   starts on a marked line takes that statement's user span (its columns are the user's statement,
   not the printed expression's).  Nodes on unmarked lines keep the printed text's span.

Why markers and not a walk of the object beside our IR: the printer decides where a statement
lands (it splits `with` frames, prints helper statements, renames), and our builder normalizes
further; a marker the printer itself places needs no assumption that the two correspond in order
or one to one.  `PrimFunc.origin` says which way applied and, for the second, how many statements
kept printed lines; the reports print it.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path

from .canonical import canonical
from .errors import Span, TIRxError, UsageError
from .nodes import Const, ConstRef, Node, PrimFunc, Stmt, walk

MARK = "modelcheck-span:"
_MARK_RE = re.compile(r"#.*?" + re.escape(MARK) + r"(\d+)")
_STMT_KEYS = ("ir.Stmt", "tirx.Stmt")   # the statement base type of tvm_tirx and of apache-tvm 0.27
MAX_STMTS = 1_000_000                   # a cycle in a foreign object must not hang the walk


_RECENT: list[tuple[object, str, str | None, PrimFunc]] = []   # (object, name, kernel_name, result), newest last
RECENT_SIZE = 4


def from_object(obj, name: str, kernel_name: str | None, parse) -> PrimFunc:
    """The kernel `obj` prints, with spans at the user's source where `obj` carries them.  `parse(text, path,
    kernel_name=...)` is `ir.parse` (passed in: this module sits below the package entry points).  The last few
    results are kept: `check(obj)` asks for the same object once per checker, and tvm objects are immutable."""
    for held, held_name, held_kernel, func in _RECENT:
        if held is obj and held_name == name and held_kernel == kernel_name:
            return func
    func = _from_object(obj, name, kernel_name, parse)
    _RECENT.append((obj, name, kernel_name, func))
    del _RECENT[:-RECENT_SIZE]
    return func


def _from_object(obj, name: str, kernel_name: str | None, parse) -> PrimFunc:
    inner = _module_function(obj, kernel_name)
    if inner is not None:       # an IRModule: its printed `class Module` is not kernel text, its function is
        return _from_object(inner, name if name != "IRModule" else _function_name(inner, name), None, parse)
    printed_path = f"<{name}.script()>"
    located = _located_statements(obj)
    if not located:
        func = parse(obj.script(), printed_path, kernel_name=kernel_name)
        return func if not _is_foreign(obj) else replace(func, origin=f"{printed_path} (the object carries no "
                                                                            "source locations)")
    annotations = {stmt: f"{MARK}{k}" for k, (stmt, _) in enumerate(located)}
    try:
        text = obj.script(obj_to_annotate=annotations)
    except TypeError:      # a printer without annotations: the printed lines are all there is
        return parse(obj.script(), printed_path, kernel_name=kernel_name)
    printed = parse(text, printed_path, kernel_name=kernel_name)
    files = {span.file for _, span in located}
    if len(files) == 1:
        own = _parse_user_file(next(iter(files)), printed, parse)
        if own is not None:
            return own
    own_def = _user_span(obj) if hasattr(obj, "body") else None     # tirx-lite records the def line
    return _remap(printed, text, [span for _, span in located], own_def)


# --------------------------------------------------------------------------- the object's statements

def _is_foreign(obj) -> bool:
    return hasattr(type(obj), "__tvm_ffi_type_info__")


def _module_function(obj, kernel_name: str | None):
    """The function of a foreign IRModule to check: the one named `kernel_name` (its global name or symbol), or
    the only one."""
    functions = getattr(obj, "functions", None)
    if not _is_foreign(obj) or functions is None or not callable(getattr(functions, "items", None)):
        return None
    found: dict[str, object] = {}
    for gvar, func in functions.items():
        if not hasattr(func, "body"):
            continue
        names = {str(getattr(gvar, "name_hint", gvar)), _function_name(func, "")}
        for n in names - {""}:
            found.setdefault(n, func)
    funcs = list({id(f): f for f in found.values()}.values())
    if kernel_name is not None:
        if kernel_name not in found:
            raise UsageError(f"no function {kernel_name} in the module (functions: {', '.join(sorted(found))})")
        return found[kernel_name]
    if len(funcs) != 1:
        raise UsageError(f"the module has {len(funcs)} functions ({', '.join(sorted(found)) or 'none'}): pass "
                         "kernel_name")
    return funcs[0]


def _function_name(func, default: str) -> str:
    attrs = getattr(func, "attrs", None)
    try:
        symbol = attrs["global_symbol"] if attrs is not None and "global_symbol" in attrs else None
    except (TypeError, KeyError):
        symbol = None
    return str(symbol) if symbol is not None else default


def _roots(obj) -> list:
    functions = getattr(obj, "functions", None)    # an IRModule: every function's body
    if functions is not None and callable(getattr(functions, "values", None)):
        return [getattr(f, "body", None) for f in functions.values()]
    return [getattr(obj, "body", None)]


def _is_stmt(obj) -> bool:
    info = getattr(type(obj), "__tvm_ffi_type_info__", None)
    while info is not None:
        if info.type_key in _STMT_KEYS:
            return True
        info = info.parent_type_info
    return False


def _field_names(obj) -> list[str]:
    names: list[str] = []
    info = getattr(type(obj), "__tvm_ffi_type_info__", None)
    while info is not None:
        names.extend(f.name for f in info.fields if f.name not in ("span", "loc"))
        info = info.parent_type_info
    return names


def _located_statements(obj) -> list[tuple[object, Span]]:
    """Every statement of `obj` (pre-order, by reflection over the object's fields: the statement kinds differ
    between the packages) with the user location it carries."""
    if not _is_foreign(obj):
        return []
    out: list[tuple[object, Span]] = []
    stack = [r for r in reversed(_roots(obj)) if r is not None]
    seen = 0
    while stack and seen < MAX_STMTS:
        x = stack.pop()
        if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
            stack.extend(reversed(list(x)))
            continue
        if not _is_stmt(x):
            continue
        seen += 1
        span = _user_span(x)
        if span is not None and not type(x).__name__ == "SeqStmt":
            out.append((x, span))
        stack.extend(reversed([v for v in (getattr(x, n, None) for n in _field_names(x))
                               if v is not None and not isinstance(v, (str, bytes, int, float))]))
    return out


def _user_span(stmt) -> Span | None:
    """Where `stmt` is in the user's source, None when unknown.  tvm_tirx's `If` has no location of its own (its
    `For` none filled in): an `if` or `while` is at its condition's."""
    span = _span_of(getattr(stmt, "loc", None)) or _span_of(getattr(stmt, "span", None))
    if span is None and type(stmt).__name__ in ("If", "IfThenElse", "While"):
        cond = getattr(stmt, "condition", None)
        span = _span_of(getattr(cond, "loc", None)) or _span_of(getattr(cond, "span", None))
    return span


def _span_of(loc) -> Span | None:
    """tvm_tirx's SourceLoc (start/end line and column) or 0.27's ir.Span (line, column, end_line, end_column):
    both 1-based with an exclusive end column.  None for an unknown location."""
    if loc is None:
        return None
    if hasattr(loc, "start_line"):
        parts = (loc.start_line, loc.start_column, loc.end_line, loc.end_column)
    elif hasattr(loc, "line"):
        parts = (loc.line, loc.column, loc.end_line, loc.end_column)
    else:
        return None
    file = getattr(getattr(loc, "source_name", None), "name", None)
    try:
        line, col, end_line, end_col = (int(p) for p in parts)
    except (TypeError, ValueError):
        return None
    if not file or line < 1:
        return None
    return Span(str(file), line, max(col, 1), max(end_line, line), max(end_col, 1))


# --------------------------------------------------------------------------- way 1: the user's file

def _parse_user_file(file: str, printed: PrimFunc, parse) -> PrimFunc | None:
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        own = parse(text, file, kernel_name=printed.name)
    except (TIRxError, UsageError, RecursionError):
        return None       # Python modelcheck does not read (a factory, host code...): way 2
    if _same(own, printed):
        return replace(own, origin=f"{file} (its kernel {printed.name} is the object's IR)")
    overrides = _differing_constants(own, printed)
    if not overrides:
        return None
    try:
        again = parse(text, file, kernel_name=printed.name, **overrides)
    except (TIRxError, UsageError, RecursionError):
        return None
    if not _same(again, printed):
        return None
    given = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    return replace(again, origin=f"{file} (its kernel {printed.name} at {given} is the object's IR)")


def _same(a: PrimFunc, b: PrimFunc) -> bool:
    """The same kernel, host prelude included (`canonical` alone compares the device part)."""
    return (a.name == b.name and [(d.name, d.dtype) for d in a.dims] == [(d.name, d.dtype) for d in b.dims]
            and canonical(replace(a, body=a.host + a.body, host=())) ==
            canonical(replace(b, body=b.host + b.body, host=())))


def _differing_constants(own: PrimFunc, printed: PrimFunc) -> dict[str, int]:
    """Values of the file's base constants (literal definitions) where the printed IR has a literal in the place
    the file uses the constant bare; only those that differ from the file's value, and only when every such place
    agrees."""
    seen: dict[str, set] = {}
    _zip_constants(own.params + own.host + own.body, printed.params + printed.host + printed.body, seen,
                   [0])
    base = {c.name: c.value for c in own.constants
            if not any(isinstance(n, ConstRef) for n in walk(c.expr))}
    out = {}
    for name, values in seen.items():
        if name in base and len(values) == 1:
            value = next(iter(values))
            if value != base[name] and isinstance(value, int) and not isinstance(value, bool):
                out[name] = value
    return out


def _zip_constants(a, b, seen: dict, budget: list[int]) -> None:
    """Walk two IRs of the same shape side by side: a ConstRef across a Const records the constant's value."""
    budget[0] += 1
    if budget[0] > MAX_STMTS:
        return
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) == len(b):
            for x, y in zip(a, b):
                _zip_constants(x, y, seen, budget)
        return
    if isinstance(a, ConstRef) and isinstance(b, Const):
        seen.setdefault(a.name, set()).add(b.value)
        return
    if not isinstance(a, Node) or type(a) is not type(b):
        return
    for f in fields(a):
        if f.name != "span":
            _zip_constants(getattr(a, f.name), getattr(b, f.name), seen, budget)


# --------------------------------------------------------------------------- way 2: the printer's markers

def _line_map(text: str, spans: list[Span]) -> dict[int, Span]:
    """Printed line -> user span: a marker after code marks its own line, a marker alone on a line marks the
    next line with code."""
    out: dict[int, Span] = {}
    pending: Span | None = None
    for n, line in enumerate(text.split("\n"), 1):
        m = _MARK_RE.search(line)
        code = line.split("#", 1)[0].strip() if m else line.strip()
        span = spans[int(m.group(1))] if m and int(m.group(1)) < len(spans) else None
        if code:
            if span is not None:
                out[n] = span
            elif pending is not None:
                out[n] = pending
            pending = None
        elif span is not None:
            pending = span
    return out


def _remap(printed: PrimFunc, text: str, spans: list[Span], func_span: Span | None) -> PrimFunc:
    lines = _line_map(text, spans)
    path = printed.path or ""
    func_span = func_span or _def_span(printed, spans)
    if func_span is not None and printed.span is not None:
        lines.setdefault(printed.span.line, func_span)
    memo: dict[int, Node] = {}

    def move(node):
        if isinstance(node, tuple):
            new_items = tuple(move(x) for x in node)
            return node if all(x is y for x, y in zip(new_items, node)) else new_items
        if not isinstance(node, Node):
            return node
        done = memo.get(id(node))
        if done is not None:
            return done
        changes = {}
        for f in fields(node):
            if f.name in ("span", "source", "path"):
                continue
            old = getattr(node, f.name)
            new = move(old)
            if new is not old:
                changes[f.name] = new
        span = node.span
        if span is not None and span.file == path and span.line in lines:
            changes["span"] = lines[span.line]
        out = replace(node, **changes) if changes else node
        memo[id(node)] = out
        return out

    body, host, params = move(printed.body), move(printed.host), move(printed.params)
    stmts = [n for n in walk(printed.host + printed.body) if isinstance(n, Stmt) and n.span is not None]
    kept = sum(1 for n in stmts if n.span is not None and not (n.span.file == path and n.span.line in lines))
    user_files = sorted({s.file for s in spans})
    where = user_files[0] if len(user_files) == 1 else ", ".join(user_files)
    note = f"{where} (the object's locations: {len(stmts) - kept} of {len(stmts)} statements"
    note += f"; {kept} at lines of {path}, the printed text)" if kept else ")"
    note += "; constants as printed (folded to numbers)" if not printed.constants else ""
    return replace(printed, body=body, host=host, params=params, origin=note,
                   span=func_span if func_span is not None else printed.span)


def _def_span(printed: PrimFunc, spans: list[Span]) -> Span | None:
    """The user's `def <name>(` line above the first located statement, read from the user's file (the objects
    do not carry the function's own location)."""
    file = spans[0].file
    first = min(s.line for s in spans if s.file == file)
    try:
        lines = Path(file).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(r"^(\s*)def\s+" + re.escape(printed.name) + r"\b")
    for n in range(min(first, len(lines)), 0, -1):
        m = pattern.match(lines[n - 1])
        if m:
            return Span(file, n, len(m.group(1)) + 1, n, len(lines[n - 1].rstrip()) + 1)
    return None
