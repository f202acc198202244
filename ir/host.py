"""The host prelude: what a kernel function does before its device entry.

TVM's kernels (and the 0.27 printer) put host code before the device part: tensor maps
encoded from the kernel's own buffers, buffers matched to handle parameters, integer
bindings and assertions.  Accepted statements (anything else is a `ParseError` naming it):

- `A = T.match_buffer(A_ptr, shape, dtype=..., align=...)` on a `T.handle` parameter: the
  parameter becomes the global buffer `A`;
- `m: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)` (apache-tvm-tirx; the 0.27
  printer's `T.tvm_stack_alloca` with `T.let[T.handle("tensormap")]` or `T.let[T.TensorMap()]`
  too) followed by `T.cuda.tensormap_encode_tiled(m, base, dims..., strides..., box...,
  elem_strides..., descriptor_dtype=..., rank=..., swizzle=...)` (or `T.tensormap_encode_tiled`,
  also with the four lists), or `T.call_packed("runtime.cuTensorMapEncodeTiled", m, dtype, rank,
  base, dims..., strides..., box..., elem_strides..., interleave, swizzle, l2, oob_fill)` (or
  `T.tvm_call_packed(...)`): a `TensorMapEncode` over the global buffer `A` of the base
  (`A.data`, `T.handle_add_byte_offset(A.data, bytes)`, `A.ptr_to([i, j])` or
  `T.address_of(A[i, j])`); NumSim checks the map's cuTensorMapEncodeTiled limits before the
  launch (modelcheck/numsim/tensormap.py: bind_host_maps);
- integer bindings (`n: T.let[T.int32] = ...`, `n = ...`) and `assert` statements;
- `T.func_attr({...})` and docstrings.
Guarantees: `stmt(node)` returns the host IR statements (`Let`, `Assert`, `TensorMapEncode`)
or binds a parameter buffer; a tensor map's variable is a handle `Var` the device part uses.
"""
from __future__ import annotations

from typing import TypeGuard

from . import dtypes as dt
from . import syntax as sx
from . import typing as ty
from .nodes import Address, Const, Expr, Stmt, TensorMapEncode, ThreadIndex, Var, walk
from .scope import LET, Binding

ENCODE_FN = "runtime.cuTensorMapEncodeTiled"


