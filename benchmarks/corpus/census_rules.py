"""The construct rules of the census: which construct a parse error names, and the stub that removes it.

A `Rule` matches the first error of a parse (`Failure`: the message and the offending line) and
stubs the whole text: every occurrence of the construct becomes a form `ir.parse` accepts, or
disappears.  `RULES` are tried in order (`classify`); an operand-count error of the op registry is
a rule of its own, per op.  `blank_statement` is the fallback for an error no rule matches (a
simple statement becomes `T.evaluate(0)`, a block header `if True:`).  Stubs only serve the count:
they keep the text parseable, not its meaning.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

from benchmarks.corpus.census_ops import line_ops

RULES_VERSION = "4"        # bump when a rule changes: it keys the per-text memo in the cache


@dataclass(frozen=True)
class Failure:
    """The first error of one parse: the message, where, and the offending source line."""

    kind: str          # ParseError, or the exception type of anything else the front end raised
    what: str
    expected: str
    line: int
    col: int
    text: str          # the offending line, stripped


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    match: Callable[[Failure], bool]
    stub: Callable[[str, Failure], str]


# ----------------------------------------------------------------------------- text helpers

def _sub(pattern: str, repl, flags: int = re.M) -> Callable[[str, Failure], str]:
    rx = re.compile(pattern, flags)
    return lambda text, _f: rx.sub(repl, text)


def _line_has(pattern: str, what: str | None = None) -> Callable[[Failure], bool]:
    rx = re.compile(pattern)
    return lambda f: bool(rx.search(f.text)) and (what is None or what in f.what)


def _statement(text: str, line: int):
    """The innermost statement of the Python AST that spans `line` (None if the text is not Python)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno - node.lineno) <= (best.end_lineno - best.lineno):
                best = node
    return best


def _bound_names(node) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    out = []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


def _defined_before(lines: list[str], names: list[str]) -> bool:
    head = "\n".join(lines)
    return any(re.search(rf"^\s*{re.escape(n)}\s*(:|=[^=])", head, re.M) for n in names)


