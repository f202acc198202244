"""Surface expressions -> typed IR expressions.

Assumes a `Scope` that binds every visible name.  Guarantees: every result has a
dtype; all three spellings of a PTX call (attribute chain, `T.ptx["..."]`, and
positional modifiers with a marker) become one `OpCall` with the canonical
mnemonic; `ptr_to`/`address_of`/`cvta_generic_to_shared` become one `Address`;
literal operands take the dtype the instruction declares; unknown calls become
`Unsupported`; misuse raises `ParseError` with a span and a hint.
"""
from __future__ import annotations

import difflib
import operator
from dataclasses import replace
from typing import Callable

from . import dtypes as dt
from . import syntax as sx
from . import layouts
from . import typing as ty
from .errors import ParseError, Span
from .build_call import Calls
from .nodes import (Address, Buffer, Const, Expr, Load, OpCall, StrConst, Unsupported,
                    Var)
from .scope import BUFFER, CONST, DIM, LET, NAMESPACE, PARAM, THREAD, Scope

# Python's own operators, for arithmetic on two number literals (python_literal_op)
_PY_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
           "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
           "^": operator.xor}

_BINOPS = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "<<": "<<", ">>": ">>",
           "&": "&", "|": "|", "^": "^"}

class ExprBuilder:
    def __init__(self, scope: Scope, file: str, source: str):
        self.scope = scope
        self.file = file
        self.source = source
        # (name, node) -> the symbolic dimension's Var (set by the builder)
        self.dim: Callable[[str, sx.Node], Var] | None = None
        # () -> module constant values so far (set by the builder)
        self.constant_values: Callable[[], dict[str, int | float]] = dict
        self.swizzled: dict = {}         # buffer name -> (declared shape, layouts.Swizzle): declared flat
        # name -> a name unique in the function (set by the builder, which owns the names in use)
        self.fresh: Callable[[str], str] = lambda name: name
        self.calls = Calls(self)     # T.*, T.ptx.*, T.cuda.* and extern calls

    # ------------------------------------------------------------------ helpers
    def span(self, node: sx.Node | sx.Pos | None) -> Span | None:
        if node is None:
            return None
        pos = node if isinstance(node, sx.Pos) else node.pos
        return pos.span(self.file)

    def error(self, what: str, node, hint: str = "", expected: str = "") -> ParseError:
        return ParseError(what, self.span(node), hint=hint, expected=expected, source=self.source)

    def undefined(self, name: str, node) -> ParseError:
        close = difflib.get_close_matches(name, list(self.scope.names()), n=1)
        hint = f"did you mean '{close[0]}'?" if close else \
            "define it before use (a parameter, T.let, loop variable or buffer)"
        return self.error(f"undefined name '{name}'", node, hint=hint)

    def namespace_path(self, node: sx.Node) -> list[str] | None:
        """['ptx', 'mbarrier', 'init'] for `T.ptx.mbarrier.init`; None if not rooted at the T namespace."""
        parts: list[str] = []
        while isinstance(node, sx.Attr):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, sx.Name):
            b = self.scope.lookup(node.id)
            if b is not None and b.kind == NAMESPACE:
                return list(reversed(parts))
        return None

    def is_literal(self, node: sx.Node) -> bool:
        """A Python number when TVM parses the kernel: a literal, a module constant, or
        arithmetic over them (`N * 2`); TVM types it itself (int32/int64/float32)."""
        if isinstance(node, sx.Num):
            return True
        if isinstance(node, sx.Name):
            b = self.scope.lookup(node.id)
            return b is not None and b.kind == CONST
        if isinstance(node, sx.UnaryOp) and node.op in "-+~":
            return self.is_literal(node.operand)
        if isinstance(node, sx.BinOp) and node.op not in ("/", "@"):
            return self.is_literal(node.left) and self.is_literal(node.right)
        return False

    def is_python_value(self, node: sx.Node) -> bool:
        """Evaluated by Python when TVM parses the kernel (so `a if not True else b` is just `b`): literals,
        module constants, and `not` / `and` / `or` / comparisons / arithmetic over them."""
        if isinstance(node, sx.Lit) or self.is_literal(node):
            return True
        if isinstance(node, sx.UnaryOp):
            return self.is_python_value(node.operand)
        if isinstance(node, sx.BoolOp):
            return all(self.is_python_value(v) for v in node.values)
        if isinstance(node, sx.Compare):
            return self.is_python_value(node.left) and all(self.is_python_value(c) for c in node.comparators)
        return False

    def dtype(self, node: sx.Node, what: str = "dtype") -> str:
        """A dtype written as `T.int32`, `"int32"`, or `T.Tensor`-style argument."""
        name = None
        if isinstance(node, sx.Str):
            name = node.value
        else:
            path = self.namespace_path(node)
            if path and len(path) == 1:
                name = path[0]
            elif isinstance(node, sx.Name):
                name = node.id
        if name is None and isinstance(node, sx.Attr) and node.attr == "ty" and isinstance(node.value, sx.Call) \
                and self.namespace_path(node.value.func) in (["handle"], ["Ptr"]):
            name = "handle"      # `T.handle().ty`, `T.handle("uint32", "global").ty`: a pointer type
        if name is None:
            raise self.error(f"expected a {what} here", node, expected="a dtype such as T.int32 or \"float32\"")
        canon = dt.canonical(name)
        if canon is None:
            close = difflib.get_close_matches(name, list(dt.SCALAR_TYPES), n=1)
            raise self.error(f"unknown dtype '{name}'", node,
                             hint=(f"did you mean '{close[0]}'? " if close else "") +
                             "dtypes: " + ", ".join(dt.SCALAR_TYPES))
        return canon

    def int_expr(self, node: sx.Node, what: str) -> Expr:
        e = self.expr(node)
        if not dt.is_integral(e.dtype) or e.dtype == "bool":
            raise self.error(f"{what} must be an integer, got {e.dtype}", node)
        return e

    def shape(self, node: sx.Node | None, owner: str, at) -> tuple[Expr, ...]:
        if node is None:
            raise self.error(f"buffer '{owner}' has no shape", at,
                             hint="give the shape as the first argument, e.g. T.Tensor((128,), T.float32)")
        elts = node.elts if isinstance(node, (sx.TupleLit, sx.ListLit)) else (node,)
        if not elts:
            raise self.error(f"buffer '{owner}' has an empty shape", node, hint="use (1,) for a single element")
        return tuple(self.string_extent(e) if isinstance(e, sx.Str) and self.dim is not None
                     else self.int_expr(e, "a shape extent") for e in elts)

    def string_extent(self, node: sx.Str) -> Expr:
        """A string extent: `"total_k"` is a symbolic dimension, as a TypeVar is; `"num_heads * nnz"` is an
        expression whose free names are symbolic dimensions."""
        assert self.dim is not None  # shape() calls this only when the builder set it
        if node.value.isidentifier():
            b = self.scope.lookup(node.value)
            if b is not None and b.kind == PARAM and b.bound_expr().dtype != "handle":
                return replace(b.bound_expr(), span=self.span(node))  # a scalar parameter named ahead of its place
            return self.dim(node.value, node)
        try:
            tree = sx.field_expr(node.value, node.pos, "string extent")
        except ParseError:      # placed in the kernel file, with its excerpt
            raise self.error(f"cannot read the string extent {node.value!r}", node,
                             "a string extent is an expression over names and constants") from None
        try:
            for name in sorted(_free_names(tree)):
                if self.scope.lookup(name) is None:
                    self.dim(name, node)
            return self.int_expr(tree, "a shape extent")
        except ParseError as err:
            raise self.error(f"cannot use the string extent {node.value!r}: {err.what}", node,
                             hint="a string extent is an integer expression over symbolic dimensions") from None

    def const_int(self, node: sx.Node, what: str) -> int:
        """An integer known while building (a literal, a module constant, arithmetic over them)."""
        e = self.int_expr(node, what)
        from .canonical import fold_expr
        c = fold_expr(e, self.constant_values())
        if not isinstance(c, Const):
            raise self.error(f"{what} must be a constant", node)
        return int(c.value)

    def index_list(self, node: sx.Node) -> tuple[Expr, ...]:
        elts = node.elts if isinstance(node, (sx.ListLit, sx.TupleLit)) else (node,)
        return tuple(self.int_expr(e, "an index") for e in elts)

    def buffer_named(self, node: sx.Node) -> Buffer:
        if isinstance(node, sx.Name):
            b = self.scope.lookup(node.id)
            if b is None:
                raise self.undefined(node.id, node)
            if b.kind == BUFFER:
                return b.bound_buffer()
            raise self.error(f"'{node.id}' is a {b.describe()}, not a buffer", node)
        raise self.error("expected a buffer name here", node)

    def physical(self, buf: Buffer, indices: tuple[Expr, ...], node) -> tuple[Expr, ...]:
        """Indices as the buffer is laid out: a swizzled buffer is flat, indexed by the swizzled offset."""
        entry = self.swizzled.get(buf.name)
        if entry is None:
            self.check_indices(buf, indices, node)
            return indices
        shape, sw = entry
        if len(indices) != len(shape):
            raise self.error(f"buffer '{buf.name}' has {len(shape)} dimension(s), indexed with {len(indices)}", node)
        return (layouts.offset(sw, shape, indices, self.span(node)),)

    def check_indices(self, buf: Buffer, indices: tuple[Expr, ...], node) -> None:
        if len(indices) != len(buf.shape):
            raise self.error(f"buffer '{buf.name}' has {len(buf.shape)} dimension(s), indexed with {len(indices)}",
                             node,
                             hint=f"index it as {buf.name}[{', '.join('i' + str(k) for k in range(len(buf.shape)))}]")

    def element(self, node: sx.Subscript) -> tuple[Buffer, tuple[Expr, ...]]:
        buf = self.buffer_named(node.value)
        if any(isinstance(i, sx.Slice) for i in node.indices):
            raise self.error("slices are not supported", node, hint="index one element, e.g. buf[i]")
        indices = tuple(self.int_expr(i, "an index") for i in node.indices)
        return buf, self.physical(buf, indices, node)

    def address(self, node: sx.Node, ctx: str) -> Expr:
        """The address of a buffer element (`buf[i]`), of a whole buffer (`buf`: its first element), or of a
        tensor map (`m`: the handle names the map, as the grid-constant parameter's address does)."""
        if isinstance(node, sx.Name):
            b = self.scope.lookup(node.id)
            if b is not None and b.kind == BUFFER:
                buf = b.bound_buffer()
                return Address(buf.name, tuple(Const(0, "int32") for _ in buf.shape), span=self.span(node))
            if b is not None and b.kind in (LET, PARAM) and b.bound_expr().dtype == "handle":
                return replace(b.bound_expr(), span=self.span(node))
        if isinstance(node, sx.Attr) and node.attr == "data":
            return self.address(_strip_source(node.value), ctx)
        if not isinstance(node, sx.Subscript):
            raise self.error(f"{ctx} takes a buffer element such as buf[i]", node)
        buf, indices = self.element(node)
        return Address(buf.name, indices, span=self.span(node))

    # ------------------------------------------------------------------ expressions
    def expr(self, node: sx.Node) -> Expr:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"{type(node).__name__.lower()} is not a TIRx expression", node)
        try:
            return method(node)
        except _VectorOperand as v:
            # arithmetic, a comparison or a cast of a vector value: kept, named, not modeled when executed
            return Unsupported(f"{v.what} on a {v.dtype} vector value", (), v.dtype, span=self.span(node))

    def _Num(self, node: sx.Num) -> Expr:
        if isinstance(node.value, float):
            return ty.const(node.value, "float32", self.span(node))
        return Const(node.value, dt.literal_int_dtype(node.value), span=self.span(node))

    def _Lit(self, node: sx.Lit) -> Expr:
        if node.value is None:
            raise self.error("None is not a value in TIRx", node)
        return Const(node.value, "bool", span=self.span(node))

    def _Str(self, node: sx.Str) -> Expr:
        return StrConst(node.value, span=self.span(node))

    def _Name(self, node: sx.Name) -> Expr:
        b = self.scope.lookup(node.id)
        if b is None:
            raise self.undefined(node.id, node)
        if b.kind in (CONST, LET, PARAM, THREAD, DIM):
            return replace(b.bound_expr(), span=self.span(node))
        if b.kind == BUFFER:
            buf = b.bound_buffer()
            if b.scalar or (buf.scope == "local" and len(buf.shape) == 1 and _is_one(buf.shape[0])):
                return Load(buf.name, (Const(0, "int32"),), buf.dtype, span=self.span(node))
            raise self.error(f"buffer '{node.id}' used as a value", node,
                             hint=f"index an element, e.g. {node.id}[0], or take its address with "
                                  f"{node.id}.ptr_to([0])")
        raise self.error(f"'{node.id}' is a {b.describe()}, not a value", node)

    def _Attr(self, node: sx.Attr) -> Expr:
        inner = _strip_source(node.value) if node.attr == "data" else node.value
        if node.attr == "data" and isinstance(inner, sx.Name):
            b = self.scope.lookup(inner.id)
            if b is not None and b.kind == BUFFER:     # `buf.data`: the buffer's address
                return self.address(inner, "a buffer's data")
        path = self.namespace_path(node)
        if path is not None:
            raise self.error(f"'T.{'.'.join(path)}' is not a value", node,
                             hint="call it, e.g. T.cuda.elect_sync(), or use it as a dtype in a call")
        raise self.error(f"attribute '.{node.attr}' is not supported here", node)

    def _Subscript(self, node: sx.Subscript) -> Expr:
        if isinstance(node.value, sx.Subscript) and isinstance(node.value.value, sx.Name) \
                and node.value.value.id == "metadata" and self.scope.lookup("metadata") is None:
            # `metadata["ir.StringImm"][k]`: a string the printer moved out of line (a printf format)
            return StrConst("<metadata string>", span=self.span(node))
        buf, indices = self.element(node)
        return Load(buf.name, indices, buf.dtype, span=self.span(node))

    def _BinOp(self, node: sx.BinOp) -> Expr:
        if node.op in ("**", "@"):
            raise self.error(f"operator '{node.op}' is not supported in TIRx", node,
                             hint="write the product out, or use T.pow for floats" if node.op == "**" else "")
        a, b = self.shared_number(node.left), self.shared_number(node.right)
        _scalar(f"'{node.op}'", a, b)
        if node.op in "+-" and (_is_pointer_value(a) or _is_pointer_value(b)) \
                and dt.is_integral(b.dtype if _is_pointer_value(a) else a.dtype):
            ptr, off = (a, b) if _is_pointer_value(a) else (b, a)
            if node.op == "+" and isinstance(ptr, Var):
                # a byte offset from a tensor map's or a pointer's address (reading a map's bytes to copy it,
                # `T.address_of(tmap) + T.uint64(32)`): the pointer that many bytes further
                return OpCall("tir.ptr_byte_offset", (ptr, ty.cast("int64", off)), None, "handle",
                              span=self.span(node))
            if isinstance(ptr, Unsupported):
                # arithmetic on an unmodeled value (a `T.Let` ...): named after that value's operation
                return Unsupported(ptr.name, (a, b), dtype=ptr.dtype, span=self.span(node))
            # anything else (a difference from a pointer): kept, not modeled when executed
            return Unsupported(f"pointer arithmetic '{node.op}' on a tensor map or computed pointer", (a, b),
                               span=self.span(node))
        self.number(a, node.left, f"'{node.op}'")
        self.number(b, node.right, f"'{node.op}'")
        folded = self.python_literal_op(node, a, b)
        if folded is not None:
            return folded
        if node.op == "/" and not (dt.is_float(a.dtype) or dt.is_float(b.dtype)):
            raise self.error("'/' on integers is ambiguous", node,
                             hint="use '//' (floor division) or T.truncdiv(a, b) (C division)")
        return ty.binop(_BINOPS[node.op], a, b, self.span(node), self.is_literal(node.left),
                        self.is_literal(node.right))

    def shared_number(self, node: sx.Node) -> Expr:
        """An arithmetic operand; `T.cuda.cvta_generic_to_shared(...)` there (also inside a select) is the
        shared-window address as a number (a uint64, as TVM types it), as in descriptor arithmetic
        (`cvta(...) >> 4`)."""
        e = self.expr(node)
        if e.dtype == "handle" and self.has_cvta(node):
            return ty.cast("uint64", e)
        return e

    def has_cvta(self, node: sx.Node) -> bool:
        if isinstance(node, sx.Call):
            if self.namespace_path(node.func) == ["cuda", "cvta_generic_to_shared"]:
                return True
            if self.namespace_path(node.func) in (["Select"], ["if_then_else"]):
                return any(self.has_cvta(a) for a in node.args[1:])
        return False

    def python_literal_op(self, node: sx.BinOp, a: Expr, b: Expr) -> Expr | None:
        """Arithmetic on two number literals is Python's, done before TVM sees a value: `256 >> 32` is 0,
        `7 / 2` is 3.5 and `2147483647 + 1` an int64 2147483648.  None if this is not such a node."""
        if not (isinstance(a, Const) and isinstance(b, Const) and self.is_literal(node.left)
                and self.is_literal(node.right)) or a.dtype == "bool" or b.dtype == "bool":
            return None
        x, y = a.value, b.value
        try:
            v = _PY_OPS[node.op](x, y)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError, KeyError):
            return None   # TIR's rules (and errors) apply
        if isinstance(v, float):
            return ty.const(v, "float32", self.span(node))
        if not dt.fits(v, "int64"):
            return None
        return Const(v, dt.literal_int_dtype(v), span=self.span(node))

    def _UnaryOp(self, node: sx.UnaryOp) -> Expr:
        if node.op == "-" and isinstance(node.operand, sx.Num) and isinstance(node.operand.value, int):
            v = -node.operand.value
            return Const(v, dt.literal_int_dtype(v), span=self.span(node))
        a = self.expr(node.operand)
        _scalar(f"'{node.op}'", a)
        self.number(a, node.operand, f"'{node.op}'", address_ok=node.op == "not", void_ok=node.op == "not")
        if node.op == "-":
            return ty.neg(a, self.span(node))
        if node.op == "+":
            return a
        return ty.unary(node.op, a, self.span(node))

    def _BoolOp(self, node: sx.BoolOp) -> Expr:
        values = [self.number(self.expr(v), v, f"'{node.op}'", address_ok=True) for v in node.values]
        _scalar(f"'{node.op}'", *values)
        out = values[0]
        for v in values[1:]:
            out = ty.binop(node.op, out, v, self.span(node))
        return out

    def _Compare(self, node: sx.Compare) -> Expr:
        for op in node.ops:
            if op in ("in", "not in", "is", "is not"):
                raise self.error(f"operator '{op}' is not supported in TIRx", node, hint="compare with == or !=")
        terms = []
        left_node = node.left
        left = self.number(self.expr(left_node), left_node, "a comparison", address_ok=True)
        for op, rhs_node in zip(node.ops, node.comparators):
            rhs = self.number(self.expr(rhs_node), rhs_node, "a comparison", address_ok=True)
            _scalar("a comparison", left, rhs)
            terms.append(ty.binop(op, left, rhs, self.span(node), self.is_literal(left_node),
                                  self.is_literal(rhs_node)))
            left, left_node = rhs, rhs_node
        out = terms[0]
        for t in terms[1:]:
            out = ty.binop("and", out, t, self.span(node))
        return out

    def _IfExp(self, node: sx.IfExp) -> Expr:
        what = "a conditional expression"
        test = self.number(self.expr(node.test), node.test, what, address_ok=True)
        body = self.number(self.expr(node.body), node.body, what, address_ok=True)
        orelse = self.number(self.expr(node.orelse), node.orelse, what, address_ok=True)
        if isinstance(test, Const) and self.is_python_value(node.test):
            return body if test.value else orelse   # Python picks the branch: TVM never sees the other one
        if isinstance(test, Const):   # T.bool(True) is a TVM constant: the branches meet first, then it folds
            body, orelse, _ = ty.match(body, orelse)
            return body if test.value else orelse
        return ty.select(test, body, orelse, True, self.span(node))   # literals promote, as in `+`

    def _TupleLit(self, node) -> Expr:
        raise self.error("a tuple is not a value here", node)

    def _ListLit(self, node) -> Expr:
        raise self.error("a list is not a value here", node)

    def _DictLit(self, node) -> Expr:
        raise self.error("a dict is not a value here", node)

    def _Slice(self, node) -> Expr:
        raise self.error("slices are not supported", node)

    def _Call(self, node: sx.Call) -> Expr:
        return self.calls.call(node)

    def number(self, e: Expr, node: sx.Node, what: str, address_ok: bool = False, void_ok: bool = True) -> Expr:
        """An operand of arithmetic, a comparison, a select or a cast: strings are not numbers, addresses
        (dtype handle) only compare, select and cast (`address_ok`), and an unmodeled call (void, an
        `Unsupported` node) takes the other operand's type except where its result would stay void."""
        if e.dtype == "string":
            raise self.error(f"{what} on a string", node,
                             hint="strings only name dtypes, scopes, thread tags, PTX modifiers and messages")
        if e.dtype == "void" and not void_ok:
            raise self.error(f"{what} on a call that returns no value", node,
                             hint="make the call a statement of its own")
        if e.dtype == "handle" and not address_ok:
            raise self.error(f"{what} on an address (a handle value)", node,
                             hint="index the buffer instead, e.g. T.address_of(buf[i + 1]) or buf.ptr_to([i + 1])")
        return e



