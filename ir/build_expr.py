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
import math
import operator
from dataclasses import replace
from typing import Callable

from . import dtypes as dt
from . import ops as opreg
from . import syntax as sx
from . import layouts
from . import typing as ty
from .errors import ParseError, Span
from .nodes import (Address, BinOp, Buffer, Cast, Const, ConstRef, Expr, LetExpr, Load, OpCall, StrConst, Unsupported,
                    Var)
from .scope import BUFFER, BUILTIN, CONST, DIM, LET, NAMESPACE, PARAM, THREAD, Binding, Scope

# Python's own operators, for arithmetic on two number literals (python_literal_op)
_PY_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
           "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
           "^": operator.xor}

_BINOPS = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "<<": "<<", ">>": ">>",
           "&": "&", "|": "|", "^": "^"}

# T.<name>(a, b) spelled as operators
_T_BINARY = {"truncdiv": "tdiv", "Div": "tdiv", "truncmod": "tmod", "floordiv": "//", "floormod": "%",
             "indexdiv": "//", "indexmod": "%", "min": "min", "max": "max", "shift_left": "<<",
             "shift_right": ">>", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
             "FloorDiv": "//", "FloorMod": "%", "Mod": "tmod", "And": "and", "Or": "or",
             "BitwiseAnd": "&", "BitwiseOr": "|", "BitwiseXor": "^", "ShiftLeft": "<<", "ShiftRight": ">>"}

_MATH = {"exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
         "sigmoid", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "erf", "atan", "asin", "acos", "sinh",
         "cosh", "isnan", "isinf", "isfinite", "pow", "fmod", "atan2", "copysign", "hypot"}

# CUDA math library functions TVM's lowering prints as `T.call_pure_extern(dtype, "expf", x)`: the same
# math as the TIRx intrinsic (float32 `f` forms, the float64 plain names; `__expf`-style fast forms are the
# hardware approximations of the same function)
_EXTERN_MATH = {f"{m}f": m for m in ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
                                     "sin", "cos", "tan", "tanh", "fabs", "floor", "ceil", "trunc", "erf", "atan",
                                     "asin", "acos", "sinh", "cosh", "pow", "fmod", "atan2", "copysign", "hypot")}
_EXTERN_MATH.update({f"__{m}f": m for m in ("exp", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "pow")})
_EXTERN_MATH.update({"nearbyintf": "nearbyint", "rintf": "nearbyint"})
_EXTERN_MATH_F64 = {m: m for m in set(_EXTERN_MATH.values())}
# CUDA integer intrinsics TVM's lowering prints as `T.call_pure_extern("uint32", "__popc", x)`: the TIRx
# bit count of the operand taken as the function's parameter type (CUDA Math API, integer intrinsics)
_EXTERN_BITS = {"__popc": ("popcount", "uint32"), "__popcll": ("popcount", "uint64"),
                "__clz": ("clz", "uint32"), "__clzll": ("clz", "uint64")}

# names that only make sense in a specific statement position
STATEMENT_ONLY = {"alloc_tensor", "alloc_buffer", "decl_buffer", "decl_tensor", "alloc_local", "alloc_shared",
                  "local_scalar", "launch_thread", "device_entry", "func_attr", "attr", "evaluate", "cta_id",
                  "warp_id", "lane_id", "thread_id", "warpgroup_id", "warp_id_in_wg", "thread_id_in_wg", "cluster_id",
                  "cta_id_in_cluster", "serial", "unroll", "grid", "parallel", "vectorized", "Tensor", "Buffer",
                  "Ptr", "let", "handle"}


