"""Memory instructions on raw addresses: ld / st (widths b8..b128, v2/v4/v8), atom / red,
the CUDA atomics, and the L2 line hints discard / applypriority.  The PTX type fixes the access
size; bit types move bits (`ld.b32` into a float register reinterprets), typed loads convert.  Accesses must be
naturally aligned.  Atomics run lane by lane in lane order, so a warp's conflicting
atomics serialize deterministically.
"""
from __future__ import annotations

import numpy as np

from .. import cohort_shared
from .. import values as V
from ..errors import EngineError
from .access import decode, note_remote

PTX_NP = V.LazyTypes({
    "b8": np.uint8, "u8": np.uint8, "s8": np.int8, "b16": np.uint16, "u16": np.uint16, "s16": np.int16,
    "f16": np.float16, "b32": np.uint32, "u32": np.uint32, "s32": np.int32,
    "f32": np.float32, "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
    "f16x2": np.uint32, "bf16x2": np.uint32, "b128": np.dtype("V16"),
}, {"bf16": "bfloat16"})


def _space(info) -> str:
    sp = info.quals.get("space", "")
    if sp.startswith("shared"):
        return "shared"
    if sp == "global":
        return "global"
    if sp in ("local", "param"):
        return sp
    return "generic"


def _order_scope(info, default_order: str, default_scope: str):
    order = info.quals.get("sem", default_order)
    scope = info.quals.get("scope", "gpu" if order not in ("weak",) else default_scope)
    return order, scope


def _typed_view(alloc, np_t):
    cache = alloc.__dict__.setdefault("_views", {})
    v = cache.get(np_t)
    if v is None:
        usable = alloc.nbytes - alloc.nbytes % np.dtype(np_t).itemsize
        v = cache[np_t] = alloc.data[:usable].view(np_t)
    return v


def _check_aligned(offs, size, span, what, alloc):
    bad = (offs % size) != 0 if type(offs) is np.ndarray else offs % size != 0
    if (V.nnz(bad) if type(offs) is np.ndarray else bad):
        off = int(offs[np.flatnonzero(bad)[0]]) if type(offs) is np.ndarray else int(offs)
        raise EngineError("misaligned_address",
                          f"{what}: address {alloc.base + off:#x} is not aligned to its {size}-byte access",
                          span, address=alloc.base + off, size=size)


def _to_register(raw, ptx_type: str, dst_dtype: str):
    """Loaded value (numpy, PTX type) -> the destination register's dtype."""
    dst_np = V.NP_DTYPE[dst_dtype]
    if ptx_type.startswith("b") and np.dtype(dst_np).itemsize == np.dtype(PTX_NP[ptx_type]).itemsize:
        out = np.asarray(raw).view(dst_np)
    else:
        out = np.asarray(raw).astype(dst_np)
    if out.ndim == 0:
        v = out[()]
        return v.item() if np.issubdtype(out.dtype, np.integer) else (bool(v) if out.dtype == np.bool_ else v)
    return out


def _from_register(value, src_dtype: str, ptx_type: str):
    """Register value -> the PTX type's numpy value (bits for .b types of equal size)."""
    np_t = PTX_NP[ptx_type]
    src_np = V.NP_DTYPE[src_dtype]
    arr = np.asarray(value, dtype=src_np) if type(value) is not np.ndarray else value.astype(src_np, copy=False)
    if ptx_type.startswith("b") and np.dtype(src_np).itemsize == np.dtype(np_t).itemsize:
        return arr.view(np_t)
    with np.errstate(over="ignore", invalid="ignore"):
        return arr.astype(np_t)


def _form(info):
    """What ld and st read from their qualifiers: vector width, PTX type, its numpy type and size, state space,
    memory order and scope (weak at CTA scope unless qualified; .volatile is its own order)."""
    width = {"v2": 2, "v4": 4, "v8": 8}.get(info.quals.get("vec", ""), 1)
    ptx_type = info.quals.get("type", "b32")
    np_t = PTX_NP[ptx_type]
    order, scope = _order_scope(info, "weak", "cta")
    if info.quals.get("volatile"):
        order = "volatile"
    return width, ptx_type, np_t, np.dtype(np_t).itemsize, _space(info), order, scope


def _ld(ctx, call, info):
    width, ptx_type, np_t, size, space, order, scope = _form(info)
    dsts = [ctx.lvalue(call.operands[k], "ld") for k in range(width)]
    addr = ctx.expr(call.operands[width])
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        a = addr(w)
        alloc, offs = decode(w, a, size * width, space, span, "ld")
        if alloc is None:
            return
        _check_aligned(offs, size * width if width > 1 else size, span, "ld", alloc)
        view = _typed_view(alloc, np_t)
        if not alloc.all_written and alloc.unwritten(offs if type(offs) is not np.ndarray else offs[w.active()],
                                                      size * width):
            w.eng.note_uninitialized(site, w, alloc.name)
        w.eng.access(w, site, alloc, offs, size * width, "read", order=order, scope=scope)
        note_remote(w, site, alloc)
        for k, d in enumerate(dsts):
            idx = offs // size + k
            raw = view[idx] if type(idx) is not np.ndarray else view.take(idx)
            d(w, _to_register(raw, ptx_type, d.dtype))
    if space == "shared":       # a CTA cohort's warp: every row's shared memory at once (numsim.cohort_shared)
        run.cohort = cohort_shared.ld(addr, dsts, size, width, ptx_type, np_t, site, order, scope,
                                      _to_register)
    return run, False


