"""The kernel signature: parameters, and the tensor types that declare buffers.

Assumes the statement builder (`build._Builder`) hands over the kernel's parameters once, before the
body, and calls `tensor_type` / `scope_name` / `align` wherever a buffer type is spelled (a parameter's
annotation, `T.alloc_tensor(ty_args=[...])`, views).  Guarantees: every parameter has a type and a
name of its own (no defaults, no clash with a module constant); scalar parameters are bound before
buffer ones, so a buffer extent may name a later scalar parameter (the 0.27 printer's
`k: T.Buffer(("total_k", 64), ...), ..., total_k: T.int32`); a handle parameter that
`T.match_buffer` / `T.decl_buffer(data=ptr)` binds becomes that global buffer in the `PrimFunc`'s
parameters (`bind_param_buffer`, `bound_params`).
"""
from __future__ import annotations

from typing import cast

from . import syntax as sx
from .nodes import Buffer, Const, Param, Var
from .scope import BUFFER, BUILTIN, NAMESPACE, PARAM, Binding

_SCOPES = ("shared", "shared.dyn", "local", "global", "param")


class Signature:
    def __init__(self, builder):
        self.b = builder
        self.param_buffers: dict[str, Buffer] = {}   # handle parameter -> the global buffer bound to it

    def params(self, fn: sx.FunctionDef) -> list[Param]:
        seen: dict[str, sx.Param] = {}
        for p in fn.params:
            if p.name in seen:
                raise self.b.error(f"duplicate parameter '{p.name}'", p,
                                   hint=f"rename one of them; the first is at line {seen[p.name].pos.line}")
            seen[p.name] = p
            if p.default is not None:
                raise self.b.error(f"parameter '{p.name}' has a default value", p.default,
                                   hint="kernel parameters take no defaults; use a module constant")
            if p.annotation is None:
                raise self.b.error(f"parameter '{p.name}' has no type", p,
                                   hint=f"annotate it, e.g. {p.name}: T.Tensor((n,), T.float32) or {p.name}: T.int32")
            if p.name in self.b.used:
                raise self.b.error(f"parameter '{p.name}' has the same name as a module constant", p)
            self.b.used.add(p.name)
        # scalar parameters first: the 0.27 printer writes a buffer extent that names a later scalar parameter
        # as a string (`k: T.Buffer(("total_k", 64), ...), ..., total_k: T.int32`), and it is that parameter
        built = {p.name: self.param(p) for p in fn.params if not isinstance(p.annotation, sx.Call)}
        built.update({p.name: self.param(p) for p in fn.params if isinstance(p.annotation, sx.Call)})
        return [built[p.name] for p in fn.params]

    def param(self, p: sx.Param) -> Param:
        ann = cast(sx.Node, p.annotation)       # params() has rejected a parameter without a type
        span = self.b.ex.span(p)
        if isinstance(ann, sx.Call):
            path = self.b.ex.namespace_path(ann.func)
            if path in (["Tensor"], ["Buffer"]):
                buf = self.tensor_type(ann, p.name, "global")
                buf = Buffer(p.name, buf.shape, buf.dtype, "global", align=buf.align, layout=buf.layout, span=span)
                self.b.buffers[p.name] = buf
                self.b.scope.define(p.name, Binding(BUFFER, p.pos, buffer=buf))
                return Param(p.name, "buffer", buf.dtype, buf, span=span)
            if path in (["Ptr"], ["handle"], ["TensorMap"]):
                # a pointer (T.handle("float16", "global") in the lowered form: a buffer binds to it) or a
                # tensor map (T.TensorMap(), a CUtensorMap passed by value)
                return self._handle_param(p, span)
        path = self.b.ex.namespace_path(ann)
        if path == ["handle"]:
            return self._handle_param(p, span)
        dtype = self.b.ex.dtype(ann, "parameter type")
        var = Var(p.name, dtype, span=span)
        self.b.scope.define(p.name, Binding(PARAM, p.pos, expr=var))
        return Param(p.name, "scalar", dtype, span=span)

    def _handle_param(self, p: sx.Param, span) -> Param:
        var = Var(p.name, "handle", span=span)
        self.b.scope.define(p.name, Binding(PARAM, p.pos, expr=var))
        return Param(p.name, "handle", "handle", span=span)

    def bound_params(self, params: list[Param]) -> list[Param]:
        """The parameters, a handle parameter that a match_buffer / decl_buffer(data=ptr) turned into a global
        buffer replaced by that buffer's parameter."""
        return [Param(p.name, "buffer", self.param_buffers[p.name].dtype, self.param_buffers[p.name], span=p.span)
                if p.name in self.param_buffers else p for p in params]

    def bind_param_buffer(self, handle: sx.Name, target: sx.Name, shape, dtype: str, align: int, at) -> Buffer:
        """`target` is the global buffer behind handle parameter `handle` (T.match_buffer, or
        T.decl_buffer(data=ptr) in the lowered form); a second such buffer is an alias of the first."""
        b = self.b.scope.lookup(handle.id)
        if b is None:
            raise self.b.ex.undefined(handle.id, handle)
        if b.kind != PARAM or b.bound_expr().dtype != "handle":
            raise self.b.error(f"'{handle.id}' is a {b.describe()}, not a handle parameter", handle,
                               hint="declare the parameter as `name: T.handle`")
        first = self.param_buffers.get(handle.id)
        if first is not None:
            return self.b.alloc.declare(target, shape, dtype, "global", at, first.name, Const(0, "int64"), align)
        existing = self.b.scope.lookup(target.id)
        if existing is not None and existing.kind not in (NAMESPACE, BUILTIN):
            raise self.b.error(f"'{target.id}' is already defined", target)
        self.b.alloc.check_extents(shape, at)
        name = target.id if target.id == handle.id else self.b.fresh(target.id)
        buf = Buffer(name, tuple(shape), dtype, "global", align=align, span=self.b.ex.span(at))
        self.param_buffers[handle.id] = buf
        self.b.buffers[name] = buf
        self.b.scope.define(target.id, Binding(BUFFER, target.pos, buffer=buf))
        return buf

    def tensor_type(self, call: sx.Call, owner: str, default_scope: str) -> Buffer:
        """`T.Tensor(shape, dtype, scope=...)` / `T.Buffer(shape, "dtype")` -> an unnamed Buffer."""
        args = list(call.args)
        kw = {k.name: k.value for k in call.kwargs}
        shape_node = args[0] if args else kw.pop("shape", None)
        dtype_node = args[1] if len(args) > 1 else kw.pop("dtype", None)
        shape = self.b.ex.shape(shape_node, owner, call)
        self.b.alloc.check_extents(shape, shape_node if shape_node is not None else call)
        dtype = self.b.ex.dtype(dtype_node) if dtype_node is not None else "float32"
        scope = self.scope_name(kw.pop("scope", None), default_scope, owner, call)
        align_node = kw.pop("align", None)
        data_alignment = kw.pop("data_alignment", None)   # the TVM printer's name for align=
        align = self.align(align_node if align_node is not None else data_alignment)
        layout = self.b.alloc.layout(kw.pop("layout", None))
        for extra in kw:
            if extra not in ("strides", "elem_offset", "offset_factor", "buffer_type", "axis_separators"):
                raise self.b.error(f"unexpected argument '{extra}' in a tensor type", call)
        return Buffer(owner, shape, dtype, scope, align=align, layout=layout)

    def scope_name(self, node, default: str, owner: str, at) -> str:
        if node is None:
            return default
        if not isinstance(node, sx.Str):
            raise self.b.error("scope must be a string", node, expected='"shared", "shared.dyn" or "local"')
        if node.value not in _SCOPES:
            raise self.b.error(f"unknown storage scope '{node.value}' for '{owner}'", node,
                               expected='"shared", "shared.dyn", "local" or "global"',
                               hint="TMEM is allocated with tcgen05.alloc, not as a buffer" if node.value == "tmem"
                               else "")
        return node.value

    def align(self, node) -> int:
        if node is None:
            return 0
        e = self.b.ex.expr(node)
        if not isinstance(e, Const) or isinstance(e.value, float) or int(e.value) < 0:
            raise self.b.error("align must be a non-negative integer literal", node)
        return int(e.value)