def unescape_segment(seg: str) -> str:
    """Attribute-chain segment -> PTX token (`shared__cta` -> `shared::cta`, `async_` -> `async`)."""
    seg = seg.replace("__colon__", "\0").replace("__", "::").replace("\0", ":")
    if seg.endswith("_"):
        seg = seg[:-1]
    return seg


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

    # ------------------------------------------------------------------ calls
    def _Call(self, node: sx.Call) -> Expr:
        func = node.func
        # T.ptx["mnemonic"](...)
        if isinstance(func, sx.Subscript) and self.namespace_path(func.value) == ["ptx"]:
            if len(func.indices) != 1 or not isinstance(func.indices[0], sx.Str):
                raise self.error("T.ptx[...] takes one mnemonic string", func)
            return self.ptx_call(func.indices[0].value, node, positional=False)
        # buf.ptr_to([...])
        if isinstance(func, sx.Attr) and func.attr == "ptr_to" and isinstance(func.value, sx.Name):
            buf = self.buffer_named(func.value)
            if len(node.args) != 1 or node.kwargs:
                raise self.error("ptr_to takes one list of indices", node, expected=f"{buf.name}.ptr_to([i])")
            indices = self.physical(buf, self.index_list(node.args[0]), node)
            return Address(buf.name, indices, span=self.span(node))
        # buf.access_ptr("r", offset=k): the address of the element at flat offset k
        if isinstance(func, sx.Attr) and func.attr == "access_ptr" and isinstance(func.value, sx.Name):
            return self.access_ptr(self.buffer_named(func.value), node)
        path = self.namespace_path(func)
        if path is None:
            if isinstance(func, sx.Name):
                b = self.scope.lookup(func.id)
                if b is None:
                    raise self.undefined(func.id, func)
                if b.kind == BUILTIN:
                    raise self.error(f"'{func.id}(...)' is only valid as a for-loop iterator", node)
                raise self.error(f"'{func.id}' is a {b.describe()} and cannot be called", node)
            raise self.error("this call is not a TIRx operation", node,
                             hint="kernels call T.ptx.*, T.cuda.* and T.* intrinsics")
        if not path:
            raise self.error("the T namespace cannot be called", node)
        if path[0] == "ptx":
            if len(path) == 1:
                raise self.error("T.ptx needs an instruction, e.g. T.ptx.mbarrier.init.shared.b64(...)", node)
            if path[1:] == ["pred"]:
                # T.ptx.pred(x): x is a `.pred` operand; a tag for TVM's operand dispatch, the value itself here
                return self.one_operand(node, "T.ptx.pred")
            segs = [unescape_segment(p) for p in path[1:]]
            return self.ptx_call(".".join(segs), node, positional=len(segs) == 1)
        if path[0] == "cuda":
            return self.cuda_call(".".join(path[1:]), node)
        if len(path) == 1:
            return self.t_call(path[0], node)
        return self.unsupported("T." + ".".join(path), node)

    def let_expr(self, node: sx.Call) -> Expr:
        """`T.Let(body, where={v: value})`, the lowered form's let expression (TVM's `tir.Let`): `value` is
        built in the enclosing scope, `body` with `v` bound to it (a fresh variable, so a name the printer
        reuses for another let, or declares with `v = T.int32()`, stays distinct)."""
        parts = _let_where(node)
        if parts is None:
            raise self.error("T.Let takes (body, where={variable: value})", node,
                             expected="T.Let(x + 1, where={x: a * 2})")
        key, value_node = parts
        bound = self.scope.lookup(key.id)
        if bound is not None and bound.kind not in (DIM, LET, NAMESPACE, BUILTIN):
            raise self.error(f"T.Let binds '{key.id}', which is a {bound.describe()}", key)
        value = self.number(self.expr(value_node), value_node, "T.Let", address_ok=True, void_ok=False)
        var = Var(self.fresh(key.id), value.dtype, span=self.span(key))
        with self.scope.block():
            self.scope.define(key.id, Binding(LET, key.pos, expr=var))
            body = self.number(self.expr(node.args[0]), node.args[0], "T.Let", address_ok=True, void_ok=False)
        return LetExpr(var, value, body, body.dtype, span=self.span(node))

    def access_ptr(self, buf, node: sx.Call) -> Expr:
        """`buf.access_ptr(mask, ptr_type="handle", content_lanes=1, offset=0, extent=None)` (TVM's
        Buffer.access_ptr): the buffer's data plus `offset` elements; the mask and extent do not move it."""
        names = ("access_mask", "ptr_type", "content_lanes", "offset", "extent")
        if len(node.args) > len(names):
            raise self.error(f"access_ptr takes at most {len(names)} arguments", node,
                             expected=f'{buf.name}.access_ptr("rw", offset=k)')
        given = dict(zip(names, node.args))
        for kw in node.kwargs:
            if kw.name not in names or kw.name in given:
                raise self.error(f"unknown or repeated access_ptr argument '{kw.name}'", kw,
                                 hint="access_ptr(access_mask, ptr_type, content_lanes, offset, extent)")
            given[kw.name] = kw.value
        mask = given.get("access_mask")
        if mask is None or not ((isinstance(mask, sx.Str) and mask.value and set(mask.value) <= set("rw"))
                                or (isinstance(mask, sx.Num) and mask.value in (1, 2, 3))):
            raise self.error("access_ptr needs an access mask: \"r\", \"w\" or \"rw\" (1, 2, 3)",
                             mask or node, expected=f'{buf.name}.access_ptr("rw")')
        lanes = given.get("content_lanes")
        if lanes is not None and self.const_int(lanes, "content_lanes") != 1:
            raise self.error("access_ptr with content_lanes other than 1 is not modeled", lanes)
        offset = self.int_expr(given["offset"], "an access_ptr offset") if "offset" in given else Const(0, "int32")
        if "extent" in given:
            self.int_expr(given["extent"], "an access_ptr extent")
        if buf.name in self.swizzled:
            return Unsupported("access_ptr of a swizzled buffer", (offset,), span=self.span(node))
        indices: list[Expr] = []
        for extent in reversed(buf.shape[1:]):
            indices.insert(0, ty.binop("%", offset, extent, self.span(node)))
            offset = ty.binop("//", offset, extent, self.span(node))
        indices.insert(0, offset)
        return Address(buf.name, tuple(indices), span=self.span(node))

    def args(self, node: sx.Call, allow_kwargs: tuple[str, ...] = ()) -> tuple[list[Expr], dict[str, sx.Node]]:
        kwargs = {}
        for kw in node.kwargs:
            if kw.name not in allow_kwargs:
                raise self.error(f"unexpected keyword argument '{kw.name}'", kw,
                                 expected=", ".join(allow_kwargs) or "positional arguments only")
            kwargs[kw.name] = kw.value
        return [self.expr(a) for a in node.args], kwargs

    def one_operand(self, node: sx.Call, name: str) -> Expr:
        operands, _ = self.args(node)
        if len(operands) != 1:
            raise self.error(f"wrong operand count for {name}: expected 1, got {len(operands)}", node,
                             expected="one value", hint=f"call it as {name}(x)")
        return operands[0]

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

    def unsupported(self, name: str, node: sx.Call) -> Expr:
        args = []
        for a in node.args:
            try:
                args.append(self.expr(a))
            except ParseError:
                args.append(StrConst(type(a).__name__, span=self.span(a)))
        return Unsupported(name, tuple(args), span=self.span(node))

    def ptx_call(self, mnemonic: str, node: sx.Call, positional: bool) -> Expr:
        args = list(node.args)
        pred_node = None
        marker = ""
        if positional and args and isinstance(args[-1], sx.Str):
            # printed form: T.ptx.<opcode>(operands..., "mod", "", ..., "<marker>")
            mods = []
            while args and isinstance(last := args[-1], sx.Str):
                mods.append(last.value)
                args.pop()
            mods.reverse()
            marker = mods[-1]
            mnemonic = ".".join([mnemonic] + [m for m in mods[:-1] if m])
        if any(isinstance(a, sx.Str) for a in args):
            raise self.error("string operand in a PTX call", node,
                             hint="modifiers belong in the mnemonic, e.g. T.ptx.fence.proxy.async_()")
        for kw in node.kwargs:
            if kw.name != "pred":
                raise self.error(f"unexpected keyword argument '{kw.name}' in a PTX call", kw, expected="pred=")
            pred_node = kw.value
        if "pred" in [m.strip() for m in marker.split(",")]:
            if not args:
                raise self.error("marker 'pred' but no predicate operand", node)
            pred_node = args.pop()
        op = opreg.normalize_mnemonic(mnemonic)
        operands = [self.expr(a) for a in args]
        pred = self.expr(pred_node) if pred_node is not None else None
        try:
            info = opreg.classify(op, tuple(o.dtype for o in operands))
        except opreg.OperandCountError as err:
            raise self.error(f"wrong operand count for {err.name}: expected {err.expected}, got {err.got}", node,
                             expected=err.layout, hint="check the operand list of this PTX instruction") from None
        if info is None:
            return Unsupported(op, tuple(operands), span=self.span(node))
        operands = self.coerce(info, operands, args, node)
        return OpCall(op, tuple(operands), pred, "void", span=self.span(node))

    def coerce(self, info: opreg.OpInfo, operands: list[Expr], arg_nodes, node) -> list[Expr]:
        """Literal operands take the instruction's operand dtype; destinations must be writable."""
        out: list[Expr] = []
        for spec, e, a in zip(info.operands, operands, arg_nodes):
            if spec.role == "dst" and not isinstance(e, Load):
                raise self.error(f"operand '{spec.name}' of {info.name} is a destination and must be writable",
                                 a, hint="declare a register first, e.g. ok = T.local_scalar(T.uint32), and pass ok")
            if spec.dtype and isinstance(e, Const) and e.dtype != spec.dtype:
                if dt.is_float(e.dtype) and not dt.is_float(spec.dtype):  # int(inf) raised; 1.5 became 1
                    if info.family == "math" and dt.bits(e.dtype) == dt.bits(spec.dtype) \
                            and dt.bits(e.dtype) in (16, 32, 64):
                        # a float literal in a bit-typed operand (`mov.b32 d, T.float32("-inf")`): its bits
                        out.append(Const(_float_bits(e.value, dt.bits(e.dtype)), spec.dtype, span=e.span))
                        continue
                    if not info.supported and info.family == "math":
                        out.append(e)        # kept as written: the op is reported as not modeled anyway
                        continue
                    raise self.error(f"operand '{spec.name}' of {info.name} takes a {spec.dtype}, got a float "
                                     "constant", a, hint=f"write an integer, e.g. T.{spec.dtype}(1)")
                e = ty.const(e.value, spec.dtype, e.span)
            elif spec.dtype and e.dtype != spec.dtype and _is_module_const_expr(e):
                # `N * 32` over module constants is a Python int to TVM, so it is a literal too;
                # keep the ConstRefs (the cast folds away in `canonical`)
                e = Cast(spec.dtype, e, span=e.span)
            out.append(e)
        out.extend(operands[len(out):])
        return out

    def cuda_call(self, name: str, node: sx.Call) -> Expr:
        full = "cuda." + name
        if full in opreg.WARP_REDUCE_ALIASES:
            value = self.one_operand(node, full)
            return OpCall("cuda.warp_reduce", (value, StrConst(opreg.WARP_REDUCE_ALIASES[full]), Const(32, "int32")),
                          None, value.dtype, span=self.span(node))
        if name == "cvta_generic_to_shared" and len(node.args) == 1 and not node.kwargs:
            inner = self.expr(node.args[0])
            if isinstance(inner, Address) or inner.dtype == "handle":
                return inner   # one address, however it is spelled (see nodes.Address)
            return self.intrinsic(full, [inner], node)
        if node.kwargs and full in opreg.KEYWORD_INTRINSICS:
            return self.intrinsic(full, self.keyword_operands(full, node), node)
        operands, _ = self.args(node)
        return self.intrinsic(full, operands, node)

    def keyword_operands(self, full: str, node: sx.Call) -> list[Expr]:
        """Operands of an intrinsic TVM's parser takes by keyword (`encode_instr_descriptor(desc, d_dtype=...)`),
        in the order of its positional (printed) form; left-out fields take TVM's Python defaults."""
        names, defaults = opreg.KEYWORD_INTRINSICS[full]
        operands, given = self.args(node, allow_kwargs=names[len(node.args):])
        for name in names[len(operands):]:
            if name in given:
                operands.append(self.expr(given[name]))
            elif name in defaults:
                operands.append(Const(defaults[name], "bool" if isinstance(defaults[name], bool) else "int32",
                                      span=self.span(node)))
            else:
                raise self.error(f"{full} needs its argument '{name}'", node, expected=", ".join(names))
        return operands

    def extern_call(self, name: str, node: sx.Call) -> Expr:
        """`T.call_pure_extern("float32", "expf", x)`: a CUDA math function is its TIRx intrinsic; any other
        external function stays unmodeled, named (`call_pure_extern __popc`)."""
        if len(node.args) < 2 or not isinstance(node.args[1], sx.Str):
            return self.unsupported("tir." + name, node)
        dtype = self.dtype(node.args[0], f"T.{name} result type")
        fname = node.args[1].value
        operands = [self.expr(a) for a in node.args[2:]]
        if fname in _EXTERN_BITS and len(operands) == 1 and _is_integer(operands[0].dtype) \
                and _is_integer(dtype):
            op, param = _EXTERN_BITS[fname]
            count = self.intrinsic("tir." + op, [ty.cast(param, operands[0], self.span(node))], node)
            return ty.cast(dtype, count, self.span(node))
        table = _EXTERN_MATH_F64 if dtype == "float64" else _EXTERN_MATH if dtype == "float32" else {}
        math_name = table.get(fname)
        if math_name is None or any(o.dtype != dtype for o in operands):
            return Unsupported(f"{name} {fname}", tuple(operands), dtype, span=self.span(node))
        return self.intrinsic("tir." + math_name, operands, node)

    def isnan(self, x: Expr, span) -> Expr:
        return OpCall("tir.isnan", (x,), None, "bool", span=span)

    def isinf(self, x: Expr, span) -> Expr:
        if not dt.is_float(x.dtype):
            return Const(False, "bool", span=span)
        fabs = ty.const(abs(x.value), x.dtype) if isinstance(x, Const) else OpCall("tir.fabs", (x,), None, x.dtype)
        return _logical_and(ty.binop("==", fabs, ty.const(math.inf, x.dtype)), ty.unary("not", self.isnan(x, span)),
                            span)

    def isfinite(self, x: Expr, span) -> Expr:
        return _logical_and(ty.unary("not", self.isinf(x, span)), ty.unary("not", self.isnan(x, span)), span)

    def intrinsic(self, name: str, operands: list[Expr], node: sx.Call) -> Expr:
        try:
            info = opreg.classify(name, tuple(o.dtype for o in operands))
        except opreg.OperandCountError as err:
            raise self.error(f"wrong operand count for {name}: expected {err.expected}, got {err.got}", node,
                             expected=err.layout) from None
        if info is None:
            return Unsupported(name, tuple(operands), span=self.span(node))
        result = "void"
        if info.result == "arg0":
            result = operands[0].dtype if operands else "void"
        elif info.result == "arg1":
            result = operands[1].dtype if len(operands) > 1 else "void"
        elif info.result == "arg2":
            result = operands[2].dtype if len(operands) > 2 else "void"
        elif info.result:
            result = info.result
        return OpCall(name, tuple(operands), None, result, span=self.span(node))

    def t_call(self, name: str, node: sx.Call) -> Expr:
        span = self.span(node)
        canon = dt.canonical(name)
        if canon is not None and canon not in ("void", "handle"):
            # dtype constructor: T.uint32(5) is a typed constant, T.uint32(x) a conversion
            if len(node.args) != 1 or node.kwargs:
                raise self.error(f"T.{name} takes one value", node)
            arg = node.args[0]
            if isinstance(arg, sx.Str) and dt.is_float(canon) and arg.value in ("inf", "-inf", "nan", "-nan"):
                return ty.const(float(arg.value), canon, span)
            literal = _float_literal(arg)
            if literal is not None and dt.is_float(canon):
                # T.float64(0.1) is 0.1 itself: round the literal once, to `canon`, not first to float32
                return ty.const(literal, canon, span)
            return ty.cast(canon, self.number(self.expr(arg), arg, f"T.{name}", address_ok=True), span)
        if name == "Cast":
            if len(node.args) != 2:
                raise self.error("T.Cast takes (dtype, value)", node)
            target = self.dtype(node.args[0])
            value = self.number(self.expr(node.args[1]), node.args[1], "T.Cast", address_ok=True)
            return value if value.dtype == target else Cast(target, value, span=span)
        if name == "cast":  # gen-1 `T.cast(16, "uint32")`: (value, dtype), folds a literal like T.uint32(16)
            kw = {k.name: k.value for k in node.kwargs}
            dtype_node = node.args[1] if len(node.args) == 2 else kw.get("dtype", kw.get("ty"))
            if len(node.args) not in (1, 2) or dtype_node is None or len(node.args) + len(kw) != 2:
                raise self.error("T.cast takes (value, dtype)", node, expected='T.cast(x, "uint32")',
                                 hint='T.Cast takes (dtype, value); T.cast takes (value, dtype)')
            target = self.dtype(dtype_node)
            return ty.cast(target, self.number(self.expr(node.args[0]), node.args[0], "T.cast", address_ok=True),
                           span)
        if name in ("Select", "if_then_else"):
            if len(node.args) != 3:
                raise self.error(f"T.{name} takes (condition, true_value, false_value)", node)
            c, t, f = (self.number(self.expr(a), a, f"T.{name}", address_ok=True) for a in node.args)
            return ty.select(c, t, f, name == "if_then_else", span, self.is_literal(node.args[1]),
                             self.is_literal(node.args[2]))
        if name == "Let":
            return self.let_expr(node)
        if name in _T_BINARY:
            if len(node.args) != 2:
                raise self.error(f"T.{name} takes two operands", node)
            a, b = (self.number(self.expr(x), x, f"T.{name}") for x in node.args)
            x, y = node.args
            if name in ("min", "max") and isinstance(x, sx.Name) and isinstance(y, sx.Name) and x.id == y.id \
                    and getattr(self.scope.lookup(x.id), "kind", None) != CONST:
                # TVM folds min(x, x) when both are the same object: one variable, used twice (a module constant
                # stays a named constant here; constant folding settles it, as it does for TVM's two numbers)
                return a
            return ty.binop(_T_BINARY[name], a, b, span, self.is_literal(node.args[0]), self.is_literal(node.args[1]))
        if name == "Not":
            return ty.unary("not", self.number(self.one_operand(node, "T.Not"), node.args[0], "T.Not"), span)
        if name in ("IntImm", "FloatImm"):
            # the TVM printer's spelling of a constant no dtype constructor can carry, e.g.
            # T.IntImm("uint64", 18446744073709551615)
            if len(node.args) != 2 or node.kwargs:
                raise self.error(f"T.{name} takes (dtype, value)", node)
            target = self.dtype(node.args[0])
            value = self.expr(node.args[1])
            if not isinstance(value, Const):
                raise self.error(f"T.{name} takes a constant value", node.args[1])
            return ty.const(value.value, target, span)
        if name in ("bitwise_not", "BitwiseNot"):   # BitwiseNot: the TVM printer's spelling of ~ on a constant
            a = self.number(self.one_operand(node, "T." + name), node.args[0], f"T.{name}", void_ok=False)
            return ty.unary("~", a, span)
        if name == "abs":
            a = self.number(self.one_operand(node, "T.abs"), node.args[0], "T.abs", void_ok=False)
            if dt.is_float(a.dtype):
                if isinstance(a, Const):
                    return ty.const(abs(a.value), a.dtype, span)
                return self.intrinsic("tir.fabs", [a], node)
            if dt.is_uint(a.dtype):
                return a   # TVM: the absolute value of an unsigned value is itself
            if isinstance(a, Const):
                return ty.const(abs(a.value), a.dtype, span)
            zero = ty.const(0, a.dtype)
            return ty.select(ty.binop(">=", a, zero), a, ty.binop("-", zero, a), False, span)
        if name == "address_of":
            if len(node.args) != 1 or node.kwargs:
                raise self.error("T.address_of takes one buffer element", node)
            return self.address(node.args[0], "T.address_of")
        if name == "reinterpret":
            if len(node.args) != 2:
                raise self.error("T.reinterpret takes (dtype, value)", node)
            target = self.dtype(node.args[0])
            value = self.number(self.expr(node.args[1]), node.args[1], "T.reinterpret", address_ok=True)
            if target == "handle" and (value.dtype == "handle" or isinstance(value, Unsupported)):
                return value             # an address seen as another pointer type: still that address
            if target == "handle" and dt.bits(value.dtype) != 64:
                # a pointer is 64 bits: a narrower integer (a 32-bit shared address) is not one
                return Unsupported("T.reinterpret(handle, integer address)", (value,), "handle", span=span)
            if dt.bits(target) != dt.bits(value.dtype):
                raise self.error(f"T.reinterpret to {target} needs a {dt.bits(target)}-bit value, got {value.dtype}",
                                 node)
            return OpCall("tir.reinterpret", (StrConst(target), value), None, target, span=span)
        if name == "ptr_byte_offset":
            if len(node.args) not in (2, 3) or node.kwargs:
                raise self.error("T.ptr_byte_offset takes (pointer, byte offset, dtype)", node)
            ptr = self.number(self.expr(node.args[0]), node.args[0], "T.ptr_byte_offset", address_ok=True)
            if ptr.dtype != "handle":
                raise self.error("T.ptr_byte_offset takes a pointer first", node.args[0],
                                 hint="e.g. T.ptr_byte_offset(T.address_of(buf[0]), bytes, T.type_annotation(...))")
            offset = ty.cast("int64", self.int_expr(node.args[1], "a byte offset"))
            return self.intrinsic("tir.ptr_byte_offset", [ptr, offset], node)
        if name in ("isinf", "isfinite"):
            # TVM expands these as it builds them: isinf(x) = fabs(x) == inf and not isnan(x) (False for
            # integers), isfinite(x) = not isinf(x) and not isnan(x); constant operands fold as TVM folds them
            operand = self.one_operand(node, f"T.{name}")
            return self.isfinite(operand, span) if name == "isfinite" else self.isinf(operand, span)
        if name in ("call_pure_extern", "call_extern"):
            return self.extern_call(name, node)
        if name in _MATH or name in ("popcount", "clz"):
            operands, _ = self.args(node)
            if name in ("popcount", "clz") and (len(operands) != 1 or not _is_integer(operands[0].dtype)):
                raise self.error(f"T.{name} takes one integer", node)
            return self.intrinsic("tir." + name, operands, node)
        if name in ("gpu_warp_shuffle", "tvm_storage_sync", "isnullptr", "tvm_warp_activemask"):
            operands, _ = self.args(node)
            return self.intrinsic("tir." + name, operands, node)
        if name in STATEMENT_ONLY:
            raise self.error(f"T.{name}(...) is not an expression", node,
                             hint="it is a statement, a loop iterator or an assignment's right-hand side")
        return self.unsupported("tir." + name, node)


