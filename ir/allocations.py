"""Buffer declarations: allocations, aliases of another buffer's bytes, views and scalars.

Assumes the statement builder (`build._Builder`) owns the scope, the expression builder and the
buffers declared so far; it hands each allocating assignment here (`T.alloc_buffer`,
`T.decl_buffer`, `T.alloc_tensor`, `T.decl_tensor`, `T.decl_scalar`, `T.local_scalar`, ...,
`buf.view(...)`).  Guarantees: every declared buffer is a `Buffer` with a unique name, bound in
the scope, recorded in `builder.buffers`; an alias (`data=`, a view, a scalar of a pool) carries
its root allocation's name and byte offset, so NumSim and the checkers see the same bytes; a
swizzled layout the model covers is declared flat with its swizzle kept for the accesses; every
rejection is a `ParseError` naming the argument.
"""
from __future__ import annotations

from dataclasses import replace
from typing import cast

from . import dtypes as dt
from . import layouts
from . import syntax as sx
from . import typing as ty
from .nodes import Buffer, Const, DeclBuffer, Expr, Stmt, Store, Var
from .scope import BUFFER, BUILTIN, LET, NAMESPACE, PARAM, Binding


class Allocations:
    def __init__(self, builder):
        self.b = builder

    def error(self, what, node, hint="", expected=""):
        return self.b.error(what, node, hint=hint, expected=expected)

    def check_extents(self, shape, at) -> None:
        """Extents known while building (literals, module constants) must not be negative."""
        for e in shape:
            v = self.b.const_value(e)
            if v is not None and v < 0:
                raise self.error(f"buffer extent {v} is negative", at,
                                 hint="give every dimension a size of zero or more")

    def declare(self, target: sx.Name, shape, dtype: str, scope: str, at, data: str | None = None,
                byte_offset: Expr | None = None, align: int = 0, layout: str = "") -> Buffer:
        self.check_extents(shape, at)
        name = self.b.fresh(target.id)
        buf = Buffer(name, tuple(shape), dtype, scope, data, byte_offset if byte_offset is not None
                     else Const(0, "int64"), align, layout, span=self.b.ex.span(at))
        self.b.buffers[name] = buf
        self.b.scope.define(target.id, Binding(BUFFER, target.pos, buffer=buf))
        return buf

    def allocate(self, target: sx.Name, kind: str, call: sx.Call, span) -> list[Stmt]:
        existing = self.b.scope.lookup(target.id)
        if existing is not None and existing.kind not in (NAMESPACE, BUILTIN):
            raise self.error(f"'{target.id}' is already defined", target,
                             hint=f"'{target.id}' was bound at line {existing.pos.line if existing.pos else '?'}")
        kw = {k.name: k.value for k in call.kwargs}
        args = list(call.args)
        init = None
        if kind == "alloc_tensor":
            ty_args = kw.pop("ty_args", None) or (args[0] if args else None)
            if not isinstance(ty_args, sx.ListLit) or len(ty_args.elts) != 1 or \
                    not isinstance(ty_args.elts[0], sx.Call):
                raise self.error("T.alloc_tensor takes ty_args=[T.Tensor(shape, dtype, scope=...)]", call)
            proto = self.b.sig.tensor_type(ty_args.elts[0], target.id, "global")
            if proto.scope == "global":
                raise self.error(f"buffer '{target.id}' needs a scope", ty_args.elts[0],
                                 expected='scope="shared", "shared.dyn" or "local"')
            buf = self.declare(target, proto.shape, proto.dtype, proto.scope, call, align=proto.align,
                               layout=proto.layout)
        elif kind == "decl_tensor":
            buf = self.decl_tensor(target, call, args, kw)
        elif kind in ("alloc_buffer", "decl_buffer", "alloc_local", "alloc_shared"):
            shape_node = args[0] if args else kw.pop("shape", None)
            dtype_node = args[1] if len(args) > 1 else kw.pop("dtype", None)
            shape = self.b.ex.shape(shape_node, target.id, call)
            dtype = self.b.ex.dtype(dtype_node) if dtype_node is not None else "float32"
            default_scope = {"alloc_local": "local", "alloc_shared": "shared"}.get(kind, "global")
            scope = self.b.sig.scope_name(kw.pop("scope", None), default_scope, target.id, call)
            align = self.b.sig.align(kw.pop("align", None))
            data_node = kw.pop("data", None)
            elem_offset = kw.pop("elem_offset", None)
            byte_offset_node = kw.pop("byte_offset", None)
            for extra in kw:
                if extra not in ("strides", "offset_factor", "buffer_type", "axis_separators", "layout",
                                 "allocated_addr"):
                    raise self.error(f"unexpected argument '{extra}' to T.{kind}", call)
            layout_node = kw.pop("layout", None)
            layout = self.layout(layout_node)
            swizzle = layouts.spec(layout_node, self.b.ex.namespace_path, self.b.ex.const_int) if layout else None
            data, offset = None, None
            if data_node is not None:
                if kind != "decl_buffer":
                    raise self.error(f"T.{kind} does not take data=", data_node)
                if isinstance(data_node, sx.Name) and getattr(self.b.scope.lookup(data_node.id), "kind", None) == PARAM:
                    # the lowered form: the global buffer behind a pointer parameter
                    buf = self.b.sig.bind_param_buffer(data_node, target, shape, dtype, align, call)
                    return [DeclBuffer(buf, span=span)] if buf.data is not None else []
                root, offset = self.data_pointer(data_node)
                pointer_offset = offset
                data = root.data or root.name
                if scope == "global" and "scope" not in {k.name for k in call.kwargs}:
                    scope = root.scope
                if elem_offset is not None:
                    e = self.b.ex.int_expr(elem_offset, "elem_offset")
                    offset = _add_offset(offset, _elem_bytes(ty.cast("int64", e), dtype))
                if byte_offset_node is not None:
                    offset = _add_offset(offset, ty.cast("int64", self.b.ex.int_expr(byte_offset_node, "byte_offset")))
            elif elem_offset is not None or byte_offset_node is not None:
                raise self.error("an offset needs data= (the buffer it aliases)", call)
            else:
                pointer_offset = None
            if scope == "global" and data is None:
                raise self.error(f"buffer '{target.id}' needs a scope", call,
                                 expected='scope="shared", "shared.dyn" or "local"',
                                 hint="device code allocates shared or local memory; global tensors are parameters")
            flat = self.swizzled_extent(shape, swizzle) if swizzle is not None else None
            if flat is not None:
                # a modeled swizzle: declared flat, as the lowered form is; accesses index it physically
                buf = self.declare(target, (Const(flat, "int32"),), dtype, scope, call, data, offset, align, "")
                self.b.ex.swizzled[buf.name] = (tuple(shape), swizzle)
            else:
                buf = self.declare(target, shape, dtype, scope, call, data, offset, align, layout)
            if pointer_offset is not None:
                self.b.data_offsets[buf.name] = pointer_offset
        elif kind in ("decl_scalar", "shared_scalar"):
            # one element: of an allocation (decl_scalar(dtype, data=pool.data, elem_offset=k, scope=...)), or a
            # shared one of its own (shared_scalar(dtype))
            dtype_node = args[0] if args else kw.pop("dtype", None)
            if dtype_node is None:
                raise self.error(f"T.{kind} needs a dtype", call, expected=f"T.{kind}(T.uint32, ...)")
            dtype = self.b.ex.dtype(dtype_node)
            data_node = kw.pop("data", None)
            scope = self.b.sig.scope_name(kw.pop("scope", None), "shared" if kind == "shared_scalar" else "local",
                                          target.id, call)
            data, offset = None, None
            if data_node is not None:
                root, offset = self.data_pointer(data_node)
                data = root.data or root.name
                if "scope" not in {k.name for k in call.kwargs}:
                    scope = root.scope
                elem = kw.pop("elem_offset", None)
                if elem is not None:
                    offset = _add_offset(offset, _elem_bytes(ty.cast("int64", self.b.ex.int_expr(elem, "elem_offset")),
                                                             dtype))
            buf = self.declare(target, (Const(1, "int32"),), dtype, scope, call, data, offset)
            self.mark_scalar(target)
        else:  # local_scalar
            dtype_node = args[0] if args else kw.pop("dtype", None)
            if dtype_node is None:
                raise self.error("T.local_scalar needs a dtype", call, expected="T.local_scalar(T.int32)")
            dtype = self.b.ex.dtype(dtype_node)
            init = kw.pop("init", None) or (args[1] if len(args) > 1 else None)
            buf = self.declare(target, (Const(1, "int32"),), dtype, "local", call)
            self.mark_scalar(target)
        out: list[Stmt] = [DeclBuffer(buf, span=span)]
        if init is not None:
            out.append(Store(buf.name, (Const(0, "int32"),), self.b.store_value(buf, init), span=span))
        return out

    def static_numel(self, shape) -> int | None:
        """The product of `shape`'s extents when every one is a compile-time constant, else None."""
        numel = 1
        for e in shape:
            v = self.b.const_value(e)
            if v is None:
                return None
            numel *= v
        return numel

    def swizzled_extent(self, shape, sw: layouts.Swizzle) -> int | None:
        """Elements of the flat buffer behind a swizzled tile, or None (a shape the tile does not cover
        exactly: the layout stays text and is reported as not modeled)."""
        numel = self.static_numel(shape)
        if numel is None or numel != sw.numel:
            return None
        if sw.tile_shape is None or sw.tile_strides is None:     # (set together by layouts.spec)
            return numel
        top = sum((e - 1) * st for e, st in zip(sw.tile_shape, sw.tile_strides))
        return max(numel, (top | (((1 << sw.swizzle_len) - 1) << sw.per_element)) + 1)

    def mark_scalar(self, target: sx.Name) -> None:
        """A T.*_scalar: its bare name is its one element (read and assigned), in whatever scope it lives."""
        b = cast(Binding, self.b.scope.lookup(target.id))     # declare() has just bound it
        self.b.scope.define(target.id, replace(b, scalar=True))

    def data_pointer(self, node) -> tuple[Buffer, Expr]:
        """The allocation a `data=` pointer names and the byte offset into it: `pool.data`, or
        `T.reinterpret(T.handle(dtype, scope).ty, T.address_of(pool[i]))` (a pointer to an element)."""
        if isinstance(node, sx.Call) and self.b.ex.namespace_path(node.func) == ["reinterpret"] and len(node.args) == 2:
            node = node.args[1]
        if isinstance(node, sx.Call) and self.b.ex.namespace_path(node.func) == ["address_of"] and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, sx.Subscript):
                root, indices = self.b.ex.element(inner)
                strides: list[Expr] = [Const(1, "int64")]
                for extent in reversed(root.shape[1:]):
                    strides.insert(0, ty.binop("*", strides[0], ty.cast("int64", extent)))
                elems: Expr | None = None
                for i, st in zip(indices, strides):
                    term = ty.binop("*", ty.cast("int64", i), st)
                    elems = term if elems is None else ty.binop("+", elems, term)
                # a subscript has at least one index
                offset = _elem_bytes(cast(Expr, elems), root.dtype)
                return root, _add_offset(root.byte_offset, offset)
            node = inner
        if isinstance(node, sx.Attr) and node.attr == "source":      # a view's underlying buffer
            node = node.value
        if isinstance(node, sx.Attr) and node.attr == "data":
            node = node.value
            if isinstance(node, sx.Attr) and node.attr == "source":
                node = node.value
        if isinstance(node, sx.Name):
            b = self.b.scope.lookup(node.id)
            if b is not None and b.kind in (LET, PARAM) and isinstance(v := b.bound_expr(), Var) \
                    and v.dtype == "handle":
                # a pointer the kernel computed (e.g. a peer CTA's shared memory through mapa) or a tensor-map
                # parameter's own bytes: no allocation of ours; NumSim reports a buffer over it as not modeled
                return Buffer(v.name, (), "uint8", "param" if b.kind == PARAM else "pointer"), Const(0, "int64")
            root = self.b.ex.buffer_named(node)
            return root, self.b.data_offsets.get(root.name, root.byte_offset)
        raise self.error("data= takes another buffer's .data", node, expected="data=pool.data")

    def view(self, target: sx.Name, call: sx.Call, span) -> list[Stmt]:
        """`v = buf.view(dtype)` (the same bytes as another dtype: the last dimension scales by the width ratio)
        or `v = buf.view(*shape)` (the same elements in another shape): an alias of `buf`."""
        root = self.b.ex.buffer_named(cast(sx.Attr, call.func).value)    # called for `buf.view(...)` only
        args = list(call.args)
        if call.kwargs:
            raise self.error("view takes a dtype or a shape", call.kwargs[0])
        if len(args) == 1 and (isinstance(args[0], sx.Str) or self.b.ex.namespace_path(args[0]) is not None):
            dtype = self.b.ex.dtype(args[0])
            old, new = dt.bits(root.dtype), dt.bits(dtype)
            declared = self.b.ex.swizzled[root.name][0] if root.name in self.b.ex.swizzled else root.shape
            last = declared[-1]
            if new > old:
                last = ty.binop("//", last, Const(new // old, last.dtype))
            elif new < old:
                last = ty.binop("*", last, Const(old // new, last.dtype))
            shape = tuple(declared[:-1]) + (last,)
        else:
            dtype = root.dtype
            shape = tuple(self.b.ex.int_expr(a, "a view extent") for a in self.b.splat(args))
        sw = None
        if root.name in self.b.ex.swizzled:
            sw = self.swizzled_view(root, shape, dtype) if dtype != root.dtype else self.reshaped_view(root, shape)
        if sw is not None:      # flat, as the root is; accesses index it through the carried-over swizzle
            buf = self.declare(target, (Const(sw.numel, "int32"),), dtype, root.scope, call, root.data or root.name,
                               root.byte_offset, root.align, "")
            self.b.ex.swizzled[buf.name] = (shape, sw)
        else:
            buf = self.declare(target, shape, dtype, root.scope, call, root.data or root.name, root.byte_offset,
                               root.align, self.view_layout(root))
        if root.name in self.b.data_offsets:      # a view shares its root's data pointer
            self.b.data_offsets[buf.name] = self.b.data_offsets[root.name]
        return [DeclBuffer(buf, span=span)]

    def view_layout(self, root: Buffer) -> str:
        """A view keeps its root's layout; a view of a swizzled buffer that `swizzled_view` cannot carry over is not
        modeled (never read row-major)."""
        if root.name in self.b.ex.swizzled:
            return f'T.view_of_swizzled("{root.name}")'      # printable, and never read row-major
        return root.layout

    def reshaped_view(self, root: Buffer, shape) -> layouts.Swizzle | None:
        """The swizzle of a shape view `v = tile.view(*shape)` of a swizzled root: apache-tvm 0.27's `view`
        re-declares the buffer with the root's layout unchanged (`tirx/_buffer_view.py`, `view`), and a layout
        maps the access's row-major flat index in the buffer's own shape (`tirx/layout.py`, `Layout.apply`: "turn
        the coord with shape into a 1D coordinate"), so the same flat index reaches the same bytes.  None when the
        element counts are not both known and equal (the layout stays `T.view_of_swizzled`)."""
        declared, sw = self.b.ex.swizzled[root.name]
        numel = self.static_numel(shape)
        return sw if numel is not None and numel == self.static_numel(declared) else None

    def swizzled_view(self, root: Buffer, shape, dtype: str) -> layouts.Swizzle | None:
        """The swizzle of a dtype view of a swizzled root with the identity tile: the same bytes, so the same
        16-byte units move; only the elements per unit (P) change with the width ratio.  None otherwise."""
        declared, sw = self.b.ex.swizzled[root.name]
        old, new = dt.bits(root.dtype), dt.bits(dtype)
        if sw.tile_shape is not None or (new > old and new // old > 1 << sw.per_element):
            return None
        shift = (old // new).bit_length() - 1 if new <= old else 1 - (new // old).bit_length()
        p = sw.per_element + shift
        numel = sw.numel * old // new
        total = self.static_numel(shape)
        return layouts.Swizzle(p, sw.swizzle_len, sw.atom_len, None, None, numel) if total == numel else None

    def layout(self, node) -> str:
        """A buffer's `layout=`: "" for none (row-major), else its text (checked where the buffer is used)."""
        if node is None or (isinstance(node, sx.Lit) and node.value is None):
            return ""
        pos = node.pos
        lines = self.b.source.split("\n")[pos.line - 1:pos.end_line]
        if not lines:
            return "layout"
        if len(lines) == 1:
            return lines[0][pos.col - 1:pos.end_col - 1]
        return " ".join([lines[0][pos.col - 1:]] + [x.strip() for x in lines[1:-1]]
                        + [lines[-1][:pos.end_col - 1].strip()])

    def decl_tensor(self, target: sx.Name, call: sx.Call, args: list, kw: dict) -> Buffer:
        """Gen-3 alias: `T.decl_tensor(X.data | T.ptr_byte_offset(X.data, bytes, ty=...), ty_args=[T.Tensor(...)])`."""
        usage = 'T.decl_tensor(pool.data, ty_args=[T.Tensor((n,), T.uint64, scope="shared")])'
        ty_args = kw.pop("ty_args", None)
        if len(args) != 1 or not isinstance(ty_args, sx.ListLit) or len(ty_args.elts) != 1 \
                or not isinstance(ty_args.elts[0], sx.Call):
            raise self.error("T.decl_tensor takes a pointer and ty_args=[T.Tensor(shape, dtype, scope=...)]", call,
                             expected=usage, hint="pass exactly one pointer and one T.Tensor type")
        ptr, extra = args[0], None
        if isinstance(ptr, sx.Call) and self.b.ex.namespace_path(ptr.func) == ["ptr_byte_offset"]:
            if len(ptr.args) != 2:
                raise self.error("T.ptr_byte_offset takes (pointer, byte offset)", ptr,
                                 expected='T.ptr_byte_offset(pool.data, 16, ty=T.Ptr(T.uint64, "shared"))',
                                 hint="the offset is in bytes from the start of the aliased allocation")
            ptr, extra = ptr.args
        if not (isinstance(ptr, sx.Attr) and ptr.attr == "data"):
            raise self.error("T.decl_tensor takes another buffer's .data as its pointer", args[0], expected=usage,
                             hint="alias an allocation: pool.data, or T.ptr_byte_offset(pool.data, bytes, ty=...)")
        root, offset = self.data_pointer(ptr)     # an allocation, or a pointer/tensor-map parameter's bytes
        if extra is not None:
            offset = _add_offset(offset, ty.cast("int64", self.b.ex.int_expr(extra, "a byte offset")))
        proto = self.b.sig.tensor_type(ty_args.elts[0], target.id, root.scope)
        return self.declare(target, proto.shape, proto.dtype, proto.scope, call, root.data or root.name, offset,
                            proto.align, proto.layout)



def _elem_bytes(elems: Expr, dtype: str) -> Expr:
    """Bytes of `elems` elements of `dtype` (int64 IR); sub-byte elements pack (e.g. two float4 per byte)."""
    bits = dt.bits(dtype)
    if bits % 8 == 0 or dtype == "bool":
        return ty.binop("*", elems, Const(dt.nbytes(dtype), "int64"))
    return ty.binop("//", ty.binop("*", elems, Const(bits, "int64")), Const(8, "int64"))


def _add_offset(base: Expr, extra: Expr) -> Expr:
    """Alias offsets add up; a zero base contributes nothing (so printing and re-parsing is stable)."""
    if isinstance(base, Const) and base.value == 0:
        return extra
    return ty.binop("+", base, extra)
