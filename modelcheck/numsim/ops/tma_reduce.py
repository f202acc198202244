"""TMA reductions: `cp.reduce.async.bulk.tensor.{1..5}d.global.shared::cta.redOp.tile.bulk_group` (PTX ISA
9.7.9.25.5.3).

The box is addressed as the TMA store's (`tma._plan`: same tensor map, coordinates and swizzled shared layout) and
tracked by the issuing thread's bulk groups like it (op kind "tma.s2g": `wait_group.read` retires the source read,
`wait_group` the whole op).  At completion every in-bounds element of the global box becomes `old redOp src`,
the element type being the tensor map's:
- .add: .u32/.s32/.u64 wrap; .f32/.f16/.bf16 round to nearest even (the exact sum rounded once: float64 holds it
  or, for +, rounding it through float64 first is innocuous); subnormals are kept (the ISA states a flush only for
  the non-tensor .add.f32);
- .min/.max: .u32/.s32/.u64/.s64 and .f16/.bf16 (a NaN operand yields the other, as fmin/fmax);
- .inc/.dec: .u32 (`old >= src ? 0 : old + 1`, `old == 0 || old > src ? src : old - 1`, as atom.inc/dec);
- .and/.or/.xor: 32- and 64-bit integer maps.
Another type is `invalid_descriptor` (the ISA's table of valid combinations).  Each element's reduction is
"individually .relaxed.gpu" and the source loads weak: the global footprint is recorded as async `rmw` runs of order
relaxed, scope gpu (two reductions of different CTAs into one element are atomic, not a race), the shared source
as the op's weak async read at issue.
"""
from __future__ import annotations

import numpy as np

import ir

from ..descriptors import byte_runs
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import SHARED_BASE
from ..tensormap import TENSOR_MAPS
from ..values import NP_DTYPE
from . import ptx_convert as CV
from .async_copy import _groups, _new_op, _one_lane
from .tma import _at, _lanes, _plan, async_records, read_elements, tensor_map, write_elements

_INTS32 = ("uint32", "int32")
_INTS64 = ("uint64", "int64")
# PTX ISA 9.7.9.25.5.3, valid .redOp / element type combinations
VALID = {"add": _INTS32 + ("uint64", "float32", "float16", "bfloat16"),
         "min": _INTS32 + _INTS64 + ("float16", "bfloat16"),
         "max": _INTS32 + _INTS64 + ("float16", "bfloat16"),
         "inc": ("uint32",), "dec": ("uint32",),
         "and": _INTS32 + _INTS64, "or": _INTS32 + _INTS64, "xor": _INTS32 + _INTS64}
RED_OPS = tuple(VALID)


