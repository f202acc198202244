"""Surface syntax -> IR: the module, the kernel function, statements.

Assumes `syntax.parse_syntax` output.  Guarantees a `PrimFunc` whose statements use
unique names for every binding (a repeated name becomes `name_1`, `name_2`, as the
TVM printer renames), whose launch is one `Launch` record however it was spelled
(`with T.launch_thread(...) as v`, `v = T.launch_thread(...)`, or scope ids such as
`T.warp_id([n])`), and whose module constants are evaluated with any overrides.
Every rejection is a `ParseError` with a span, what was expected, and a hint.
"""
from __future__ import annotations

from typing import cast

from . import dtypes as dt
from . import meta_expand
from . import syntax as sx
from . import typing as ty
from .build_expr import ExprBuilder
from .allocations import Allocations
from .launch import SCOPE_IDS, Launches
from .host import HostPrelude, is_device_entry
from .module import ModuleScan
from .signature import Signature
from .errors import ParseError
from .nodes import (Assert, BinOp, Break, Buffer, Const, ConstRef, Continue, DeclBuffer, Evaluate,
                    Expr, For, If, Let, Load, PrimFunc, Return, Stmt, Store, StrConst,
                    ThreadIndex, Var, While)
from .scope import BUFFER, BUILTIN, CONST, LET, NAMESPACE, PARAM, THREAD, Binding, Scope  # noqa: F401

_ALLOCS = ("alloc_tensor", "alloc_buffer", "decl_buffer", "decl_tensor", "alloc_local", "alloc_shared",
           "local_scalar", "decl_scalar", "shared_scalar")


def build(module: sx.Module, file: str, source: str, overrides: dict | None = None,
          kernel_name: str | None = None) -> PrimFunc:
    """The one entry point: a parsed module to a `PrimFunc` (of the kernel named `kernel_name`, else the only one)."""
    try:
        return _Builder(file, source, dict(overrides or {})).module(module, kernel_name)
    except RecursionError:  # too deep outside any statement (e.g. a parameter's annotation)
        raise ParseError("expression nested too deeply", sx.Pos(1, 1, 1, 1).span(file), source=source,
                         hint="split the expression into named `T.let` steps") from None


