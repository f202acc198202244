"""Static meta-programming: the Python a kernel file runs before TVM sees any TIR.

In TVMScript, module-level values that are not numbers (tuples, lists, dicts, strings,
f-strings, `tvm.DataType(...)`), `T.meta_var(...)` names, `@T.inline` helpers and
`T.constexpr` parameters are compile-time Python: the parser evaluates them and splices the
result into the TIR.  `Evaluator` computes such values with Python semantics (sizes bounded
before computing) and `to_syntax` spells a value as a literal again; the kernel's syntax tree is
rewritten with them by `ir/meta_expand.py`.  Numbers stay module constants (`ConstRef`), so
`prove` can still make them symbolic.
"""
from __future__ import annotations

from typing import Callable
from collections.abc import Mapping

from . import dtypes as dt
from . import syntax as sx
from .errors import ParseError

MAX_CONST_BITS = 256
MAX_SEQUENCE = 1 << 16        # elements of a tuple/list/str built at module level (`(0,) * 10**9` is an error)


_CONVERSIONS: dict[str, Callable[[object], str]] = {"r": repr, "s": str, "a": ascii}


class DType(str):
    """`tvm.DataType("float16")`: a dtype name with the attributes kernels read (`.bits`, `.lanes`)."""

    @property
    def bits(self) -> int:
        return dt.bits(dt.canonical(str(self)) or str(self))

    @property
    def lanes(self) -> int:
        return 1


DTYPE_ATTRS = ("bits", "lanes")


class Evaluator:
    """Python semantics for compile-time expressions; `env` maps names to Python values."""

    def __init__(self, error, undefined, namespace_path):
        self.error = error                    # (what, node, hint) -> ParseError
        self.undefined = undefined            # (name, node) -> ParseError
        self.namespace_path = namespace_path  # node -> ['float16'] for `T.float16`, else None

    def bad(self, node, owner: str) -> ParseError:
        return self.error(f"'{owner}' must be a compile-time value", node,
                          "use literals, earlier constants, tuples, lists, dicts, strings, f-strings, "
                          "tvm.DataType(...) and + - * // % << >> & | ^ ** min max abs len")

    def __call__(self, node: sx.Node, env: Mapping, owner: str):
        ev = lambda n: self(n, env, owner)    # noqa: E731
        if isinstance(node, sx.Num):
            return node.value
        if isinstance(node, (sx.Str, sx.Lit)):
            return node.value
        if isinstance(node, sx.FStr):
            return self.fstring(node, env, owner)
        if isinstance(node, sx.Name):
            if node.id in env:
                return env[node.id]
            raise self.undefined(node.id, node)
        if isinstance(node, (sx.TupleLit, sx.ListLit)):
            out = []
            for e in node.elts:
                if isinstance(e, sx.Starred) and not e.double:
                    out.extend(self.iterable(ev(e.value), e, owner))
                else:
                    out.append(ev(e))
            self.size(out, node)
            return tuple(out) if isinstance(node, sx.TupleLit) else out
        if isinstance(node, sx.DictLit):
            return {ev(k): ev(v) for k, v in node.items}
        if isinstance(node, sx.UnaryOp):
            v = ev(node.operand)
            try:
                return {"-": lambda: -v, "+": lambda: +v, "~": lambda: ~v, "not": lambda: not v}[node.op]()
            except TypeError:
                raise self.bad(node, owner) from None
        if isinstance(node, sx.BinOp):
            return self.binop(node, ev(node.left), ev(node.right), owner)
        if isinstance(node, sx.BoolOp):
            value = None
            for e in node.values:
                value = ev(e)
                if (node.op == "and") != bool(value):
                    return value
            return value
        if isinstance(node, sx.Compare):
            left = ev(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node)
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, sx.IfExp):
            return ev(node.body) if ev(node.test) else ev(node.orelse)
        if isinstance(node, sx.Subscript):
            return self.subscript(node, ev(node.value), [ev(i) if not isinstance(i, sx.Slice) else
                                                          slice(*(None if p is None else ev(p)
                                                                  for p in (i.lower, i.upper, i.step)))
                                                          for i in node.indices], owner)
        if isinstance(node, sx.Attr):
            base = None if self.namespace_path(node) is not None else ev(node.value)
            if isinstance(base, DType) and node.attr in DTYPE_ATTRS:
                return getattr(base, node.attr)
            path = self.namespace_path(node)
            if path is not None and len(path) == 1 and dt.canonical(path[0]) is not None:
                return DType(dt.canonical(path[0]))          # `T.float16` as a value: the dtype
            raise self.bad(node, owner)
        if isinstance(node, sx.Call):
            return self.call(node, env, owner)
        raise self.bad(node, owner)

    def call(self, node: sx.Call, env: Mapping, owner: str):
        callee = node.func.attr if isinstance(node.func, sx.Attr) else getattr(node.func, "id", None)
        qualified = isinstance(node.func, sx.Attr) and isinstance(node.func.value, sx.Name) \
            and node.func.value.id in ("tvm", "T")
        if callee == "DataType" and (qualified or isinstance(node.func, sx.Name)):
            if len(node.args) != 1 or node.kwargs:
                raise self.error("tvm.DataType takes one dtype name", node, 'tvm.DataType("float16")')
            name = self(node.args[0], env, owner)
            canon = dt.canonical(str(name))
            if canon is None:
                raise self.error(f"unknown dtype {name!r}", node.args[0],
                                 "dtypes: " + ", ".join(dt.SCALAR_TYPES))
            return DType(canon)
        builtins: dict[str, Callable] = {"min": min, "max": max, "abs": abs, "len": len, "int": int, "str": str,
                                         "tuple": tuple, "list": list, "bool": bool, "float": float, "sum": sum}
        if isinstance(node.func, sx.Name) and callee in builtins and not node.kwargs:
            args = []
            for a in node.args:
                if isinstance(a, sx.Starred) and not a.double:
                    args.extend(self.iterable(self(a.value, env, owner), a, owner))
                else:
                    args.append(self(a, env, owner))
            try:
                return builtins[callee](*args)
            except (TypeError, ValueError) as err:
                raise self.error(f"{callee}() in '{owner}': {err}", node,
                                 "give min/max one or more values, abs and len exactly one") from None
        raise self.bad(node, owner)

    def iterable(self, value, node, owner: str):
        if not isinstance(value, (tuple, list, str, dict)):
            raise self.error(f"only a tuple or list can be splatted here, not {type(value).__name__}", node,
                             "splat a tuple or list constant: *DIMS")
        return list(value)

    def size(self, value, node) -> None:
        if isinstance(value, (tuple, list, str)) and len(value) > MAX_SEQUENCE:
            raise self.error(f"compile-time value too large ({len(value)} elements)", node,
                             f"kernels' constant tuples and strings have at most {MAX_SEQUENCE} elements")

    def binop(self, node: sx.BinOp, a, b, owner: str):
        if _too_big(node.op, a, b):
            raise self.error(f"'{owner}' is too large: more than {MAX_CONST_BITS} bits", node,
                             "kernel constants fit in 64 bits; check the expression")
        if node.op == "*" and isinstance(a, (tuple, list, str)) != isinstance(b, (tuple, list, str)):
            seq, n = (a, b) if isinstance(a, (tuple, list, str)) else (b, a)
            if isinstance(n, int) and len(seq) * max(n, 0) > MAX_SEQUENCE:
                # refused before the product is built: `(0,) * 10**9` would allocate gigabytes first
                raise self.error(f"compile-time value too large ({len(seq) * n} elements)", node,
                                 f"kernels' constant tuples and strings have at most {MAX_SEQUENCE} elements")
        try:
            out = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
                   "%": lambda: a % b, "**": lambda: a ** b, "<<": lambda: a << b, ">>": lambda: a >> b,
                   "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b, "/": lambda: a / b}[node.op]()
        except (ZeroDivisionError, KeyError, TypeError, ValueError, OverflowError):
            raise self.bad(node, owner) from None
        self.size(out, node)
        return out

    def subscript(self, node: sx.Subscript, base, keys, owner: str):
        key = keys[0] if len(keys) == 1 else tuple(keys)
        try:
            return base[key]
        except (KeyError, IndexError):
            raise self.error(f"{key!r} is not in '{owner}'" if isinstance(base, dict) else
                             f"index {key!r} is out of range", node, "") from None
        except TypeError:
            raise self.bad(node, owner) from None

    def fstring(self, node: sx.FStr, env: Mapping, owner: str, rewrite=None) -> str:
        """The formatted string; `rewrite` maps each field's expression first (the expander's substitutions)."""
        out = []
        for part in node.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            text, conv, spec = part
            try:
                field = sx.field_expr(text, node.pos)
            except ParseError:      # placed in the kernel file, as every evaluator error is
                raise self.error(f"cannot read the f-string field {text!r}", node,
                                 "an f-string field is an expression over names and constants") from None
            value = self(rewrite(field) if rewrite is not None else field, env, owner)
            if conv:
                value = _CONVERSIONS[conv](value)
            try:
                out.append(format(value, spec))
            except (ValueError, TypeError) as err:
                raise self.error(f"bad format spec {spec!r} in an f-string: {err}", node, "") from None
        return "".join(out)