def reduce_values(op: str, dtype: str, old: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Element-wise `old redOp src` of two arrays of `dtype`."""
    t = np.dtype(NP_DTYPE.get(dtype, dtype))
    floating = dtype in ("float32", "float16", "bfloat16")
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add" and floating:
            exact = old.astype(np.float64) + src.astype(np.float64)
            return np.asarray(CV.round_float(exact, None, dtype, "rn")).astype(t)
        if op == "add":
            return (old + src).astype(t)
        if op in ("min", "max") and floating:
            f = np.fmin if op == "min" else np.fmax
            return f(old.astype(np.float32), src.astype(np.float32)).astype(t)
        if op in ("min", "max"):
            return (np.minimum if op == "min" else np.maximum)(old, src)
        if op == "inc":
            return np.where(old >= src, t.type(0), old + t.type(1)).astype(t)
        if op == "dec":
            return np.where((old == 0) | (old > src), src, old - t.type(1)).astype(t)
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return f(old, src)


def _reduce(ctx, call, info):
    dims = int(info.quals["dims"])
    op_name = next((o for o in RED_OPS if o in info.quals), None)
    ops = call.operands
    tmap_fn = ctx.expr(ops[0])
    coord_fns = [ctx.expr(o) for o in ops[1:1 + dims]]
    src_fn = ctx.expr(ops[1 + dims])
    site = ctx.site(call, "cp.reduce.async.bulk.tensor")
    span = call.span
    what = f"cp.reduce.async.bulk.tensor.{dims}d.{op_name} (shared -> global)"
    if op_name is None:
        raise UnsupportedTIRxError(what, span, "no reduction operation (.add, .min, ...) among the qualifiers")
    # a write through a tensor map: that map's bytes get a private copy, as for the TMA store (tma._s2g)
    handles = {p.name for p in ctx.cc.func.params if p.kind == "handle"}
    named = {n.name for n in ir.walk(ops[0]) if isinstance(n, ir.Var)} & handles
    ctx.cc.written_globals.update(named or {TENSOR_MAPS})

    def run(w):
        tm_a, src_a = tmap_fn(w), src_fn(w)
        coords_a = [c(w) for c in coord_fns]
        eng = w.eng
        groups = _groups(w, "bulk")
        w.effects += 1
        for lane in _lanes(w):
            bound = tensor_map(w, _at(tm_a, lane), span, what, lane, site)
            dtype = bound.fields.dtype
            if dtype not in VALID[op_name]:
                raise EngineError("invalid_descriptor", f"{what}: tensor map {bound.name} holds {dtype} elements; "
                                                        f".{op_name} reduces {', '.join(VALID[op_name])} (PTX ISA "
                                                        f"9.7.9.25.5.3)", span, field="dtype",
                                  tensor_map=bound.name)
            coords = [_at(c, lane) for c in coords_a]
            plan, s_alloc = _plan(w, bound, dims, coords, _at(src_a, lane), span, what)
            op = _new_op(w, "tma.s2g", lane, site)
            groups.uncommitted[lane].append(op)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "lane": lane,
                                                      "tensor_map": bound.name, "coords": coords,
                                                      "reduce": op_name})
            async_records(eng, op, s_alloc, plan.smem_addr - s_alloc.base, plan.esz, "read")
            eng.enqueue(_complete(w, op, bound, plan, groups, op_name, dtype))
    return run, False


def _complete(w, op, bound, plan, groups, op_name, dtype):
    eng, pool = w.eng, w.rt.shared.pool
    t = np.dtype(NP_DTYPE.get(dtype, dtype))

    def complete():
        esz = plan.esz
        src = read_elements(pool, plan.smem_addr - SHARED_BASE, esz)[plan.inb]
        goff = bound.base_off + plan.global_off[plan.inb]
        old = read_elements(bound.alloc.data, goff, esz)
        new = reduce_values(op_name, dtype, np.ascontiguousarray(old).view(t).reshape(-1),
                            np.ascontiguousarray(src).view(t).reshape(-1))
        write_elements(bound.alloc.data, goff, esz, np.ascontiguousarray(new).view(np.uint8).reshape(-1, esz))
        bound.alloc.mark_written(goff, esz)
        _rmw_records(eng, op, bound.alloc, goff, esz)
        op.done = True
        groups.version += 1
        eng.touch(groups)
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})
    return complete


def _rmw_records(eng, op, alloc, offsets, esz) -> None:
    """The reduction's global footprint as relaxed.gpu read-modify-write runs of the op (PTX: each element's
    reduction is individually .relaxed.gpu)."""
    if not eng.tracing:
        eng.stats["accesses"] += 1
        return
    starts, lengths = byte_runs(offsets, esz)
    lanes = _one_lane(op.lane)
    for s, n in zip(np.asarray(starts).tolist(), np.broadcast_to(lengths, np.shape(starts)).tolist()):
        eng.access(None, op.site, alloc, int(s), int(n), "rmw", proxy="async", order="relaxed", scope="gpu",
                   lanes=lanes, actor=op.id, iters=op.iters, warp=op.warp, cta=op.cta)


HANDLERS = {"cp.reduce.async.bulk.tensor": _reduce}