class _Builder:
    def __init__(self, file: str, source: str, overrides: dict):
        self.file = file
        self.source = source
        self.overrides = overrides
        self.scope = Scope()
        self.ex = ExprBuilder(self.scope, file, source)
        self.used: set[str] = set()
        self.buffers: dict[str, Buffer] = {}
        # byte offset of a decl_buffer's data pointer from its root: `X.data` is that pointer, without the
        # elem_offset= / byte_offset= the declaration adds (TVM keeps those in the buffer, not in its data)
        self.data_offsets: dict[str, Expr] = {}
        self.attrs: list[tuple[str, object]] = []
        self.loop_depth = 0
        self.mod = ModuleScan(self)      # imports, constants, symbolic dimensions, functions
        self.host = HostPrelude(self)    # statements before the device entry
        self.alloc = Allocations(self)   # buffer declarations, aliases, views, scalars
        self.launches = Launches(self)   # the launch's extents, however spelled
        self.sig = Signature(self)       # parameters and tensor types
        self.ex.dim = self.mod.dim
        self.ex.fresh = self.fresh
        self.ex.constant_values = lambda: self.mod.env
        self.scope.define("T", Binding(NAMESPACE, None))
        self.scope.define("range", Binding(BUILTIN, None))

    def error(self, what, node, hint="", expected="") -> ParseError:
        return self.ex.error(what, node, hint=hint, expected=expected)

    def too_deep(self, node) -> ParseError:
        return self.error("expression nested too deeply", node,
                          hint="split the expression into named `T.let` steps")

    def fresh(self, name: str) -> str:
        if name not in self.used:
            self.used.add(name)
            return name
        k = 1
        while f"{name}_{k}" in self.used:
            k += 1
        self.used.add(f"{name}_{k}")
        return f"{name}_{k}"

    # ------------------------------------------------------------------ module
    def module(self, m: sx.Module, kernel_name: str | None = None) -> PrimFunc:
        self.mod.scan(m)
        return self.function(self.mod.pick(kernel_name))

    # ------------------------------------------------------------------ function
    def function(self, fn: sx.FunctionDef) -> PrimFunc:
        fn = self.mod.compile_time_params(fn)
        self.mod.check_overrides()
        fn = meta_expand.Expander(self, self.mod).function(fn)
        # `x = T.int32()` declares a symbolic variable of the whole function: its name is reserved before the body
        # is built, so a let variable of that name met earlier in the text gets the name it gets when the
        # declaration comes first (as our print puts it: up front, a TypeVar)
        for n in meta_expand.syntax_nodes(fn):
            if isinstance(n, sx.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], sx.Name) \
                    and isinstance(n.value, sx.Call) and not n.value.args and not n.value.kwargs \
                    and self.ex.namespace_path(n.value.func) in (["int64"], ["int32"]):
                self.used.add(n.targets[0].id)
        name = self.fresh(fn.name)
        params = self.sig.params(fn)
        host, body = self.split_body(fn.body)
        launch = self.launches.make_launch(fn)
        params = self.sig.bound_params(params)   # after the body: it binds buffers to handle parameters
        return PrimFunc(name, tuple(params), tuple(self.mod.constants), launch, tuple(body), tuple(self.attrs),
                        self.source, self.file, tuple(self.mod.dims.values()), tuple(host),
                        span=self.ex.span(fn.header))

    def split_body(self, nodes) -> tuple[list[Stmt], list[Stmt]]:
        """Host prelude and device body: the statements before a device-entry statement are host code (all are
        device code when there is none, as in the forms that open with `T.launch_thread`)."""
        entry = next((k for k, n in enumerate(nodes) if is_device_entry(self, n)), None)
        if entry is None:
            return [], self.body(nodes)
        host: list[Stmt] = []
        for node in nodes[:entry]:
            try:
                host.extend(self.host.stmt(node))
            except RecursionError:
                raise self.too_deep(node) from None
        self.host.finish()
        return host, self.body(nodes[entry:])

    def splat(self, args) -> list:
        """Call arguments with `*xs` expanded (xs a tuple or list literal)."""
        out: list[sx.Node] = []
        for a in args:
            if isinstance(a, sx.Starred):
                if a.double or not isinstance(a.value, (sx.TupleLit, sx.ListLit)):
                    raise self.error("only a tuple or list literal can be splatted here", a)
                out.extend(a.value.elts)
            else:
                out.append(a)
        return out


    # ------------------------------------------------------------------ constants
    def const_value(self, e: Expr) -> int | None:
        if isinstance(e, Const):
            return int(e.value)
        if isinstance(e, ConstRef):
            v = self.mod.env.get(e.name)
            return int(v) if isinstance(v, (int, bool)) else None
        if isinstance(e, BinOp):  # `N * 32` over module constants
            a, b = self.const_value(e.a), self.const_value(e.b)
            if a is not None and b is not None:
                v = ty.eval_binop(e.op, a, b, e.a.dtype, e.dtype)
                return None if v is None or isinstance(v, bool) else int(v)
        return None

    # ------------------------------------------------------------------ statements
    def body(self, nodes) -> list[Stmt]:
        out: list[Stmt] = []
        for node in nodes:
            out.extend(self.stmt(node))
        return out

    def block(self, nodes) -> tuple[Stmt, ...]:
        with self.scope.block():
            return tuple(self.body(nodes))

    def stmt(self, node: sx.Node) -> list[Stmt]:
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"{type(node).__name__.lower()} statements are not supported in a kernel", node)
        try:
            return method(node)
        except RecursionError:  # the innermost statement with stack to spare reports it
            raise self.too_deep(node) from None

    def s_Pass(self, node) -> list[Stmt]:
        return []

    def s_Import(self, node) -> list[Stmt]:
        raise self.error("import inside the kernel", node, hint="put imports at module level")

    def s_FunctionDef(self, node) -> list[Stmt]:
        raise self.error("nested functions are not supported", node.header,
                         hint="inline the helper's statements into the kernel")

    def s_Return(self, node) -> list[Stmt]:
        if node.value is not None and not (isinstance(node.value, sx.Num) or
                                           (isinstance(node.value, sx.Lit) and node.value.value is None)):
            raise self.error("a kernel returns no value", node.value, hint="write `return` (or the printed `return 0`)")
        return [Return(span=self.ex.span(node))]

    def s_Break(self, node) -> list[Stmt]:
        if not self.loop_depth:
            raise self.error("'break' outside a loop", node, hint="'break' is only valid inside a for or while loop")
        return [Break(span=self.ex.span(node))]

    def s_Continue(self, node) -> list[Stmt]:
        if not self.loop_depth:
            raise self.error("'continue' outside a loop", node,
                             hint="'continue' is only valid inside a for or while loop")
        return [Continue(span=self.ex.span(node))]

    def s_Assert(self, node: sx.Assert) -> list[Stmt]:
        cond = self.ex.expr(node.test)
        message = ""
        if isinstance(node.msg, sx.Str):
            message = node.msg.value
        elif isinstance(node.msg, sx.TupleLit) and len(node.msg.elts) == 2 and isinstance(node.msg.elts[1], sx.ListLit):
            # printed form: assert c, ("RuntimeError", ["message"])
            message = "".join(e.value for e in node.msg.elts[1].elts if isinstance(e, sx.Str))
        elif node.msg is not None:
            raise self.error("assert message must be a string", node.msg)
        return [Assert(cond, message, span=self.ex.span(node))]

    def s_ExprStmt(self, node: sx.ExprStmt) -> list[Stmt]:
        value = node.value
        if isinstance(value, sx.Str):
            return []  # docstring
        if isinstance(value, sx.Call):
            path = self.ex.namespace_path(value.func)
            if path == ["device_entry"]:
                return []
            if path in (["func_attr"], ["attr"]):
                # T.attr({...}) as a statement (the 0.27 printer's device-entry marker) applies to the rest
                self.attrs.extend(self.attr_items(value))
                return []
            if path == ["evaluate"]:
                if len(value.args) != 1:
                    raise self.error("T.evaluate takes one value", value)
                e = self.ex.expr(value.args[0])
                # a constant (a literal, a module constant, a string like a docstring) has no effect; the
                # real parser drops it too
                return [] if isinstance(e, (Const, StrConst, ConstRef)) else [Evaluate(e, span=self.ex.span(node))]
            if path == ["static_assert"]:
                return self.static_assert(value)
            if path == ["launch_thread"]:
                raise self.error("T.launch_thread must be bound to a name", value,
                                 expected='with T.launch_thread("threadIdx.x", n) as tx:')
            if path and len(path) == 1 and path[0] in SCOPE_IDS:
                self.launches.scope_id(path[0], value)   # a bare scope id only sets launch extents
                return []
            if path and path[0] in _ALLOCS:
                raise self.error(f"T.{path[0]}(...) must be assigned to a name", value, expected="x = T.alloc_...(...)")
        return [Evaluate(self.ex.expr(value), span=self.ex.span(node))]

    def static_assert(self, call: sx.Call) -> list[Stmt]:
        """`T.static_assert(cond, msg)`: decided while the kernel is read, as TVM decides it."""
        if not 1 <= len(call.args) <= 2 or call.kwargs:
            raise self.error("T.static_assert takes a condition and a message", call,
                             expected='T.static_assert(N % 64 == 0, "N must be a multiple of 64")')
        from .canonical import fold_expr
        cond = fold_expr(self.ex.expr(call.args[0]), self.mod.env)
        if not isinstance(cond, Const):
            raise self.error("T.static_assert needs a condition known while the kernel is read", call.args[0],
                             hint="use module constants and literals; a runtime check is T.Assert / assert")
        if not cond.value:
            msg = call.args[1].value if len(call.args) > 1 and isinstance(call.args[1], sx.Str) else ""
            raise self.error(f"static assertion failed{': ' + msg if msg else ''}", call,
                             hint="the constants do not satisfy the kernel's own static_assert")
        return []

    def attr_items(self, call: sx.Call) -> list[tuple[str, object]]:
        items: list[tuple[str, object]] = []
        for arg in call.args:
            if isinstance(arg, sx.DictLit):
                for k, v in arg.items:
                    key = k.value if isinstance(k, sx.Str) else repr(k)
                    if isinstance(v, (sx.ListLit, sx.TupleLit)) and all(isinstance(e, sx.Str) for e in v.elts):
                        # e.g. kernel_launch_params (all strings: checked just above)
                        items.append((key, tuple(cast(sx.Str, e).value for e in v.elts)))
                        continue
                    val: object
                    try:
                        e = self.ex.expr(v)
                        val = e.value if isinstance(e, Const) else e
                    except ParseError:
                        val = None
                    items.append((key, val))
        return items

    def s_With(self, node: sx.With) -> list[Stmt]:
        for item in node.items:
            ctx = item.context
            path = self.ex.namespace_path(ctx.func) if isinstance(ctx, sx.Call) else None
            if path in (["device_entry"], ["kernel"]):
                if item.name is not None:
                    raise self.error(f"T.{path[0]}() binds no name", item)
                continue
            if path == ["launch_thread"] and isinstance(ctx, sx.Call):    # (a path is only set for a call)
                if item.name is None:
                    raise self.error("T.launch_thread needs a name", item,
                                     expected='with T.launch_thread("threadIdx.x", n) as tx:')
                index = self.launches.launch_call(ctx)
                self.define_thread(item.name, index)
                continue
            if path == ["attr"] and isinstance(ctx, sx.Call):
                self.attrs.extend(self.attr_items(ctx))
                continue
            raise self.error("unknown context manager", ctx,
                             expected="T.device_entry(), T.launch_thread(tag, n) or T.attr({...})")
        return self.body(node.body)

    def define_thread(self, name_node: sx.Name, index: Expr) -> None:
        name = name_node.id
        existing = self.scope.lookup(name)
        if existing is not None and existing.kind not in (NAMESPACE, BUILTIN):
            raise self.error(f"'{name}' is already defined", name_node)
        self.used.add(name)
        self.scope.define(name, Binding(THREAD, name_node.pos, expr=index))

    def s_If(self, node: sx.If) -> list[Stmt]:
        cond = self.ex.expr(node.test)
        then = self.block(node.body)
        orelse = self.block(node.orelse)
        return [If(cond, then, orelse, span=self.ex.span(node))]

    def s_While(self, node: sx.While) -> list[Stmt]:
        cond = self.ex.expr(node.test)
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        return [While(cond, body, span=self.ex.span(node))]

    def s_For(self, node: sx.For) -> list[Stmt]:
        it = node.iter
        if not isinstance(it, sx.Call):
            raise self.error("a for loop iterates over range(...), T.serial(...) or T.unroll(...)", it)
        rng = self.scope.lookup("range")
        if isinstance(it.func, sx.Name) and it.func.id == "range" and rng is not None and rng.kind == BUILTIN:
            kind, ranges = "serial", [self.range_args(it, allow_step=True)]
        else:
            path = self.ex.namespace_path(it.func)
            if path in (["serial"], ["unroll"]):
                kind, ranges = path[0], [self.range_args(it, allow_step=False)]
            elif path == ["grid"]:
                kind = "serial"
                extents = [self.ex.int_expr(a, "a loop extent") for a in it.args]
                ranges = [(Const(0, e.dtype), e, Const(1, "int32")) for e in extents]   # as range(e)
            elif path == ["thread_binding"]:
                return self.thread_binding(node, it)
            elif path in (["parallel"], ["vectorized"]):
                raise self.error(f"T.{path[0]} loops are not supported in a kernel body", it,
                                 hint="use range(...), T.serial(...) or T.unroll(...)")
            else:
                raise self.error("a for loop iterates over range(...), T.serial(...) or T.unroll(...)", it)
        if len(node.targets) != len(ranges):
            raise self.error(f"{len(node.targets)} loop variable(s) for {len(ranges)} range(s)", node)
        return [self.loop(node, list(node.targets), ranges, kind)]

    def thread_binding(self, node: sx.For, call: sx.Call) -> list[Stmt]:
        """`for tx in T.thread_binding(n, thread="threadIdx.x"):` (or `(0, n, thread=...)`) launches the
        thread dimension and binds its index, as `with T.launch_thread("threadIdx.x", n) as tx:` does."""
        if len(node.targets) != 1:
            raise self.error("T.thread_binding binds one loop variable", node)
        args = list(call.args)
        kw = {k.name: k.value for k in call.kwargs}
        unknown = set(kw) - {"thread", "annotations"}
        if unknown:
            raise self.error(f"unknown T.thread_binding argument '{sorted(unknown)[0]}'", call,
                             expected='T.thread_binding(n, thread="threadIdx.x")')
        tag = kw.get("thread")
        if tag is None and args and isinstance(args[-1], sx.Str):
            tag = args.pop()
        if tag is None or len(args) not in (1, 2):
            raise self.error("T.thread_binding takes an extent (or begin, end) and a thread tag", call,
                             expected='T.thread_binding(n, thread="threadIdx.x")')
        extent = args[-1]
        if len(args) == 2:
            begin = self.ex.const_int(args[0], "a thread_binding start")
            if begin != 0:
                raise self.error("T.thread_binding must start at 0", args[0],
                                 hint="bind the whole dimension and offset the index in the body")
        index = self.launches.bind_launch(tag, extent, call)
        with self.scope.block():
            self.define_thread(node.targets[0], index)
            return self.body(node.body)

    def loop(self, node: sx.For, targets: list[sx.Name], ranges, kind: str) -> Stmt:
        target = targets[0]
        start, stop, step = ranges[0]
        vdtype = _loop_dtype(start.dtype, stop.dtype) if dt.is_integral(start.dtype) else "int32"
        start, stop, step = ty.cast(vdtype, start), ty.cast(vdtype, stop), ty.cast(vdtype, step)
        with self.scope.block():
            name = self.fresh(target.id)
            var = Var(name, vdtype, span=self.ex.span(target))
            self.scope.define(target.id, Binding(LET, target.pos, expr=var, loop=True))
            self.loop_depth += 1
            try:
                if len(targets) > 1:
                    body: tuple[Stmt, ...] = (self.loop(node, targets[1:], ranges[1:], kind),)
                else:
                    body = tuple(self.body(node.body))
            finally:
                self.loop_depth -= 1
        return For(var, start, stop, step, kind, body, span=self.ex.span(node))

    def range_args(self, call: sx.Call, allow_step: bool):
        args = [self.ex.int_expr(a, "a loop bound") for a in call.args]
        for kw in call.kwargs:
            # T.serial(n, unroll=False), T.serial(a, b, unroll=4, step=8192): unroll is a hint
            if kw.name == "step" and not allow_step and len(args) in (1, 2):
                if len(args) == 1:
                    args.insert(0, ty.cast(args[0].dtype, Const(0, "int32")))
                args.append(self.ex.int_expr(kw.value, "a loop step"))
            elif kw.name not in ("unroll", "annotations"):
                raise self.error("unexpected keyword argument in a loop range", kw,
                                 expected="step=, unroll= (a hint)")
        if len(args) == 3 and not allow_step:
            allow_step = True
        if len(args) == 1:   # the implicit start takes the extent's type: range(u8) counts in uint8, as in TVM
            return Const(0, args[0].dtype), args[0], Const(1, "int32")
        if len(args) == 2:
            return args[0], args[1], Const(1, "int32")
        if len(args) == 3 and allow_step:
            if isinstance(args[2], Const) and args[2].value == 0:
                raise self.error("loop step must not be zero", call.args[2])
            return args[0], args[1], args[2]
        raise self.error("wrong number of loop bounds", call,
                         expected="range(stop), range(start, stop[, step]), T.serial(stop) or T.unroll(start, stop)")

    # -- assignments
    def s_Assign(self, node: sx.Assign) -> list[Stmt]:
        if len(node.targets) != 1:
            raise self.error("chained assignment is not supported", node, hint="assign one target per statement")
        target, value = node.targets[0], node.value
        span = self.ex.span(node)
        if isinstance(target, sx.TupleLit):
            return self.unpack(target, value, span)
        if isinstance(target, sx.Subscript):
            buf, indices = self.ex.element(target)
            return [Store(buf.name, indices, self.store_value(buf, value), span=span)]
        if not isinstance(target, sx.Name):
            raise self.error("cannot assign to this expression", target, hint="assign to a name or a buffer element")
        if isinstance(value, sx.Call):
            path = self.ex.namespace_path(value.func)
            if path == ["launch_thread"]:
                index = self.launches.launch_call(value)
                self.define_thread(target, index)
                return []
            if path and len(path) == 1 and path[0] in SCOPE_IDS:
                return self.unpack(sx.TupleLit(target.pos, (target,)), value, span)
            if path and len(path) == 1 and path[0] in _ALLOCS:
                return self.alloc.allocate(target, path[0], value, span)
            if isinstance(value.func, sx.Attr) and value.func.attr == "view" and isinstance(value.func.value, sx.Name):
                return self.alloc.view(target, value, span)
            if path in (["int64"], ["int32"]) and not value.args and not value.kwargs:
                self.mod.dim(target.id, target)     # `n = T.int64()`: the lowered form's symbolic extent
                return []
        existing = self.scope.lookup(target.id)
        if existing is None or existing.kind in (NAMESPACE, BUILTIN):
            e = self.ex.expr(value)
            if isinstance(e, (Var, ThreadIndex)):
                # `z = tx` names the variable itself (Python binds the name, TVM sees no let)
                self.scope.define(target.id, Binding(LET, target.pos, expr=e))
                return []
            return [self.let(target, e, span, annotated=False)]
        if existing.kind == BUFFER:
            buf = existing.bound_buffer()
            if existing.scalar or (buf.scope == "local" and len(buf.shape) == 1 and isinstance(buf.shape[0], Const)
                                   and buf.shape[0].value == 1):
                return [Store(buf.name, (Const(0, "int32"),), self.store_value(buf, value), span=span)]
            raise self.error(f"cannot assign to buffer '{target.id}'", target,
                             hint=f"store to an element, e.g. {target.id}[i] = ...")
        if existing.kind == LET:
            what = "loop variable" if existing.loop else "T.let"
            line = cast(sx.Pos, existing.pos).line     # a LET binding is defined at its target's position
            raise self.error(f"assignment to {what} '{target.id}'", target,
                             hint=f"'{target.id}' is immutable (bound at line {line}); for a mutable "
                                  f"variable declare `{target.id} = T.local_scalar(T.int32)` and assign to it, or bind "
                                  f"a new name")
        raise self.error(f"cannot assign to {existing.describe()} '{target.id}'", target,
                         hint="bind a new name instead")

    def unpack(self, targets: sx.TupleLit, value: sx.Node, span) -> list[Stmt]:
        """`a, b = T.cta_id([m, n])` (one name per extent), `a, b = x, y` (a tuple of values)."""
        names = [t for t in targets.elts if isinstance(t, sx.Name)]
        if len(names) != len(targets.elts):
            raise self.error("unpack into names only", targets, hint="assign to names, e.g. `bx, by = ...`")
        path = self.ex.namespace_path(value.func) if isinstance(value, sx.Call) else None
        if path and len(path) == 1 and path[0] in SCOPE_IDS and isinstance(value, sx.Call):
            values = self.launches.scope_id(path[0], value)
        elif isinstance(value, sx.TupleLit):
            values = tuple(self.ex.expr(v) for v in value.elts)
        else:
            raise self.error("only a scope id or a tuple of values can be unpacked here", value,
                             expected="bx, by = T.cta_id([m, n])")
        if len(values) != len(names):
            raise self.error(f"{len(names)} name(s) for {len(values)} value(s)", targets)
        out: list[Stmt] = []
        for t, v in zip(names, values):
            existing = self.scope.lookup(t.id)
            if existing is not None and existing.kind not in (NAMESPACE, BUILTIN):
                raise self.error(f"'{t.id}' is already defined", t)
            out.append(self.let(t, v, span, annotated=False))
        return out

    def store_value(self, buf: Buffer, node: sx.Node) -> Expr:
        return ty.cast(buf.dtype, self.ex.number(self.ex.expr(node), node, "a store", address_ok=True))

    def let(self, target: sx.Name, value: Expr, span, annotated: bool, dtype: str | None = None) -> Let:
        if value.dtype in ("void", "string"):
            raise self.error(f"'{target.id}' is bound to something without a value", target,
                             hint="only expressions with a value can be bound with T.let")
        if dtype is not None:
            value = ty.cast(dtype, value)
        name = self.fresh(target.id)
        var = Var(name, value.dtype, span=self.ex.span(target))
        self.scope.define(target.id, Binding(LET, target.pos, expr=var, annotated=annotated))
        return Let(var, value, span=span)

    def s_AnnAssign(self, node: sx.AnnAssign) -> list[Stmt]:
        target = node.target
        if not isinstance(target, sx.Name):
            raise self.error("only a name can be annotated", target)
        existing = self.scope.lookup(target.id)
        if existing is not None and existing.kind not in (NAMESPACE, BUILTIN):
            if existing.kind == LET:
                line = cast(sx.Pos, existing.pos).line     # a LET binding is defined at its target's position
                raise self.error(f"assignment to T.let '{target.id}'", target,
                                 hint=f"'{target.id}' is immutable (bound at line {line}); "
                                      "bind a new name")
            raise self.error(f"'{target.id}' is already defined", target)
        ann = node.annotation
        span = self.ex.span(node)
        is_let = False
        let_dtype = None
        if isinstance(ann, sx.Subscript) and self.ex.namespace_path(ann.value) == ["let"]:
            is_let = True
            if len(ann.indices) != 1:
                raise self.error("T.let takes one dtype", ann, expected="T.let[T.int32]")
            index = ann.indices[0]
            if isinstance(index, sx.Call) and \
                    self.ex.namespace_path(index.func) in (["Ptr"], ["handle"], ["TensorMap"]):
                # T.let[T.Ptr(T.uint64, "shared")], T.let[T.handle("uint64", "shared")]: an address
                let_dtype = "handle"
            else:
                let_dtype = self.ex.dtype(index)
        elif self.ex.namespace_path(ann) == ["let"]:
            is_let = True
        if is_let:
            if node.value is None:
                raise self.error(f"T.let '{target.id}' needs a value", node, expected=f"{target.id}: T.let = <expr>")
            return [self.let(target, self.ex.expr(node.value), span, annotated=True, dtype=let_dtype)]
        # `x: T.int32 = e` declares a mutable one-element local, as the TVM front end does
        dtype = self.ex.dtype(ann, "type annotation")
        buf = self.alloc.declare(target, (Const(1, "int32"),), dtype, "local", node)
        out: list[Stmt] = [DeclBuffer(buf, span=span)]
        if node.value is not None:
            out.append(Store(buf.name, (Const(0, "int32"),), self.store_value(buf, node.value), span=span))
        return out

    def s_AugAssign(self, node: sx.AugAssign) -> list[Stmt]:
        target = node.target
        span = self.ex.span(node)
        if isinstance(target, sx.Subscript):
            buf, indices = self.ex.element(target)
        elif isinstance(target, sx.Name):
            b = self.scope.lookup(target.id)
            if b is None:
                raise self.ex.undefined(target.id, target)
            if b.kind != BUFFER or not (b.scalar or b.bound_buffer().scope == "local"):
                what = "T.let" if b.kind == LET and not b.loop else b.describe()
                raise self.error(f"assignment to {what} '{target.id}'", target,
                                 hint="only mutable locals (T.local_scalar) and buffer elements can be updated")
            buf, indices = b.bound_buffer(), (Const(0, "int32"),)
        else:
            raise self.error("cannot assign to this expression", target)
        current = Load(buf.name, indices, buf.dtype, span=self.ex.span(target))
        if node.op == "/" and not dt.is_float(buf.dtype):
            raise self.error("'/=' on integers is ambiguous", node, hint="use '//=' or T.truncdiv")
        if node.op == "**":
            raise self.error("operator '**=' is not supported in TIRx", node, hint="write the product out")
        op = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "&": "&", "|": "|", "^": "^",
              "<<": "<<", ">>": ">>"}[node.op]
        rhs = self.ex.number(self.ex.expr(node.value), node.value, f"'{node.op}='")
        value = ty.binop(op, current, rhs, span, False, self.ex.is_literal(node.value))
        return [Store(buf.name, indices, ty.cast(buf.dtype, value), span=span)]

    # -- buffers

def _loop_dtype(a: str, b: str) -> str:
    """The loop variable's type as TVM gives it for range(start, stop): the wider width, unsigned if
    either bound is (so range(0, u8) counts in uint32 and range(i16, u8) in uint16)."""
    if a == b or not (dt.is_integral(b) and b != "bool"):
        return a
    bits = max(dt.bits(a), dt.bits(b))
    return f"{'u' if dt.is_uint(a) or dt.is_uint(b) else ''}int{bits}"