def _st(ctx, call, info):
    width, ptx_type, np_t, size, space, order, scope = _form(info)
    addr = ctx.expr(call.operands[0])
    vals = [ctx.expr(call.operands[1 + k]) for k in range(width)]
    val_dtypes = [call.operands[1 + k].dtype for k in range(width)]
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        a = addr(w)
        w.effects += 1
        alloc, offs = decode(w, a, size * width, space, span, "st")
        if alloc is None:
            return
        if alloc.readonly:
            raise EngineError("invalid_address", f"st into {alloc.name}: a kernel parameter is read-only", span)
        _check_aligned(offs, size * width if width > 1 else size, span, "st", alloc)
        view = _typed_view(alloc, np_t)
        if w.mask is None:
            # every lane: the lines below with `lanes` all 32 (an index of every lane is the identity)
            for k in range(width):
                idx = offs // size + k
                v = _from_register(vals[k](w), val_dtypes[k], ptx_type)
                if type(idx) is not np.ndarray:
                    view[idx] = v[-1] if v.ndim else v
                else:
                    view[idx] = v
            alloc.mark_written(offs, size * width)
            w.eng.access(w, site, alloc, offs, size * width, "write", order=order, scope=scope)
            note_remote(w, site, alloc)
            return
        active = w.active()
        lanes = np.flatnonzero(active)
        for k in range(width):
            idx = offs // size + k
            v = _from_register(vals[k](w), val_dtypes[k], ptx_type)
            if type(idx) is not np.ndarray:
                view[idx] = v[lanes[-1]] if v.ndim else v
            else:
                view[idx[lanes]] = v[lanes] if v.ndim else v
        alloc.mark_written(offs if type(offs) is not np.ndarray else offs[lanes], size * width)
        w.eng.access(w, site, alloc, offs, size * width, "write", order=order, scope=scope)
        note_remote(w, site, alloc)
    if space == "shared":       # a CTA cohort's warp: every row's shared memory at once (numsim.cohort_shared)
        run.cohort = cohort_shared.st(addr, vals, val_dtypes, size, width, ptx_type, np_t, site, order,
                                      scope, _from_register)
    return run, False


def _atomic_apply(op: str, old, b, c, np_t):
    """One lane's atomic update: returns the new value (numpy scalar of np_t)."""
    t = np.dtype(np_t)
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add":
            return (np.asarray(old) + np.asarray(b, dtype=t)).astype(t)
        if op == "min":
            return np.minimum(old, np.asarray(b, dtype=t))
        if op == "max":
            return np.maximum(old, np.asarray(b, dtype=t))
        if op == "exch":
            return np.asarray(b).astype(t)
        if op == "cas":
            return np.asarray(c).astype(t) if old == np.asarray(b).astype(t) else old
        if op == "and":
            return np.bitwise_and(old, np.asarray(b).astype(t))
        if op == "or":
            return np.bitwise_or(old, np.asarray(b).astype(t))
        if op == "xor":
            return np.bitwise_xor(old, np.asarray(b).astype(t))
        if op == "inc":
            bb = np.asarray(b).astype(t)
            return t.type(0) if old >= bb else (old + t.type(1)).astype(t)
        if op == "dec":
            bb = np.asarray(b).astype(t)
            return bb if (old == 0 or old > bb) else (old - t.type(1)).astype(t)
    raise ValueError(op)


def _rmw(w, site, span, alloc, offs, size, np_t, op, b_val, c_val, order, scope, what):
    view = _typed_view(alloc, np_t)
    lanes = np.flatnonzero(w.active())
    olds = np.zeros(32, dtype=np_t)
    for lane in lanes:
        off = int(offs[lane]) if type(offs) is np.ndarray else int(offs)
        idx = off // size
        b = b_val[lane] if type(b_val) is np.ndarray and b_val.ndim else b_val   # 0-d: a uniform operand
        c = c_val[lane] if type(c_val) is np.ndarray and c_val.ndim else c_val
        old = view[idx]
        olds[lane] = old
        view[idx] = _atomic_apply(op, old, b, c, np_t)
    alloc.mark_written(offs if type(offs) is not np.ndarray else offs[lanes], size)
    w.eng.access(w, site, alloc, offs, size, "rmw", order=order, scope=scope)
    note_remote(w, site, alloc)
    w.effects += 1
    return olds