def _is_pointer_value(e: Expr) -> bool:
    """A handle that is not one of our buffers' element addresses: a tensor-map or pointer parameter, a pointer
    let, or an unmodeled call that returns one."""
    return (e.dtype == "handle" and isinstance(e, Var)) or isinstance(e, Unsupported)


def _free_names(node) -> set[str]:
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, sx.Name):
            out.add(n.id)
        elif isinstance(n, sx.Call):
            stack.extend(n.args)            # a called name (min, T.max) is not a dimension
        elif isinstance(n, tuple):
            stack.extend(n)
        elif isinstance(n, sx.Node):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "pos")
    return out


class _VectorOperand(Exception):
    """A vector value (uint32x4 ...) met where a number is needed: the enclosing expression is not modeled."""

    def __init__(self, what: str, dtype: str):
        super().__init__(what)
        self.what, self.dtype = what, dtype


def _scalar(what: str, *operands: Expr) -> None:
    for e in operands:
        if e.dtype in dt.VECTOR_TYPES:
            raise _VectorOperand(what, e.dtype)


def _strip_source(node: sx.Node) -> sx.Node:
    """`x.source` is the buffer behind `x` (apache-tvm 0.27 prints a scalar's address as `x.source.data`)."""
    return node.value if isinstance(node, sx.Attr) and node.attr == "source" else node


def _is_one(e: Expr) -> bool:
    return isinstance(e, Const) and e.value == 1
