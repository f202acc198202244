"""Swizzled shared-memory layouts: `layout=T.ComposeLayout(P, S, A, T.TileLayout(T.S[...]))`.

TMA and tcgen05 kernels keep their shared tiles in the hardware's swizzled layouts, and the
0.27 printer writes them as a `ComposeLayout` on the buffer.  TVM's lowering turns an element
access into the physical element offset as follows (checked against apache-tvm 0.27's lowered
output for (P, S, A) = (4, 3, 3), (4, 2, 3) and a (128, 2, 64):(64, 8192, 1) tile):

    f = the row-major flat index of the access in the buffer's shape
    o = sum_k t_k * stride_k, with (t_k) = f decomposed row-major in the tile's shape
        (`T.S[N:1]` is the identity tile)
    physical = o ^ (((o >> (P + A)) & (2**S - 1)) << P)

`spec(node)` reads that form (None for any other layout: the buffer keeps its text and NumSim
reports it as not modeled); `offset(spec, shape, indices)` builds the physical offset as IR.
The builder then declares the buffer flat, as the lowered form does, so every access, address
and alias sees the bytes where the hardware puts them.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import syntax as sx
from . import typing as ty
from .nodes import Const, Expr


@dataclass(frozen=True)
class Swizzle:
    per_element: int                  # P: log2 of the elements in one 16-byte unit the swizzle moves
    swizzle_len: int                  # S: bits of the XOR mask
    atom_len: int                     # A: log2 of the units in one swizzle row
    tile_shape: tuple[int, ...] | None        # None: the identity tile (`T.S[N:1]`)
    tile_strides: tuple[int, ...] | None
    numel: int                        # elements the tile covers


def spec(node, namespace_path, const_int) -> Swizzle | None:
    """The swizzle of a `layout=` syntax node, or None if it is not a modeled ComposeLayout."""
    if not (isinstance(node, sx.Call) and namespace_path(node.func) == ["ComposeLayout"]):
        return None
    kw = {k.name: k.value for k in node.kwargs}
    if len(node.args) != 4 or set(kw) - {"swizzle_inner"}:
        return None
    inner = kw.get("swizzle_inner")
    if inner is not None and not (isinstance(inner, sx.Lit) and inner.value is True):
        return None          # swizzle_inner=False: not observed in the corpus, not checked against TVM
    try:
        p, s, a = (const_int(x, "a swizzle parameter") for x in node.args[:3])
    except Exception:     # noqa: BLE001 -- a non-constant parameter: keep the layout as text (not modeled)
        return None
    tile = node.args[3]
    if not (isinstance(tile, sx.Call) and namespace_path(tile.func) == ["TileLayout"] and len(tile.args) == 1
            and not tile.kwargs and isinstance(tile.args[0], sx.Subscript)
            and namespace_path(tile.args[0].value) == ["S"] and len(tile.args[0].indices) == 1
            and isinstance(tile.args[0].indices[0], sx.Slice) and tile.args[0].indices[0].step is None):
        return None
    sl = tile.args[0].indices[0]
    try:
        shape = _ints(sl.lower, const_int)
        strides = _ints(sl.upper, const_int)
    except Exception:     # noqa: BLE001
        return None
    if shape is None or strides is None or len(shape) != len(strides) or min(p, s, a) < 0 or any(e <= 0 for e in shape):
        return None
    numel = 1
    for e in shape:
        numel *= e
    if len(shape) == 1 and strides == (1,):
        return Swizzle(p, s, a, None, None, numel)
    return Swizzle(p, s, a, shape, strides, numel)


def _ints(node, const_int) -> tuple[int, ...] | None:
    if isinstance(node, sx.TupleLit):
        return tuple(const_int(e, "a tile extent") for e in node.elts)
    if node is None:
        return None
    return (const_int(node, "a tile extent"),)


def offset(sw: Swizzle, shape: tuple[Expr, ...], indices: tuple[Expr, ...], span=None) -> Expr:
    """The physical element offset of `buf[indices]` in a buffer of `shape` with swizzle `sw` (int32 IR)."""
    flat: Expr | None = None
    for i, extent in zip(indices, shape):
        i = ty.cast("int32", i)
        flat = i if flat is None else ty.binop("+", ty.binop("*", flat, ty.cast("int32", extent), span), i, span)
    o = flat if flat is not None else Const(0, "int32")
    if sw.tile_shape is not None and sw.tile_strides is not None:
        inner = 1
        terms: list[Expr] = []
        for size, stride in zip(reversed(sw.tile_shape), reversed(sw.tile_strides)):
            t = o if inner == 1 else ty.binop("//", o, Const(inner, "int32"), span)
            t = ty.binop("%", t, Const(size, "int32"), span)
            terms.append(ty.binop("*", t, Const(stride, "int32"), span))
            inner *= size
        tiled = terms[-1]
        for term in reversed(terms[:-1]):
            tiled = ty.binop("+", tiled, term, span)
        o = tiled
    if sw.swizzle_len == 0:
        return o
    mask = Const((1 << sw.swizzle_len) - 1, "int32")
    shifted = ty.binop(">>", o, Const(sw.per_element + sw.atom_len, "int32"), span)
    bits = ty.binop("<<", ty.binop("&", shifted, mask, span), Const(sw.per_element, "int32"), span)
    return ty.binop("^", o, bits, span)