def _atom_red(ctx, call, info):
    is_atom = info.name == "atom"
    k = 1 if is_atom else 0
    dst = ctx.lvalue(call.operands[0], "atom") if is_atom else None
    addr = ctx.expr(call.operands[k])
    b = ctx.expr(call.operands[k + 1])
    b_dtype = call.operands[k + 1].dtype
    op = info.quals["op"]
    c = ctx.expr(call.operands[k + 2]) if op == "cas" else None
    ptx_type = info.quals.get("type", "b32")
    np_t = PTX_NP[ptx_type]
    size = np.dtype(np_t).itemsize
    space = _space(info)
    order, scope = _order_scope(info, "relaxed", "gpu")
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        a = addr(w)
        alloc, offs = decode(w, a, size, space, span, info.name)
        if alloc is None:
            return
        _check_aligned(offs, size, span, info.name, alloc)
        bv = _from_register(b(w), b_dtype, ptx_type)
        cv = _from_register(c(w), call.operands[k + 2].dtype, ptx_type) if c is not None else None
        olds = _rmw(w, site, span, alloc, offs, size, np_t, op, bv, cv, order, scope, info.name)
        if dst is not None:
            dst(w, _to_register(olds, ptx_type, dst.dtype))
    return run, False


def _cuda_atomic(op):
    def compile_(ctx, call, info):
        addr = ctx.expr(call.operands[0])
        vals = [ctx.expr(o) for o in call.operands[1:]]
        dtype = call.operands[-1].dtype
        np_t = V.NP_DTYPE[dtype]
        size = np.dtype(np_t).itemsize
        site = ctx.site(call, info.name)
        span = call.span

        def run(w):
            a = addr(w)
            alloc, offs = decode(w, a, size, "generic", span, info.name)
            if alloc is None:
                return None
            _check_aligned(offs, size, span, info.name, alloc)
            if op == "cas":
                bv, cv = vals[0](w), vals[1](w)
            else:
                bv, cv = vals[0](w), None
            olds = _rmw(w, site, span, alloc, offs, size, np_t, op, bv, cv, "relaxed", "gpu", info.name)
            return olds if w.mask is not None or type(a) is np.ndarray else olds
        return run, False
    return compile_


def _discard(ctx, call, info):
    """discard{.global}.L2 [a], 128: "semantically ... a weak write of an unstable indeterminate value" to the 128
    bytes at `a`, which must be 128-byte aligned and global (PTX ISA 9.7.10.20).  Each active lane discards its own
    line: a weak write the checkers see, and bytes that count as never written again, so a read before the next
    write is noted as uninitialized (any value it returns is one the hardware may give; the model keeps the old
    bytes)."""
    space = "global" if info.quals.get("space") == "global" else "generic"
    addr = ctx.expr(call.operands[0])
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        a = addr(w)
        w.effects += 1
        alloc, offs = decode(w, a, 128, space, span, "discard")
        if alloc is None:
            return
        if alloc.space != "global":
            raise EngineError("invalid_address", f"discard: address {alloc.base:#x}+ is in {alloc.name}, not in "
                                                 "the global window (undefined behavior, PTX ISA 9.7.10.20)", span)
        if alloc.readonly:
            raise EngineError("invalid_address", f"discard of {alloc.name}: a kernel parameter is read-only", span)
        _check_aligned(offs, 128, span, "discard", alloc)
        alloc.mark_unwritten(offs if type(offs) is not np.ndarray else offs[w.active()], 128)
        w.eng.access(w, site, alloc, offs, 128, "write", order="weak", scope="cta")
    return run, False


def _applypriority(ctx, call, info):
    """applypriority{.global}.L2::evict_normal [a], 128: an eviction priority for the lines, which no load or
    store can observe (PTX ISA 9.7.10.17)."""
    return (lambda w: None), False


def strong_access(info) -> tuple[str, str] | None:
    """(order, scope) of the morally strong accesses an operation of this class makes, as the handlers above
    record them ("volatile" for ld/st.volatile), None when they are weak or it makes none."""
    if info.name in ("ld", "st"):
        if info.quals.get("volatile"):
            return "volatile", "sys"
        order, scope = _order_scope(info, "weak", "cta")
        return None if order == "weak" else (order, scope)
    if info.name in ("atom", "red"):
        return _order_scope(info, "relaxed", "gpu")
    if info.name in ("cuda.atomic_add", "cuda.atomic_cas"):
        return "relaxed", "gpu"
    return None


HANDLERS = {
    "ld": _ld,
    "st": _st,
    "atom": _atom_red,
    "red": _atom_red,
    "cuda.atomic_add": _cuda_atomic("add"),
    "cuda.atomic_cas": _cuda_atomic("cas"),
    "discard": _discard,
    "applypriority": _applypriority,
}