def _let_where(node: sx.Call) -> tuple[sx.Name, sx.Node] | None:
    """The one `(name, value)` of `T.Let(body, where={name: value})`, or None if the call is not that form."""
    if len(node.args) != 1 or len(node.kwargs) != 1 or node.kwargs[0].name != "where":
        return None
    where = node.kwargs[0].value
    if not isinstance(where, sx.DictLit) or len(where.items) != 1 or not isinstance(where.items[0][0], sx.Name):
        return None
    key, value = where.items[0]
    assert isinstance(key, sx.Name)
    return key, value


def _float_bits(value: float, bits: int) -> int:
    import struct
    fmt = {16: ("<e", "<H"), 32: ("<f", "<I"), 64: ("<d", "<Q")}[bits]
    return struct.unpack(fmt[1], struct.pack(fmt[0], float(value)))[0]


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


def _is_module_const_expr(e: Expr) -> bool:
    """An integer expression over literals and module constants only (a Python int at TVM parse time)."""
    if isinstance(e, ConstRef):
        return True
    if isinstance(e, BinOp) and dt.is_integral(e.dtype) and e.dtype != "bool":
        return all(isinstance(x, Const) or _is_module_const_expr(x) for x in (e.a, e.b))
    return False


def _logical_and(a: Expr, b: Expr, span) -> Expr:
    """`a and b` as TVM's C++ `&&` builds it: a constant left operand decides (TryConstFold<And>)."""
    if isinstance(a, Const):
        return b if a.value else a
    return ty.binop("and", a, b, span)