def to_syntax(value, pos: sx.Pos) -> sx.Node | None:
    """The literal that spells a compile-time value, placed at `pos` (None if there is none)."""
    if isinstance(value, bool) or value is None:
        return sx.Lit(pos, value)
    if isinstance(value, (int, float)):
        if value < 0:
            inner = to_syntax(-value, pos)
            return sx.UnaryOp(pos, "-", inner) if inner is not None else None
        return sx.Num(pos, value, repr(value))
    if isinstance(value, str):
        return sx.Str(pos, str(value))
    if isinstance(value, (tuple, list)):
        spelled = [to_syntax(v, pos) for v in value]
        elts = tuple(e for e in spelled if e is not None)
        if len(elts) != len(spelled):
            return None
        return sx.TupleLit(pos, elts) if isinstance(value, tuple) else sx.ListLit(pos, elts)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            ks, vs = to_syntax(k, pos), to_syntax(v, pos)
            if ks is None or vs is None:
                return None
            items.append((ks, vs))
        return sx.DictLit(pos, tuple(items))
    return None


def _compare(op: str, a, b) -> bool:
    try:
        return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b, "in": lambda: a in b, "not in": lambda: a not in b,
                "is": lambda: a is b, "is not": lambda: a is not b}[op]()
    except TypeError:
        return False


def _too_big(op: str, a, b) -> bool:
    """Could `a op b` exceed MAX_CONST_BITS?  Decided from an upper bound before computing it (`10 ** 10 ** 9`
    never finishes)."""
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    if isinstance(a, float) or isinstance(b, float):
        return op == "**" and abs(b) > 1e4
    bits = max(abs(a).bit_length(), 1)
    if op == "**":
        return b > 0 and abs(a) > 1 and bits * b > 2 * MAX_CONST_BITS
    if op == "<<":
        return b > 0 and a != 0 and bits + b > 2 * MAX_CONST_BITS
    return False