def remove_kwarg(line: str, name: str) -> str:
    """`f(a, name=<expr>, b)` -> `f(a, b)`, the expression read with balanced brackets."""
    j = line.find(f"{name}=")
    if j < 0:
        return line
    k, depth = j + len(name) + 1, 0
    while k < len(line):
        c = line[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        k += 1
    start = j
    while start > 0 and line[start - 1] in " ,":
        start -= 1
    return line[:start] + line[k:] if line[k:k + 1] == ")" else line[:j] + line[k + 2:]


def blank_statement(text: str, line: int) -> str:
    """Blank the statement at `line`: a block header becomes `if True:`, a simple statement
    `T.evaluate(0)`, a module-level statement an empty line."""
    node = _statement(text, line)
    lines = text.split("\n")
    if node is None:
        lines[line - 1] = ""
        return "\n".join(lines)
    indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
    body = getattr(node, "body", None)
    names = _bound_names(node)
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        if node.lineno == line and isinstance(node, ast.FunctionDef):
            return text   # a bad signature is not blanked: its own rule must stub it
        lines[line - 1] = ""
    elif names and node.col_offset > 0 and not _defined_before(lines[:node.lineno - 1], names):
        # keep the names a blanked definition bound, so its uses do not all fail in turn
        lines[node.lineno - 1:node.end_lineno] = [f"{indent}{n}: T.let[T.int32] = 0" for n in names]
    elif body and body[0].lineno > line:
        if isinstance(node, ast.For):   # keep the loop variables bound
            header = f"{indent}for {ast.unparse(node.target)} in range(1):"
        else:
            header = indent + "if True:"
        lines[node.lineno - 1:body[0].lineno - 1] = [header]
    elif node.col_offset == 0:
        lines[node.lineno - 1:node.end_lineno] = [""]
    else:
        lines[node.lineno - 1:node.end_lineno] = [indent + "T.evaluate(0)"]
    return "\n".join(lines)


def _blank_matching(pattern: str) -> Callable[[str, Failure], str]:
    """Blank every statement whose first line matches `pattern`."""
    rx = re.compile(pattern)

    def stub(text: str, _f: Failure) -> str:
        for _ in range(10000):
            lines = text.split("\n")
            hit = next((i for i, ln in enumerate(lines) if rx.search(ln) and not ln.lstrip().startswith("#")), None)
            if hit is None:
                return text
            new = blank_statement(text, hit + 1)
            if new == text:
                return text
            text = new
        return text
    return stub


def unwrap_call(text: str, prefix: str) -> str:
    """Replace every `<prefix>ARG)` by `ARG` (balanced parentheses; `prefix` ends inside the call)."""
    out, i = [], 0
    while True:
        j = text.find(prefix, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k, depth = j + len(prefix), 1
        start = k
        while k < len(text) and depth:
            c = text[k]
            depth += c in "([{"
            depth -= c in ")]}"
            k += 1
        out.append(text[start:k - 1] if depth == 0 else text[j:k])
        i = k


# ----------------------------------------------------------------------------- the rules

def _tuple_scope_ids(text: str, _f) -> str:
    """`a, b, c = T.cta_id([x, y, z])` -> `a = T.cta_id([x * y * z])` and `b`, `c` as int32 lets."""
    rx = re.compile(r"^(\s*)(\w+(?:, \w+)+) = T\.(\w+)\(\[([^\]]*)\]\)\s*$", re.M)

    def one(m):
        indent, names, fn, exts = m.group(1), m.group(2).split(", "), m.group(3), m.group(4)
        prod = " * ".join(f"({e.strip()})" for e in exts.split(",") if e.strip()) or "1"
        rest = "".join(f"\n{indent}{n}: T.let[T.int32] = 0" for n in names[1:])
        return f"{indent}{names[0]} = T.{fn}([{prod}]){rest}"
    return rx.sub(one, text)


def _pointer_params(text: str) -> set[str]:
    m = re.search(r"^def \w+\(.*\):\s*$", text, re.M)
    return set(re.findall(r"(\w+): T\.(?:Ptr\(T\.void\)|TensorMap\(\))", m.group(0))) if m else set()


def _address_of_whole(text: str, _f) -> str:
    """`T.address_of(x)` -> `x` for a tensor-map (pointer) parameter, else `T.address_of(x[0])`."""
    ptrs = _pointer_params(text)
    return re.sub(r"T\.address_of\((\w+)\)", lambda m: m.group(1) if m.group(1) in ptrs else
                  f"T.address_of({m.group(1)}[0])", text)


def _unwrap_handle_ty(text: str, _f) -> str:
    text = re.sub(r"T\.reinterpret\(T\.handle\([^()]*\)\.ty, T\.address_of\((\w+)\)\)", r"\1", text)
    for prefix in sorted(set(re.findall(r"T\.reinterpret\(T\.handle\([^()]*\)\.ty, ", text))):
        text = unwrap_call(text, prefix)
    return text


def _tensormap_lets_to_params(text: str, _f) -> str:
    """Host-prelude tensor maps become what they are to the device code: tensor-map parameters."""
    rx = re.compile(r"^\s*(\w+): T\.let\[T\.TensorMap\(\)\] = T\.tvm_stack_alloca\(.*\)\s*$", re.M)
    names = rx.findall(text)
    text = rx.sub("", text)
    text = _blank_matching(r'T\.call_packed\("runtime\.cuTensorMapEncode')(text, _f)
    extra = "".join(f", {n}: T.Ptr(T.void)" for n in names)
    return re.sub(r"^(def \w+\(.*)\):\s*$", lambda m: m.group(1) + extra + "):", text, count=1, flags=re.M)


def _handle_params(text: str, _f) -> str:
    """Lowered kernels take `x_ptr: T.handle(dtype, "global")` and declare `x = T.decl_buffer(..., data=x_ptr)`:
    stub the pointer as a 1-D buffer parameter and the declaration as an alias of its .data."""
    m = re.search(r"^def \w+\(.*\):\s*$", text, re.M)
    if not m:
        return text
    ptrs = re.findall(r'(\w+): T\.handle\("(\w+)", "global"\)', m.group(0))
    sig = re.sub(r'(\w+): T\.handle\("(\w+)", "global"\)', r'\1: T.Buffer((64,), "\2")', m.group(0))
    sig = re.sub(r'(\w+): T\.handle\(\)', r'\1: T.Ptr(T.void)', sig)
    text = text[:m.start()] + sig + text[m.end():]
    for name, _dtype in ptrs:
        text = re.sub(rf"data={name}\b(?!\.)", f"data={name}.data", text)
    return text


def _to_alloc(line: str) -> str:
    """A buffer over a pointer becomes a shared allocation of the same shape (census stub)."""
    line = re.sub(r"T\.decl_scalar\(T\.(\w+), ", r'T.alloc_buffer((1,), "\1", ', line.replace("T.decl_buffer(",
                                                                                                "T.alloc_buffer("))
    line = remove_kwarg(remove_kwarg(line, "data"), "elem_offset")
    if "scope=" not in line:
        line = line.rstrip()[:-1] + ', scope="shared")'
    return line


def _string_extents(sig: str) -> str:
    """Replace the string literals inside each `T.Buffer((...)` shape tuple by 64."""
    out, i = [], 0
    while (j := sig.find("T.Buffer((", i)) >= 0:
        k = j + len("T.Buffer((")
        out.append(sig[i:k])
        depth, in_str, start = 1, False, k
        while k < len(sig) and depth:
            c = sig[k]
            if c == '"':
                in_str = not in_str
            elif not in_str:
                depth += c == "("
                depth -= c == ")"
            k += 1
        out.append(re.sub(r'"[^"]*"', "64", sig[start:k]))
        i = k
    out.append(sig[i:])
    return "".join(out)


_CVTA_ARITH = re.compile(r"cvta_generic_to_shared\(.*\)\) [-+] ")

RULES: list[Rule] = [
    Rule("typevar-extent", 'module-level `X = TypeVar("X")` buffer extents',
         _line_has(r'^\w+ = TypeVar\('),
         _sub(r'^(\w+) = TypeVar\("\w+"\)\s*$', r"\1 = 64")),
    Rule("attr-device-entry", '`T.attr({"tirx.device_entry": ...})` as a statement',
         _line_has(r'T\.attr\(\{"tirx\.device_entry"'),
         _sub(r'^(\s*)T\.attr\(\{"tirx\.device_entry".*\)\s*$', r"\1T.device_entry()")),
    Rule("string-extent", '`T.Buffer(("n", "a * (b + 1)"), ...)` string extents in a parameter buffer type',
         lambda f: "shape extent must be an integer, got string" in f.what,
         lambda text, _f: re.sub(r"^def .*$", lambda m: _string_extents(m.group(0)), text, count=1, flags=re.M)),
    Rule("tensormap-param", "`T.TensorMap()` parameters",
         lambda f: "T.TensorMap()" in f.text and f.text.startswith("def "),
         _sub(r"(\w+): T\.TensorMap\(\)", r"\1: T.Ptr(T.void)")),
    Rule("let-tensormap-stack-alloca", '`v: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)` (host prelude)',
         _line_has(r"T\.let\[T\.TensorMap\(\)\]"), _tensormap_lets_to_params),
    Rule("let-handle-pointer", '`p: T.let[T.handle("dtype", "scope")] = ...` pointer-typed lets',
         _line_has(r"T\.let\[T\.handle\("),
         _sub(r"T\.let\[T\.handle\([^\]]*\)\]", "T.let[T.uint64]")),
    Rule("serial-kwargs", "`T.serial(..., unroll=..., step=...)` loop keywords",
         lambda f: "keyword argument in a loop range" in f.what or bool(re.search(r"T\.serial\(.*(unroll|step)=", f.text)),
         lambda text, _f: re.sub(r"T\.serial\((.*), step=([^,)]+)\):", r"range(\1, \2):",
                                 re.sub(r", unroll=[^,)]+", "", text))),
    Rule("call-packed-tensormap-encode", '`T.call_packed("runtime.cuTensorMapEncodeTiled", ...)` (host prelude)',
         _line_has(r'T\.call_packed\("runtime\.cuTensorMapEncode'),
         _blank_matching(r'T\.call_packed\("runtime\.cuTensorMapEncode')),
    Rule("tuple-scope-ids", "tuple targets `a, b, c = T.cta_id([x, y, z])` (also warp/lane/cluster ids)",
         _line_has(r"^\w+(, \w+)+ = T\.\w+\(\["), _tuple_scope_ids),
    Rule("handle-ty-reinterpret", "`T.reinterpret(T.handle(...).ty, x)` (a `T.handle(...).ty` type expression)",
         _line_has(r"T\.handle\([^()]*\)\.ty"), _unwrap_handle_ty),
    Rule("decl-buffer-data-pointer", "`T.decl_buffer(..., data=<pointer>)` over a pointer value, not a buffer's .data",
         lambda f: "data= takes another buffer's .data" in f.what, lambda text, f: _edit_line(text, f.line, _to_alloc)),
    Rule("alloc-buffer-data-address", "`T.alloc_buffer(..., data=T.address_of(param[i]))` (an allocation placed in "
         "a parameter's memory)", lambda f: "alloc_buffer does not take data=" in f.what,
         lambda text, f: _edit_line(text, f.line, _to_alloc)),
    Rule("global-scope-alloc", '`T.alloc_buffer(..., scope="global")` (a global allocation in the kernel)',
         lambda f: "needs a scope" in f.what and 'scope="global"' in f.text,
         lambda text, _f: text.replace('scope="global"', 'scope="shared"')),
    Rule("param-scope", '`T.decl_buffer(..., scope="param")` (a buffer in the parameter space)',
         lambda f: "unknown storage scope 'param'" in f.what,
         lambda text, _f: text.replace('scope="param"', 'scope="shared"')),
    Rule("printf-metadata-string", '`T.cuda.printf(metadata["ir.StringImm"][i], ...)` (format strings as metadata)',
         lambda f: "metadata[" in f.text and "printf" in f.text,
         _blank_matching(r"T\.cuda\.printf\(metadata\[")),
    Rule("buffer-data-as-value", "`buf.data` / `buf.source.data` as a value (a buffer's data pointer)",
         lambda f: "attribute '.data'" in f.what, lambda text, f: blank_statement(text, f.line)),
    Rule("void-intrinsic-value", "the value of an unmodeled `T.cuda.*` intrinsic used as a typed value "
         "(e.g. `T.reinterpret(\"uint32\", T.cuda.float2_x(p))`)", lambda f: "got void" in f.what,
         lambda text, f: blank_statement(text, f.line)),
    Rule("handle-param", '`p: T.handle("dtype", "global")` parameters (lowered form: the buffer is declared in the body)',
         lambda f: f.text.startswith("def ") and 'T.handle("' in f.text, _handle_params),
    Rule("int64-var-decl", "`n = T.int64()` (a symbolic extent declared in the body)",
         _line_has(r"^\w+ = T\.int(32|64)\(\)$"),
         _sub(r"^(\s*)(\w+) = T\.(int32|int64)\(\)\s*$", r"\1\2: T.let[T.\3] = 64")),
    Rule("buffer-view", "`buf.view(dtype)` dtype views of a buffer",
         lambda f: ".view(" in f.text and ("attribute" in f.what or "view" in f.what or "not a TIRx operation" in f.what),
         _sub(r"\b(\w+)\.view\([^()]*\)", r"\1")),
    Rule("decl-scalar", "`x = T.decl_scalar(dtype, data=..., elem_offset=...)` scalar aliases of a buffer",
         _line_has(r"T\.decl_scalar\("),
         _sub(r"T\.decl_scalar\(T\.(\w+), ", r'T.decl_buffer((1,), "\1", ')),
    Rule("cta-id-in-cluster", "`T.cta_id_in_cluster([...])` (and tuple targets of it)",
         _line_has(r"T\.cta_id_in_cluster\("),
         lambda text, _f: re.sub(r"^(\s*)(\w+(?:, \w+)*) = T\.cta_id_in_cluster\(.*\)\s*$",
                                 lambda m: "\n".join(f"{m.group(1)}{n}: T.let[T.int32] = 0"
                                                     for n in m.group(2).split(", ")), text, flags=re.M)),
    Rule("uint128", "`T.uint128` values (CLC responses)",
         lambda f: "uint128" in f.what,
         lambda text, _f: text.replace("T.uint128", "T.uint64").replace('"uint128"', '"uint64"')),
    Rule("dtype-float4_e2m1fn", '`"float4_e2m1fn"` buffers (FP4 elements)', lambda f: "'float4_e2m1fn'" in f.what,
         lambda text, _f: text.replace('"float4_e2m1fn"', '"uint8"')),
    Rule("dtype-vector", '`"uint32x4"`-style vector dtypes of a buffer', lambda f: bool(re.search(r"'\w+x\d+'", f.what))
         and "unknown dtype" in f.what,
         lambda text, f: re.sub(r'"(u?int\d+|float\d+)x\d+"', r'"\1"', text)),
    Rule("shared-address-arithmetic", "`T.cuda.cvta_generic_to_shared(addr) + offset` (arithmetic on a shared "
         "address)", lambda f: "on an address (a handle value)" in f.what and bool(_CVTA_ARITH.search(f.text)),
         lambda text, f: _blank_matching(_CVTA_ARITH.pattern)(blank_statement(text, f.line), f)),
    Rule("select-of-addresses", "`T.Select(c, <address>, <address>)` (a select between addresses)",
         lambda f: "on an address (a handle value)" in f.what and "T.Select(" in f.text,
         lambda text, f: _blank_matching(r"T\.Select\(.*(cvta_generic_to_shared|address_of)")(
             blank_statement(text, f.line), f)),
    Rule("address-arithmetic", "other arithmetic or comparison on an address (a handle value)",
         lambda f: "on an address (a handle value)" in f.what, lambda text, f: blank_statement(text, f.line)),
    Rule("return-in-kernel", "`return` in a kernel", lambda f: "return is not supported" in f.what,
         lambda text, f: blank_statement(text, f.line)),
    Rule("address-of-whole-buffer", "`T.address_of(buf)` of a whole buffer or scalar (no element index)",
         lambda f: "address_of takes a buffer element" in f.what, _address_of_whole),
    Rule("evaluate-buffer-data", "`T.evaluate(buf.data)` (a buffer's data pointer as a statement)",
         lambda f: "attribute '.data'" in f.what and f.text.startswith("T.evaluate("),
         _blank_matching(r"^\s*T\.evaluate\(\w+\.data\)\s*$")),
    Rule("cluster-thread-tag", '`T.launch_thread("preferredClusterCtaIdx.x", n)` and other cluster launch tags',
         lambda f: "unknown thread tag" in f.what and "luster" in f.text,
         lambda text, _f: re.sub(r'^(\s*)(\w+) = T\.launch_thread\("\w*[cC]luster\w*\.\w", .*\)\s*$',
                                 r"\1\2: T.let[T.int32] = 0", text, flags=re.M)),
]


def _edit_line(text: str, line: int, fn) -> str:
    lines = text.split("\n")
    lines[line - 1] = fn(lines[line - 1])
    return "\n".join(lines)


def _op_count_id(f: Failure) -> str | None:
    m = re.match(r"wrong operand count for (\S+): expected", f.what)
    return m.group(1) if m else None


def _blank_op(text: str, f: Failure) -> str:
    """Blank every statement that calls the op of an operand-count error."""
    op = _op_count_id(f)
    lines = text.split("\n")
    hits = [i + 1 for i, ln in enumerate(lines) if "T." in ln and any(
        o == op or o.startswith(op + ".") for o, _n in line_ops(ln))]
    for line in reversed(hits):
        text = blank_statement(text, line)
    return text


def classify(f: Failure) -> Rule | None:
    op = _op_count_id(f)
    if op is not None:
        return Rule(f"operand-count: {op}", f"`{op}` with an operand count our op registry does not take",
                    lambda _f: True, _blank_op)
    for rule in RULES:
        if rule.match(f):
            return rule
    return None