def _float_literal(node: sx.Node) -> float | None:
    """The value of a float literal `2.5` / `-2.5`, else None."""
    sign = 1.0
    if isinstance(node, sx.UnaryOp) and node.op in "-+":
        sign, node = (-1.0 if node.op == "-" else 1.0), node.operand
    if isinstance(node, sx.Num) and isinstance(node.value, float):
        return sign * node.value
    return None


class _VectorOperand(Exception):
    """A vector value (uint32x4 ...) met where a number is needed: the enclosing expression is not modeled."""

    def __init__(self, what: str, dtype: str):
        super().__init__(what)
        self.what, self.dtype = what, dtype


def _scalar(what: str, *operands: Expr) -> None:
    for e in operands:
        if e.dtype in dt.VECTOR_TYPES:
            raise _VectorOperand(what, e.dtype)


def _is_integer(dtype: str) -> bool:
    return dt.is_int(dtype) or dt.is_uint(dtype)


def _strip_source(node: sx.Node) -> sx.Node:
    """`x.source` is the buffer behind `x` (apache-tvm 0.27 prints a scalar's address as `x.source.data`)."""
    return node.value if isinstance(node, sx.Attr) and node.attr == "source" else node


def _is_one(e: Expr) -> bool:
    return isinstance(e, Const) and e.value == 1
