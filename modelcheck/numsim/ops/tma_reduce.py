"""Bulk reductions into global memory: `cp.reduce.async.bulk.tensor.{1..5}d.global.shared::cta.redOp.tile.
bulk_group` (TMA, PTX ISA 9.7.9.25.5.3) and `cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type
[dst], [src], size` (non-tensor, 9.7.9.25.4.2: `size` bytes of .type elements, .add.f32 flushing subnormal inputs
and results to sign-preserving zero, .f16/.bf16 add with .noftz keeping them; .type from the instruction).

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

from ..descriptors import byte_runs
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import SHARED_BASE
from ..values import NP_DTYPE
from . import ptx_convert as CV
from .float_arith import ftz
from .async_copy import _groups, _new_op, _one_lane, group_done
from .tma import _at, _lanes, _plan, async_records, read_elements, tensor_map, write_elements, writes_through_map

_INTS32 = ("uint32", "int32")
_INTS64 = ("uint64", "int64")
# PTX ISA 9.7.9.25.5.3, valid .redOp / element type combinations
VALID = {"add": _INTS32 + ("uint64", "float32", "float16", "bfloat16", "float64"),
         "min": _INTS32 + _INTS64 + ("float16", "bfloat16"),
         "max": _INTS32 + _INTS64 + ("float16", "bfloat16"),
         "inc": ("uint32",), "dec": ("uint32",),
         "and": _INTS32 + _INTS64, "or": _INTS32 + _INTS64, "xor": _INTS32 + _INTS64}
RED_OPS = tuple(VALID)
_PTX_TYPES = {"b32": "uint32", "u32": "uint32", "s32": "int32", "b64": "uint64", "u64": "uint64", "s64": "int64",
              "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def reduce_values(op: str, dtype: str, old: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Element-wise `old redOp src` of two arrays of `dtype`."""
    t = np.dtype(NP_DTYPE.get(dtype, dtype))
    floating = dtype in ("float32", "float16", "bfloat16", "float64")
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add" and floating:
            exact = old.astype(np.float64) + src.astype(np.float64)
            return np.asarray(CV.round_float(exact, None, dtype, "rn")).astype(t)
        if op == "add":
            return (old + src).astype(t)
        if op in ("min", "max") and floating:
            a, b = old.astype(np.float32), src.astype(np.float32)
            return (np.fmin(a, b) if op == "min" else np.fmax(a, b)).astype(t)
        if op in ("min", "max"):
            return (np.minimum if op == "min" else np.maximum)(old, src)
        if op == "inc":
            return np.where(old >= src, t.type(0), old + t.type(1)).astype(t)
        if op == "dec":
            return np.where((old == 0) | (old > src), src, old - t.type(1)).astype(t)
        bits = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return bits(old, src)


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
    writes_through_map(ctx, ops[0])

    def run(w):
        tm_a, src_a = tmap_fn(w), src_fn(w)
        coords_a = [c(w) for c in coord_fns]
        eng = w.eng
        groups = _groups(w, "bulk")
        w.effects += 1
        for lane in _lanes(w):
            bound = tensor_map(w, _at(tm_a, lane), span, what, lane, site)
            dtype = bound.fields.dtype
            if dtype not in VALID[op_name] or dtype == "float64":
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
        group_done(eng, op, groups)
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


def _bulk_reduce(ctx, call, info):
    """The non-tensor form: `size` bytes at shared `src` reduced into global `dst` element by element."""
    op_name = next((o for o in RED_OPS if o in info.quals), None)
    dtype = _PTX_TYPES.get(info.quals.get("type", ""))
    what = f"cp.reduce.async.bulk.{op_name}.{info.quals.get('type', '?')} (shared -> global)"
    span = call.span
    valid = VALID.get(op_name or "", ())
    if op_name is None or dtype is None or dtype not in valid or (dtype in ("float16", "bfloat16") and op_name ==
                                                                   "add" and "noftz" not in info.quals):
        raise UnsupportedTIRxError(what, span, "not a valid .redOp / .type combination of PTX ISA 9.7.9.25.4.2 "
                                               "(.add.f16/.bf16 need .noftz)")
    t = np.dtype(NP_DTYPE.get(dtype, dtype))
    flush = op_name == "add" and dtype == "float32"
    dst_fn, src_fn, size_fn = (ctx.expr(o) for o in call.operands[:3])
    site = ctx.site(call, "cp.reduce.async.bulk")

    def run(w):
        dst_a, src_a, size_a = dst_fn(w), src_fn(w), size_fn(w)
        eng = w.eng
        groups = _groups(w, "bulk")
        w.effects += 1
        for lane in _lanes(w):
            size, dst, src = _at(size_a, lane), _at(dst_a, lane), _at(src_a, lane)
            if size <= 0 or size % 16 or dst % 16 or src % 16:
                raise EngineError("misaligned_address", f"{what} needs 16-byte aligned addresses and a size that is "
                                  f"a multiple of 16; got dst {dst:#x}, src {src:#x}, size {size}", span)
            s_alloc, d_alloc = w.rt.shared.find(src, size), eng.globals.find(dst, size)
            if s_alloc is None or d_alloc is None:
                bad = src if s_alloc is None else dst
                raise EngineError("oob", f"{what} range [{bad:#x}, +{size}) is outside every "
                                         f"{'shared' if s_alloc is None else 'global'} allocation (lane {lane})",
                                  span, address=bad, lane=lane, size=size)
            op = _new_op(w, "tma.s2g", lane, site)
            groups.uncommitted[lane].append(op)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "lane": lane, "reduce": op_name})
            s_off, d_off = src - s_alloc.base, dst - d_alloc.base
            eng.access(None, site, s_alloc, s_off, size, "read", proxy="async", lanes=_one_lane(lane), actor=op.id,
                       iters=op.iters, warp=op.warp, cta=op.cta)

            def complete(op=op, s_alloc=s_alloc, d_alloc=d_alloc, s_off=s_off, d_off=d_off, size=size):
                src_v = s_alloc.data[s_off:s_off + size].copy().view(t)
                old_v = d_alloc.data[d_off:d_off + size].copy().view(t)
                if flush:
                    src_v, old_v = ftz(src_v), ftz(old_v)
                new = reduce_values(op_name, dtype, old_v, src_v)
                d_alloc.data[d_off:d_off + size] = np.ascontiguousarray(ftz(new) if flush else new).view(np.uint8)
                d_alloc.mark_written(d_off, size)
                eng.access(None, site, d_alloc, d_off, size, "rmw", proxy="async", order="relaxed", scope="gpu",
                           lanes=_one_lane(op.lane), actor=op.id, iters=op.iters, warp=op.warp, cta=op.cta)
                group_done(eng, op, groups)
            eng.enqueue(complete)
    return run, False


HANDLERS = {"cp.reduce.async.bulk.tensor": _reduce, "cp.reduce.async.bulk": _bulk_reduce}