class HostPrelude:
    def __init__(self, builder):
        self.b = builder
        self.maps: dict[str, Var] = {}        # tensor-map variables declared, not yet encoded
        self.declared: dict[str, sx.Name] = {}   # where each was declared
        self.encoded: set[str] = set()

    def error(self, what, node, hint="", expected=""):
        return self.b.error(what, node, hint=hint, expected=expected)

    def stmt(self, node: sx.Node) -> list[Stmt]:
        b = self.b
        if isinstance(node, sx.ExprStmt):
            value = node.value
            if isinstance(value, sx.Str):
                return []
            if isinstance(value, sx.Call):
                path = b.ex.namespace_path(value.func)
                if path == ["func_attr"]:
                    b.attrs.extend(b.attr_items(value))
                    return []
                if path in (["call_packed"], ["tvm_call_packed"]):
                    return [self.call_packed(value)]
                if path in (["tensormap_encode_tiled"], ["cuda", "tensormap_encode_tiled"]):
                    return [self.encode_tiled(value)]
                if path == ["evaluate"] and len(value.args) == 1 and isinstance(value.args[0], sx.Call):
                    return self.stmt(sx.ExprStmt(node.pos, value.args[0]))
        elif isinstance(node, sx.AnnAssign) and isinstance(node.target, sx.Name) and node.value is not None:
            if self.is_stack_alloca(node.value):
                return self.declare_map(node.target, node.value)
            return self.host_only(b.s_AnnAssign(node), node)     # `n: T.let[T.int32] = ...`
        elif isinstance(node, sx.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], sx.Name):
            target, value = node.targets[0], node.value
            if self.is_stack_alloca(value):
                return self.declare_map(target, value)
            if isinstance(value, sx.Call) and b.ex.namespace_path(value.func) == ["match_buffer"]:
                self.match_buffer(target, value)
                return []
            return self.host_only(b.s_Assign(node), node)        # an integer binding
        elif isinstance(node, sx.Assert):
            return b.s_Assert(node)
        elif isinstance(node, sx.Pass):
            return []
        raise self.error("this statement is not supported in the host part of the kernel", node,
                         hint="before the device entry a kernel may match buffers, encode tensor maps "
                              "(T.stack_alloca(\"tensormap\", 1) + T.cuda.tensormap_encode_tiled or "
                              "runtime.cuTensorMapEncodeTiled), bind integers and assert; move device code after "
                              "T.device_entry()")

    def host_only(self, stmts: list[Stmt], node: sx.Node) -> list[Stmt]:
        """Host bindings: no thread, warp or CTA index exists before the launch (`v = T.cta_id([n])` there would
        leave the device part a host variable holding a device value)."""
        for s in stmts:
            value = getattr(s, "value", None)
            if value is not None and any(isinstance(n, ThreadIndex) for n in walk(value)):
                raise self.error("a thread, warp or CTA index is used in the host part of the kernel", node,
                                 hint="bind it after the device entry (T.attr({\"tirx.device_entry\": ...}) or "
                                      "T.device_entry()); before it there is no launch yet")
        return stmts

    # ------------------------------------------------------------------ buffers
    def match_buffer(self, target: sx.Name, call: sx.Call) -> None:
        """`A = T.match_buffer(A_ptr, shape, dtype=..., align=...)`: the handle parameter becomes buffer A."""
        b = self.b
        if not call.args or not isinstance(call.args[0], sx.Name):
            raise self.error("T.match_buffer takes a handle parameter first", call,
                             expected='A = T.match_buffer(A_ptr, (M, K), dtype="float16")')
        handle = call.args[0]
        kw = {k.name: k.value for k in call.kwargs}
        shape_node = call.args[1] if len(call.args) > 1 else kw.pop("shape", None)
        dtype_node = call.args[2] if len(call.args) > 2 else kw.pop("dtype", None)
        shape = b.ex.shape(shape_node, target.id, call)
        b.alloc.check_extents(shape, shape_node if shape_node is not None else call)
        dtype = b.ex.dtype(dtype_node) if dtype_node is not None else "float32"
        align = b.sig.align(kw.pop("align", None))
        for extra in kw:
            if extra not in ("strides", "elem_offset", "offset_factor", "buffer_type", "axis_separators", "layout",
                             "scope"):
                raise self.error(f"unexpected argument '{extra}' to T.match_buffer", call)
        b.sig.bind_param_buffer(handle, target, shape, dtype, align, call)

    # ------------------------------------------------------------------ tensor maps
    def is_stack_alloca(self, value) -> TypeGuard[sx.Call]:
        return isinstance(value, sx.Call) and self.b.ex.namespace_path(value.func) in (["tvm_stack_alloca"],
                                                                                     ["stack_alloca"])

    def declare_map(self, target: sx.Name, call: sx.Call) -> list[Stmt]:
        if not (call.args and isinstance(call.args[0], sx.Str) and call.args[0].value == "tensormap"):
            raise self.error("only tensor maps are allocated on the host stack here", call,
                             expected='T.stack_alloca("tensormap", 1)')
        if len(call.args) != 2 or self.b.ex.const_int(call.args[1], "a stack allocation count") != 1:
            raise self.error("a tensor map is allocated one at a time", call,
                             expected='T.stack_alloca("tensormap", 1)')
        b = self.b
        name = b.fresh(target.id)
        var = Var(name, "handle", span=b.ex.span(target))
        b.scope.define(target.id, Binding(LET, target.pos, expr=var, annotated=True))
        self.maps[target.id] = var
        self.declared[target.id] = target
        return []

    def finish(self) -> None:
        """Every tensor map the prelude allocates is encoded there: the device would read an uninitialized
        descriptor otherwise (and the kernel has no other place to encode it)."""
        for name, target in self.declared.items():
            if self.maps[name].name not in self.encoded:
                raise self.error(f"tensor map '{name}' is allocated but never encoded", target,
                                 hint=f"encode it before the device entry: T.call_packed(\"{ENCODE_FN}\", {name}, "
                                      f"...) or T.cuda.tensormap_encode_tiled({name}, ...)")

    def map_var(self, node) -> Var:
        if not isinstance(node, sx.Name) or node.id not in self.maps:
            raise self.error("the first argument names a tensor map declared with T.tvm_stack_alloca", node,
                             expected='m: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)')
        return self.maps[node.id]

    def call_packed(self, call: sx.Call) -> Stmt:
        """`T.call_packed("runtime.cuTensorMapEncodeTiled", m, dtype, rank, base, dims..., strides..., box...,
        elem_strides..., interleave, swizzle, l2, oob)`."""
        args = self.b.splat(call.args)
        if not args or not isinstance(args[0], sx.Str):
            raise self.error("T.call_packed takes the function's name first", call)
        if args[0].value != ENCODE_FN:
            raise self.error(f"host call {args[0].value!r} is not modeled", args[0],
                             hint=f"the host part may call {ENCODE_FN} only")
        if len(args) < 5:
            raise self.error(f"{ENCODE_FN} needs (map, dtype, rank, base, ...)", call)
        var = self.map_var(args[1])
        dtype = self.b.ex.dtype(args[2], "tensor-map dtype")
        rank = self.b.ex.const_int(args[3], "a tensor-map rank")
        if not 1 <= rank <= 5:
            raise self.error(f"a tensor map has rank 1 to 5, not {rank}", args[3])
        buffer, offset = self.base(args[4])
        return self.encode(call, var, buffer, offset, dtype, rank, args[5:], {})

    def encode(self, call, var, buffer, offset, dtype, rank, fields, enums: dict) -> Stmt:
        """The flat field list (dims, strides, box, element strides, then interleave, swizzle, l2 promotion, oob
        fill and an optional forced CUtensorMapDataType, unless `enums` gives them by name)."""
        self.encoded.add(var.name)
        want = rank + (rank - 1) + rank + rank
        names = ("interleave", "swizzle", "l2_promotion", "oob_fill", "force_cu_dtype")
        tail = [n for n in names if n not in enums]
        if not want + len(tail) - 1 <= len(fields) <= want + len(tail):
            raise self.error(f"{ENCODE_FN} of rank {rank} takes {want + len(tail) - 1} values after the base, got "
                             f"{len(fields)}", call,
                             expected=f"{rank} dims, {rank - 1} strides, {rank} box sizes, {rank} element strides, "
                                      f"then {', '.join(tail)} (the last optional)")
        ints = [self.b.ex.int_expr(f, "a tensor-map field") for f in fields]
        dims, rest = ints[:rank], ints[rank:]
        strides, rest = rest[:rank - 1], rest[rank - 1:]
        box, rest = rest[:rank], rest[rank:]
        elem, rest = rest[:rank], rest[rank:]
        values = dict(zip(tail, rest))
        for n in names:
            if n in enums:
                values[n] = enums[n] if isinstance(enums[n], Expr) else \
                    self.b.ex.int_expr(enums[n], "a tensor-map field")
        values.setdefault("force_cu_dtype", Const(-1, "int32"))
        return TensorMapEncode(var, buffer, offset, dtype, tuple(dims), tuple(strides), tuple(box), tuple(elem),
                               *(values[n] for n in names), span=self.b.ex.span(call))

    ENUMS = ("interleave", "swizzle", "l2_promotion", "oob_fill", "force_cu_dtype")
    ENUM_DEFAULTS = {"interleave": 0, "swizzle": 0, "l2_promotion": 0, "oob_fill": 0, "force_cu_dtype": -1}

    def encode_tiled(self, call: sx.Call) -> Stmt:
        """`T.cuda.tensormap_encode_tiled(m, base, dims..., strides..., box..., elem_strides...,
        descriptor_dtype=..., rank=..., interleave=0, swizzle=0, l2_promotion=0, oob_fill=0, force_cu_dtype=-1)`
        (apache-tvm-tirx; `T.tensormap_encode_tiled` in the 0.27 printer's text): the enums are keyword-only and
        default as in the real op.  Also with the four lists: `T.tensormap_encode_tiled(m, base, dims, strides,
        box, elem_strides, ...)`, the enums then positional or by keyword."""
        args, kw = list(call.args), {k.name: k.value for k in call.kwargs}
        for k in call.kwargs:
            if k.name not in self.ENUMS + ("descriptor_dtype", "rank"):
                raise self.error(f"unexpected argument '{k.name}' to T.cuda.tensormap_encode_tiled", k.value,
                                 expected="descriptor_dtype=, rank=, interleave=, swizzle=, l2_promotion=, "
                                          "oob_fill=, force_cu_dtype=")
        if len(args) < 3:
            raise self.error("T.cuda.tensormap_encode_tiled takes (map, base, fields...)", call,
                             expected='T.cuda.tensormap_encode_tiled(m, A.data, dims..., strides..., box..., '
                                      'elem_strides..., descriptor_dtype="float16", rank=2)')
        var = self.map_var(args[0])
        buffer, offset = self.base(args[1])
        fields = args[2:]
        enums: dict[str, sx.Node | Expr] = {n: kw[n] for n in self.ENUMS if n in kw}    # syntax, or a default
        if all(isinstance(f, (sx.ListLit, sx.TupleLit)) for f in fields[:4]) and len(fields) >= 4:
            lists = [f.elts for f in fields[:4] if isinstance(f, (sx.ListLit, sx.TupleLit))]    # all are
            rank = len(lists[0])
            if "rank" in kw and self.b.ex.const_int(kw["rank"], "a tensor-map rank") != rank:
                raise self.error(f"rank= disagrees with the {rank} dims given", kw["rank"])
            flat = [x for lst in lists for x in lst] + list(fields[4:])
        else:
            if "rank" not in kw:
                raise self.error("T.cuda.tensormap_encode_tiled with flat fields needs rank=", call)
            rank = self.b.ex.const_int(kw["rank"], "a tensor-map rank")
            flat = fields
            # the real op: exactly 4 * rank - 1 fields after the base, every enum a keyword with a default
            for n in self.ENUMS:
                enums.setdefault(n, Const(self.ENUM_DEFAULTS[n], "int32"))
        if not 1 <= rank <= 5:
            raise self.error(f"a tensor map has rank 1 to 5, not {rank}", call)
        dtype_node = kw.get("descriptor_dtype")
        dtype = self.b.ex.dtype(dtype_node, "tensor-map dtype") if dtype_node is not None \
            else self.b.buffers[buffer].dtype
        return self.encode(call, var, buffer, offset, dtype, rank, flat, enums)

    def base(self, node) -> tuple[str, Expr]:
        """The global buffer a map starts in, and the byte offset: `A.data`, `T.handle_add_byte_offset(A.data,
        bytes)`, or an element's address `A.ptr_to([i, j])` / `T.address_of(A[i, j])` (row-major)."""
        offset: Expr = Const(0, "int64")
        ex = self.b.ex
        if isinstance(node, sx.Call) and (ex.namespace_path(node.func) == ["address_of"] or (
                isinstance(node.func, sx.Attr) and node.func.attr == "ptr_to")):
            addr = ex.expr(node)
            if not isinstance(addr, Address) or not addr.buffer:
                raise self.error("a tensor map's base is the address of a global buffer's element", node)
            buf = self.b.buffers[addr.buffer]
            if buf.scope != "global":
                raise self.error(f"a tensor map's base is a global buffer; '{buf.name}' is {buf.scope}", node)
            linear: Expr = Const(0, "int64")
            for index, extent in zip(addr.indices, buf.shape):
                linear = ty.binop("+", ty.binop("*", linear, ty.cast("int64", extent)), ty.cast("int64", index))
            return buf.name, ty.binop("*", linear, Const(dt.bits(buf.dtype) // 8, "int64"))
        if isinstance(node, sx.Call) and self.b.ex.namespace_path(node.func) == ["handle_add_byte_offset"]:
            if len(node.args) != 2:
                raise self.error("T.handle_add_byte_offset takes (pointer, bytes)", node)
            offset = ty.cast("int64", self.b.ex.int_expr(node.args[1], "a byte offset"))
            node = node.args[0]
        if isinstance(node, sx.Attr) and node.attr == "data":
            node = node.value
        buf = self.b.ex.buffer_named(node)
        if buf.scope != "global":
            raise self.error(f"a tensor map's base is a global buffer; '{buf.name}' is {buf.scope}", node)
        return buf.name, offset


def is_device_entry(builder, node: sx.Node) -> bool:
    """A statement that starts the device part: `T.device_entry()` (bare or `with`), `T.kernel()`, or an
    attribute `{"tirx.device_entry": ...}` (the 0.27 printer's, bare or `with`)."""
    call = None
    if isinstance(node, sx.ExprStmt) and isinstance(node.value, sx.Call):
        call = node.value
    elif isinstance(node, sx.With) and node.items and isinstance(node.items[0].context, sx.Call):
        call = node.items[0].context
    if call is None:
        return False
    path = builder.ex.namespace_path(call.func)
    if path in (["device_entry"], ["kernel"]):
        return True
    if path == ["attr"]:
        return any(isinstance(k, sx.Str) and k.value == "tirx.device_entry"
                   for arg in call.args if isinstance(arg, sx.DictLit) for k, _ in arg.items)
    return False
