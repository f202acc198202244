"""Calls in expressions: `T.*` intrinsics, PTX (`T.ptx.*`, `T.ptx["..."]`, positional
modifiers with a marker), CUDA builtins (`T.cuda.*`), extern math and the lowered form's
`T.Let` / `access_ptr`.

Assumes the expression builder (`build_expr.ExprBuilder`) for operands, names and errors.
Guarantees: every PTX spelling becomes one `OpCall` with the canonical mnemonic and operands
coerced to the types the instruction declares; an extern math call becomes the TIRx intrinsic
it computes; an unknown call becomes `Unsupported` (named, reported where executed); misuse
raises `ParseError` with a span and a hint.
"""
from __future__ import annotations

import math

from . import dtypes as dt
from . import ops as opreg
from . import syntax as sx
from . import typing as ty
from .errors import ParseError
from .nodes import (Address, BinOp, Cast, Const, ConstRef, Expr, LetExpr, Load, OpCall, StrConst, Unsupported,
                    Var)
from .scope import BUILTIN, CONST, DIM, LET, NAMESPACE, Binding

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


class Calls:
    def __init__(self, ex):
        self.x = ex

    def error(self, what, node, hint="", expected=""):
        return self.x.error(what, node, hint=hint, expected=expected)
    def call(self, node: sx.Call) -> Expr:
        func = node.func
        # T.ptx["mnemonic"](...)
        if isinstance(func, sx.Subscript) and self.x.namespace_path(func.value) == ["ptx"]:
            if len(func.indices) != 1 or not isinstance(func.indices[0], sx.Str):
                raise self.error("T.ptx[...] takes one mnemonic string", func)
            return self.ptx_call(func.indices[0].value, node, positional=False)
        # buf.ptr_to([...])
        if isinstance(func, sx.Attr) and func.attr == "ptr_to" and isinstance(func.value, sx.Name):
            buf = self.x.buffer_named(func.value)
            if len(node.args) != 1 or node.kwargs:
                raise self.error("ptr_to takes one list of indices", node, expected=f"{buf.name}.ptr_to([i])")
            indices = self.x.physical(buf, self.x.index_list(node.args[0]), node)
            return Address(buf.name, indices, span=self.x.span(node))
        # buf.access_ptr("r", offset=k): the address of the element at flat offset k
        if isinstance(func, sx.Attr) and func.attr == "access_ptr" and isinstance(func.value, sx.Name):
            return self.access_ptr(self.x.buffer_named(func.value), node)
        path = self.x.namespace_path(func)
        if path is None:
            if isinstance(func, sx.Name):
                b = self.x.scope.lookup(func.id)
                if b is None:
                    raise self.x.undefined(func.id, func)
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
        bound = self.x.scope.lookup(key.id)
        if bound is not None and bound.kind not in (DIM, LET, NAMESPACE, BUILTIN):
            raise self.error(f"T.Let binds '{key.id}', which is a {bound.describe()}", key)
        value = self.x.number(self.x.expr(value_node), value_node, "T.Let", address_ok=True, void_ok=False)
        var = Var(self.x.fresh(key.id), value.dtype, span=self.x.span(key))
        with self.x.scope.block():
            self.x.scope.define(key.id, Binding(LET, key.pos, expr=var))
            body = self.x.number(self.x.expr(node.args[0]), node.args[0], "T.Let", address_ok=True, void_ok=False)
        return LetExpr(var, value, body, body.dtype, span=self.x.span(node))

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
        if lanes is not None and self.x.const_int(lanes, "content_lanes") != 1:
            raise self.error("access_ptr with content_lanes other than 1 is not modeled", lanes)
        offset = self.x.int_expr(given["offset"], "an access_ptr offset") if "offset" in given else Const(0, "int32")
        if "extent" in given:
            self.x.int_expr(given["extent"], "an access_ptr extent")
        if buf.name in self.x.swizzled:
            return Unsupported("access_ptr of a swizzled buffer", (offset,), span=self.x.span(node))
        indices: list[Expr] = []
        for extent in reversed(buf.shape[1:]):
            indices.insert(0, ty.binop("%", offset, extent, self.x.span(node)))
            offset = ty.binop("//", offset, extent, self.x.span(node))
        indices.insert(0, offset)
        return Address(buf.name, tuple(indices), span=self.x.span(node))

    def args(self, node: sx.Call, allow_kwargs: tuple[str, ...] = ()) -> tuple[list[Expr], dict[str, sx.Node]]:
        kwargs = {}
        for kw in node.kwargs:
            if kw.name not in allow_kwargs:
                raise self.error(f"unexpected keyword argument '{kw.name}'", kw,
                                 expected=", ".join(allow_kwargs) or "positional arguments only")
            kwargs[kw.name] = kw.value
        return [self.x.expr(a) for a in node.args], kwargs

    def one_operand(self, node: sx.Call, name: str) -> Expr:
        operands, _ = self.args(node)
        if len(operands) != 1:
            raise self.error(f"wrong operand count for {name}: expected 1, got {len(operands)}", node,
                             expected="one value", hint=f"call it as {name}(x)")
        return operands[0]

    def unsupported(self, name: str, node: sx.Call) -> Expr:
        args = []
        for a in node.args:
            try:
                args.append(self.x.expr(a))
            except ParseError:
                args.append(StrConst(type(a).__name__, span=self.x.span(a)))
        return Unsupported(name, tuple(args), span=self.x.span(node))

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
        operands = [self.x.expr(a) for a in args]
        pred = self.x.expr(pred_node) if pred_node is not None else None
        try:
            info = opreg.classify(op, tuple(o.dtype for o in operands))
        except opreg.OperandCountError as err:
            raise self.error(f"wrong operand count for {err.name}: expected {err.expected}, got {err.got}", node,
                             expected=err.layout, hint="check the operand list of this PTX instruction") from None
        if info is None:
            return Unsupported(op, tuple(operands), span=self.x.span(node))
        operands = self.coerce(info, operands, args, node)
        return OpCall(op, tuple(operands), pred, "void", span=self.x.span(node))

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
                          None, value.dtype, span=self.x.span(node))
        if name == "cvta_generic_to_shared" and len(node.args) == 1 and not node.kwargs:
            inner = self.x.expr(node.args[0])
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
                operands.append(self.x.expr(given[name]))
            elif name in defaults:
                operands.append(Const(defaults[name], "bool" if isinstance(defaults[name], bool) else "int32",
                                      span=self.x.span(node)))
            else:
                raise self.error(f"{full} needs its argument '{name}'", node, expected=", ".join(names))
        return operands

    def extern_call(self, name: str, node: sx.Call) -> Expr:
        """`T.call_pure_extern("float32", "expf", x)`: a CUDA math function is its TIRx intrinsic; any other
        external function stays unmodeled, named (`call_pure_extern __popc`)."""
        if len(node.args) < 2 or not isinstance(node.args[1], sx.Str):
            return self.unsupported("tir." + name, node)
        dtype = self.x.dtype(node.args[0], f"T.{name} result type")
        fname = node.args[1].value
        operands = [self.x.expr(a) for a in node.args[2:]]
        if fname in _EXTERN_BITS and len(operands) == 1 and _is_integer(operands[0].dtype) \
                and _is_integer(dtype):
            op, param = _EXTERN_BITS[fname]
            count = self.intrinsic("tir." + op, [ty.cast(param, operands[0], self.x.span(node))], node)
            return ty.cast(dtype, count, self.x.span(node))
        table = _EXTERN_MATH_F64 if dtype == "float64" else _EXTERN_MATH if dtype == "float32" else {}
        math_name = table.get(fname)
        if math_name is None or any(o.dtype != dtype for o in operands):
            return Unsupported(f"{name} {fname}", tuple(operands), dtype, span=self.x.span(node))
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
            return Unsupported(name, tuple(operands), span=self.x.span(node))
        result = "void"
        if info.result == "arg0":
            result = operands[0].dtype if operands else "void"
        elif info.result == "arg1":
            result = operands[1].dtype if len(operands) > 1 else "void"
        elif info.result == "arg2":
            result = operands[2].dtype if len(operands) > 2 else "void"
        elif info.result:
            result = info.result
        return OpCall(name, tuple(operands), None, result, span=self.x.span(node))

    def t_call(self, name: str, node: sx.Call) -> Expr:
        span = self.x.span(node)
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
            return ty.cast(canon, self.x.number(self.x.expr(arg), arg, f"T.{name}", address_ok=True), span)
        if name == "Cast":
            if len(node.args) != 2:
                raise self.error("T.Cast takes (dtype, value)", node)
            target = self.x.dtype(node.args[0])
            value = self.x.number(self.x.expr(node.args[1]), node.args[1], "T.Cast", address_ok=True)
            return value if value.dtype == target else Cast(target, value, span=span)
        if name == "cast":  # gen-1 `T.cast(16, "uint32")`: (value, dtype), folds a literal like T.uint32(16)
            kw = {k.name: k.value for k in node.kwargs}
            dtype_node = node.args[1] if len(node.args) == 2 else kw.get("dtype", kw.get("ty"))
            if len(node.args) not in (1, 2) or dtype_node is None or len(node.args) + len(kw) != 2:
                raise self.error("T.cast takes (value, dtype)", node, expected='T.cast(x, "uint32")',
                                 hint='T.Cast takes (dtype, value); T.cast takes (value, dtype)')
            target = self.x.dtype(dtype_node)
            return ty.cast(target, self.x.number(self.x.expr(node.args[0]), node.args[0], "T.cast", address_ok=True),
                           span)
        if name in ("Select", "if_then_else"):
            if len(node.args) != 3:
                raise self.error(f"T.{name} takes (condition, true_value, false_value)", node)
            c, t, f = (self.x.number(self.x.expr(a), a, f"T.{name}", address_ok=True) for a in node.args)
            return ty.select(c, t, f, name == "if_then_else", span, self.x.is_literal(node.args[1]),
                             self.x.is_literal(node.args[2]))
        if name == "Let":
            return self.let_expr(node)
        if name in _T_BINARY:
            if len(node.args) != 2:
                raise self.error(f"T.{name} takes two operands", node)
            a, b = (self.x.number(self.x.expr(x), x, f"T.{name}") for x in node.args)
            x, y = node.args
            if name in ("min", "max") and isinstance(x, sx.Name) and isinstance(y, sx.Name) and x.id == y.id \
                    and getattr(self.x.scope.lookup(x.id), "kind", None) != CONST:
                # TVM folds min(x, x) when both are the same object: one variable, used twice (a module constant
                # stays a named constant here; constant folding settles it, as it does for TVM's two numbers)
                return a
            literal = self.x.is_literal
            return ty.binop(_T_BINARY[name], a, b, span, literal(node.args[0]), literal(node.args[1]))
        if name == "Not":
            return ty.unary("not", self.x.number(self.one_operand(node, "T.Not"), node.args[0], "T.Not"), span)
        if name in ("IntImm", "FloatImm"):
            # the TVM printer's spelling of a constant no dtype constructor can carry, e.g.
            # T.IntImm("uint64", 18446744073709551615)
            if len(node.args) != 2 or node.kwargs:
                raise self.error(f"T.{name} takes (dtype, value)", node)
            target = self.x.dtype(node.args[0])
            value = self.x.expr(node.args[1])
            if not isinstance(value, Const):
                raise self.error(f"T.{name} takes a constant value", node.args[1])
            return ty.const(value.value, target, span)
        if name in ("bitwise_not", "BitwiseNot"):   # BitwiseNot: the TVM printer's spelling of ~ on a constant
            a = self.x.number(self.one_operand(node, "T." + name), node.args[0], f"T.{name}", void_ok=False)
            return ty.unary("~", a, span)
        if name == "abs":
            a = self.x.number(self.one_operand(node, "T.abs"), node.args[0], "T.abs", void_ok=False)
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
            return self.x.address(node.args[0], "T.address_of")
        if name == "reinterpret":
            if len(node.args) != 2:
                raise self.error("T.reinterpret takes (dtype, value)", node)
            target = self.x.dtype(node.args[0])
            value = self.x.number(self.x.expr(node.args[1]), node.args[1], "T.reinterpret", address_ok=True)
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
            ptr = self.x.number(self.x.expr(node.args[0]), node.args[0], "T.ptr_byte_offset", address_ok=True)
            if ptr.dtype != "handle":
                raise self.error("T.ptr_byte_offset takes a pointer first", node.args[0],
                                 hint="e.g. T.ptr_byte_offset(T.address_of(buf[0]), bytes, T.type_annotation(...))")
            offset = ty.cast("int64", self.x.int_expr(node.args[1], "a byte offset"))
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


def _is_integer(dtype: str) -> bool:
    return dt.is_int(dtype) or dt.is_uint(dtype)
