"""TMA tensor copies: `cp.async.bulk.tensor.{1..5}d` in tile mode (ptx-encodings §8).

Modeled like the bulk copies of `async_copy`: every executing lane issues its own
operation; the data moves when the scheduler delivers the completion.
- global -> shared (`.mbarrier::complete_tx::bytes`): the box is gathered from the
  tensor map's global allocation, OOB elements are filled (zero or NaN), every element
  lands at `swizzle(dst + offset)`, and complete_tx(full box bytes, filled elements
  included) is performed on the mbarrier operand.
- shared -> global (`.bulk_group`): the box is read from the swizzled shared layout
  (the read reported at issue: it may happen any time until `wait_group.read`) and
  only in-bounds elements are written; completion is tracked by the issuing
  thread's bulk groups (`cp.async.bulk.commit_group` / `wait_group`).
Access records (proxy "async", actor = the operation id) carry the exact byte ranges:
the swizzled shared footprint and the in-bounds global footprint, merged into
maximal contiguous runs.  A tensor-map or descriptor/op mismatch raises
`EngineError("invalid_descriptor")` naming the field, with the op's span.
"""
from __future__ import annotations

import numpy as np

import ir

from ..descriptors import byte_runs, tma_swizzle
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import CLUSTER_WINDOW, SHARED_BASE
from ..sync import SyncError
from ..tensormap import (TENSOR_MAPS, BoundTensorMap, BoxPlan, TensorMapError, TensorMapFields,
                         fill_bits, validate)
from ..tmap_values import NBYTES, validate_replaced
from .access import _find
from .async_copy import _groups, _new_op, _one_lane, group_done, issue_on_barrier
from .cluster import cluster_of
from .tma_plan import TilePlan, plan_box, words


def _lanes(w):
    return [int(k) for k in np.flatnonzero(w.active())]


def _at(value, lane):
    return int(value[lane]) if type(value) is np.ndarray else int(value)


def tensor_map(w, value: int, span, what: str, lane: int = 0, site: int = -1):
    """The validated, bound tensor map a tensor-map operand names: a parameter or host-encoded map, or a map
    value held in global or shared memory (numsim/tmap_values.py)."""
    bound = getattr(w.eng, "tensor_maps", {}).get(int(value))
    if bound is None and w.eng.map_store is not None:
        alloc = _find(w, int(value), 1, "generic", span)
        if alloc is not None and alloc.space == "shared":
            raise EngineError("invalid_address", f"{what}: the tensor map at {int(value):#x} is in shared memory; a "
                                                 f"TMA's tensor map is in .param, .const or .global (PTX ISA 5.5.8)",
                              span, address=int(value))
        if alloc is not None:
            off = (int(value) % CLUSTER_WINDOW if alloc.space == "shared" else int(value)) - alloc.base
            return _in_memory(w, alloc, off, int(value), span, what, lane, site)
    if bound is None:
        raise EngineError("invalid_descriptor", f"{what}: the tensor-map operand ({int(value):#x}) is not a "
                                                f"tensor-map parameter of the kernel", span, field="tensor_map")
    return _validated(bound, span, what)


def _in_memory(w, alloc, off: int, addr: int, span, what: str, lane: int, site: int):
    """A map value read from memory by lane `lane`'s TMA: the tensormap proxy's fences are checked, and the read of
    its 128 bytes is recorded as the lane's generic read (its order after the writer is Racecheck's)."""
    store = w.eng.map_store
    n = store.at(alloc, off, span, what)
    where = f"{alloc.name} + {off}"
    store.check_use(n, w.gid, lane, addr, where, span, what)
    w.eng.access(None, site, alloc, off, NBYTES, "read", lanes=_one_lane(lane), iters=tuple(w.iters), warp=w.gid,
                 cta=w.cta)
    src = store.values[n]
    bound = BoundTensorMap(f"{src.name} (at {where})", src.fields, error=src.error, alloc=src.alloc,
                           base_off=src.base_off)
    if src.error is None and not src.validated:
        try:
            validate_replaced(src)
            src.validated = True
        except TensorMapError as e:
            src.error = e
    bound.error, bound.validated = src.error, src.validated
    return _validated(bound, span, what)


def _validated(bound, span, what: str):
    err = bound.error
    if err is None and not bound.validated:
        try:
            validate(bound.fields)
            bound.validated = True
        except TensorMapError as e:
            err = e
    if err is not None:
        raise EngineError("invalid_descriptor", f"{what}: tensor map {bound.name}: {err.field}: {err.message}", span,
                          field=err.field, tensor_map=bound.name)
    return bound


def _plan(w, bound, dims, coords, smem, span, what, rt=None, gather4=False):
    f = bound.fields
    if gather4 and f.rank == 2 and f.box_shape[1] != 1:
        # the four rows are the box's rows: a map whose box spans several rows is outside what we modeled
        raise UnsupportedTIRxError(what, span, f".tile::gather4 through tensor map {bound.name}, whose box has "
                                               f"{f.box_shape[1]} rows (modeled: a one-row box, each of the four "
                                               f"row coordinates bringing one row)")
    if f.rank != dims:
        raise EngineError("invalid_descriptor", f"{what}: tensor map {bound.name} has rank {f.rank}, but the op is "
                                                f"cp.async.bulk.tensor.{dims}d; use a {f.rank}d copy or a rank-{dims} "
                                                f"map", span, field="rank", tensor_map=bound.name)
    if smem % 16:
        raise EngineError("misaligned_address", f"{what}: shared address {smem:#x} is not 16-byte aligned", span,
                          address=smem)
    if coords and int(coords[0]) % f.packed:
        raise UnsupportedTIRxError(what, span, f"tensor map {bound.name} packs {f.packed} elements per byte; a box "
                                               f"starting mid-byte (dim-0 coordinate {coords[0]}) is not modeled")
    plan = gather4_plan(f, coords, smem) if gather4 else plan_box(f, coords, smem)
    if isinstance(plan, TilePlan):      # a box inside the tensor: its bounds come with the plan
        glo, ghi, lo, hi = plan.lo_goff + bound.base_off, plan.hi_goff + bound.base_off, plan.lo_smem, plan.hi_smem
    else:
        goff = bound.base_off + plan.global_off[plan.inb]
        glo, ghi = (int(goff.min()), int(goff.max())) if goff.size else (0, -plan.esz)
        lo, hi = int(plan.smem_addr.min()), int(plan.smem_addr.max())
    if glo < 0 or ghi + plan.esz > bound.alloc.nbytes:
        # in bounds of the map but past its allocation (a host-encoded map is not checked against it)
        bad = ghi + plan.esz
        raise EngineError("oob", f"{what}: tensor map {bound.name} at coordinates {list(coords)} reaches byte {bad} "
                                 f"of its {bound.alloc.nbytes}-byte global allocation", span, tensor_map=bound.name,
                          size=bad)
    hi += plan.esz
    alloc = (rt or w.rt).shared.find(lo, hi - lo)
    if alloc is None:
        raise EngineError("oob", f"{what}: the {plan.inb.size * plan.esz}-byte box at shared [{lo:#x}, {hi:#x}) is "
                                 f"outside every "
                                 f"shared allocation", span, address=lo, size=hi - lo)
    return plan, alloc


def gather4_plan(f: TensorMapFields, coords, dst: int) -> BoxPlan:
    """Element addressing of a `.tile::gather4` load (PTX ISA §9.7.9.27.1.2, §5.5): coords are the column
    (dim 0) and four row indices (dim 1) of a rank-2 map; each row brings box[0] elements from its column on, and
    the four rows land one after the other at shared `dst` (row k at dst + k * box[0] * esz), then the swizzle
    XOR on the absolute address, as a 4-row box would."""
    esz, width = f.esz, f.box_shape[0]
    col = int(coords[0]) // f.packed       # a packed map's dim 0 is stored in bytes (see box_plan)
    x = col + np.arange(width, dtype=np.int64)
    rows = np.array([int(r) for r in coords[1:5]], dtype=np.int64)
    goff = (rows[:, None] * f.global_strides[0] + x[None, :] * esz).reshape(-1)
    inb = ((rows[:, None] >= 0) & (rows[:, None] < f.global_shape[1]) & (x[None, :] >= 0)
           & (x[None, :] < f.global_shape[0])).reshape(-1)
    soff = np.arange(4 * width, dtype=np.int64) * esz
    return BoxPlan(goff, inb, tma_swizzle(int(dst) + soff, f.swizzle), esz)


def _byte_index(offsets: np.ndarray, esz: int) -> np.ndarray:
    return (offsets[:, None] + np.arange(esz, dtype=np.int64)[None, :]).reshape(-1)


_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def read_elements(data: np.ndarray, offsets: np.ndarray, esz: int) -> np.ndarray:
    """The `esz`-byte elements of the bytes `data` at byte `offsets`, as an (n, esz) byte array.  Readable
    form: data[_byte_index(offsets, esz)].reshape(-1, esz); aligned elements move as whole words."""
    u = _WORDS.get(esz)
    if u is not None and not (offsets % esz).any():
        words = data[: data.size - data.size % esz].view(u)
        return words[offsets // esz].view(np.uint8).reshape(-1, esz)
    return data[_byte_index(offsets, esz)].reshape(-1, esz)


def write_elements(data: np.ndarray, offsets: np.ndarray, esz: int, values: np.ndarray) -> None:
    """Store the (n, esz) bytes `values` as the elements of `data` at byte `offsets` (the readable form:
    data[_byte_index(offsets, esz)] = values.reshape(-1))."""
    u = _WORDS.get(esz)
    if u is not None and not (offsets % esz).any():
        words = data[: data.size - data.size % esz].view(u)
        words[offsets // esz] = np.ascontiguousarray(values).view(u).reshape(-1)
        return
    data[_byte_index(offsets, esz)] = values.reshape(-1)


def _move_words(plan, bound, gdata, pool, marked, to_shared: bool) -> bool:
    """Copy a TilePlan box that moves as aligned 8-byte words (tma_plan.py) between global `gdata` and the shared
    pool, marking the destination allocation `marked` written; False (nothing done) for any other box."""
    if not isinstance(plan, TilePlan) or plan.words is None or bound.base_off % 8 or not gdata.flags.c_contiguous:
        return False
    gw, sw = plan.words[0] + bound.base_off // 8, plan.words[1]
    dst_base = marked.base - SHARED_BASE if to_shared else 0
    if dst_base % 8:
        return False
    g, p = words(gdata), words(pool)
    if to_shared:
        p[sw] = g[gw]
        marked.mark_words(sw - dst_base // 8, 8)
    else:
        g[gw] = p[sw]
        marked.mark_words(gw, 8)
    return True


def run_records(eng, op, alloc, starts, lengths, kind):
    """`async_records` of a footprint whose byte runs are known (kept with a cached plan or operand)."""
    if not eng.tracing:
        eng.stats["accesses"] += 1
        return
    eng.access_runs(op, op.site, alloc, starts, lengths, kind)


def async_records(eng, op, alloc, offsets, esz, kind):
    """Records of an async op's element footprint (byte offsets in `alloc`), merged into contiguous runs: one
    bulk record of the runs."""
    if not eng.tracing:
        eng.stats["accesses"] += 1
        return
    starts, lengths = byte_runs(offsets, esz)
    eng.access_runs(op, op.site, alloc, starts, lengths, kind)


def _g2s(ctx, call, info):
    dims = int(info.quals["dims"])
    gather4 = "tile::gather4" in info.quals
    ncoords = 5 if gather4 else dims      # gather4: a column and four rows
    ops = call.operands
    dst_fn, tmap_fn = ctx.expr(ops[0]), ctx.expr(ops[1])
    coord_fns = [ctx.expr(o) for o in ops[2:2 + ncoords]]
    bar_fn = ctx.expr(ops[2 + ncoords])
    multicast = "multicast::cluster" in info.quals
    pair = "cta_group::2" in info.quals
    mask_fn = ctx.expr(ops[3 + ncoords]) if multicast else None
    site = ctx.site(call, "cp.async.bulk.tensor")
    span = call.span
    what = (f"cp.async.bulk.tensor.{dims}d{'.tile::gather4' if gather4 else ''} "
            f"(global -> shared{'::cluster' if multicast else ''})")

    def run(w):
        dst_a, tm_a, bar_a = dst_fn(w), tmap_fn(w), bar_fn(w)
        mask_a = mask_fn(w) if multicast else None
        coords_a = [c(w) for c in coord_fns]
        eng = w.eng
        w.effects += 1
        for lane in _lanes(w):
            bound = tensor_map(w, _at(tm_a, lane), span, what, lane, site)
            coords = [_at(c, lane) for c in coords_a]
            for rt, dst, brt, baddr in _destinations(w, _at(dst_a, lane), _at(bar_a, lane),
                                                     None if mask_a is None else _at(mask_a, lane), span, what, pair):
                plan, d_alloc = _plan(w, bound, dims, coords, dst, span, what, rt, gather4)
                nbytes = plan.inb.size * plan.esz      # the whole box, filled elements included
                op, bar, gen = issue_on_barrier(w, "tma.g2s", lane, site, span, what, rt, brt, baddr, nbytes,
                                                {"tensor_map": bound.name, "coords": coords})
                eng.enqueue(_complete_g2s(w, op, bound, plan, d_alloc, nbytes, bar, baddr, span, gen, rt, brt))
    return run, False


def _destinations(w, dst: int, baddr: int, mask, span, what, pair=False):
    """(CTA runtime, shared::cta box address, barrier's CTA runtime, shared::cta barrier address) of each CTA a
    load writes: the CTA its shared::cluster destination names (its barrier in the same CTA, or with
    `.cta_group::2` in either CTA of that CTA's pair), or with `.multicast::cluster` every CTA of `mask` at the
    same CTA-relative offsets (PTX ISA 9.7.9.25.5.1)."""
    if mask is None:
        rt, local = cluster_of(w, dst, span, what)
        brt, blocal = cluster_of(w, baddr, span, what)
        if pair and brt.cluster_rank == rt.cluster_rank ^ 1:
            return [(rt, local, brt, blocal)]
        if brt is not rt:
            raise EngineError("invalid_address", f"{what}: the destination is in CTA rank {rt.cluster_rank} but its "
                                                 f"mbarrier is in CTA rank {brt.cluster_rank}; they must be in one "
                                                 f"CTA", span, address=dst, mbarrier=baddr)
        return [(rt, local, rt, blocal)]
    mask &= 0xFFFF
    size = w.rt.cluster_size
    if mask >> size:
        raise EngineError("invalid_address", f"{what}: ctaMask {mask:#06x} names CTA ranks beyond the cluster of "
                                             f"{size} CTA(s)", span, cta_mask=mask, cluster_size=size)
    dst_local, bar_local = dst % CLUSTER_WINDOW, baddr % CLUSTER_WINDOW
    if not pair:
        return [(w.rt.peer(r), dst_local, w.rt.peer(r), bar_local) for r in range(size) if mask >> r & 1]
    # .cta_group::2: each destination's signal goes to the CTA of its pair whose rank parity is that of the CTA
    # holding mbar (PTX ISA 9.7.9.25.5.1), so the loads of a pair can all count on its even CTA's barrier
    parity = cluster_of(w, baddr, span, what)[0].cluster_rank & 1
    if size % 2:
        raise EngineError("tcgen_cta_pair_misuse", f"{what}: .cta_group::2 in a cluster of {size} CTA(s) (CTA pairs "
                                                   f"need an even cluster size)", span, cluster_size=size)
    return [(w.rt.peer(r), dst_local, w.rt.peer((r & ~1) | parity), bar_local) for r in range(size) if mask >> r & 1]


def _complete_g2s(w, op, bound, plan, d_alloc, nbytes, bar, baddr, span, bound_gen, rt, brt):
    eng, cta, warp, pool = w.eng, brt.index, w.gid, rt.shared.pool
    f = bound.fields

    def complete():
        if rt.exited:
            raise EngineError("cluster_exit_while_peer_access",
                              f"TMA load into CTA {rt.index}'s shared memory (issued by warp {warp} of CTA {w.cta}) "
                              f"completes after CTA {rt.index} exited", span, peer_cta=rt.index, warp=warp)
        esz = plan.esz
        moved = _move_words(plan, bound, bound.alloc.data, pool, d_alloc, to_shared=True)
        tile = isinstance(plan, TilePlan)
        goff = bound.base_off + plan.global_off[plan.inb] if not moved or (eng.tracing and not tile) else None
        if not moved:
            n = plan.inb.size
            data = np.empty((n, esz), dtype=np.uint8)
            data[:] = np.array([fill_bits(f)], dtype=f"<u{esz}").view(np.uint8)
            data[plan.inb] = read_elements(bound.alloc.data, goff, esz)
            write_elements(pool, plan.smem_addr - SHARED_BASE, esz, data)
            d_alloc.mark_written(plan.smem_addr - d_alloc.base, esz)
        if tile:        # the template's runs, translated
            run_records(eng, op, bound.alloc, *plan.global_runs(bound.base_off), "read")
            run_records(eng, op, d_alloc, *plan.smem_runs(d_alloc.base), "write")
        else:
            async_records(eng, op, bound.alloc, goff, esz, "read")
            async_records(eng, op, d_alloc, plan.smem_addr - d_alloc.base if eng.tracing else None, esz, "write")
        op.done = True
        gen = bar.local_gen
        try:
            completed = bar.complete_tx(nbytes)
        except SyncError as err:
            raise EngineError(err.kind, err.message, span, warp=warp, **err.details) from None
        eng.touch(bar)
        eng.async_sync(w.cta, warp, "mbarrier.complete_tx", op.site, op.iters, barrier=("mbarrier", cta, baddr),
                       tx=nbytes, generation=gen, completed=completed,
                       details={"op": op.id, "async": True, "kind": op.kind, "bound_generation": bound_gen})
    return complete


def _s2g(ctx, call, info):
    dims = int(info.quals["dims"])
    ops = call.operands
    tmap_fn = ctx.expr(ops[0])
    coord_fns = [ctx.expr(o) for o in ops[1:1 + dims]]
    src_fn = ctx.expr(ops[1 + dims])
    site = ctx.site(call, "cp.async.bulk.tensor")
    span = call.span
    what = f"cp.async.bulk.tensor.{dims}d (shared -> global)"
    writes_through_map(ctx, ops[0])

    def run(w):
        tm_a, src_a = tmap_fn(w), src_fn(w)
        coords_a = [c(w) for c in coord_fns]
        eng = w.eng
        groups = _groups(w, "bulk")
        w.effects += 1
        for lane in _lanes(w):
            bound = tensor_map(w, _at(tm_a, lane), span, what, lane, site)
            coords = [_at(c, lane) for c in coords_a]
            plan, s_alloc = _plan(w, bound, dims, coords, _at(src_a, lane), span, what)
            op = _new_op(w, "tma.s2g", lane, site)
            groups.uncommitted[lane].append(op)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "lane": lane,
                                                      "tensor_map": bound.name, "coords": coords})
            # the source may be read any time until wait_group.read: reported at issue (see async_copy)
            if isinstance(plan, TilePlan):
                run_records(eng, op, s_alloc, *plan.smem_runs(s_alloc.base), "read")
            else:
                async_records(eng, op, s_alloc, plan.smem_addr - s_alloc.base, plan.esz, "read")
            eng.enqueue(_complete_s2g(w, op, bound, plan, s_alloc, groups))
    return run, False


def _complete_s2g(w, op, bound, plan, s_alloc, groups):
    eng, pool = w.eng, w.rt.shared.pool

    def complete():
        esz = plan.esz
        moved = _move_words(plan, bound, bound.alloc.data, pool, bound.alloc, to_shared=False)
        tile = isinstance(plan, TilePlan)
        goff = bound.base_off + plan.global_off[plan.inb] if not moved or (eng.tracing and not tile) else None
        if not moved:
            data = read_elements(pool, plan.smem_addr - SHARED_BASE, esz)
            write_elements(bound.alloc.data, goff, esz, data[plan.inb])
            bound.alloc.mark_written(goff, esz)
        if tile:
            run_records(eng, op, bound.alloc, *plan.global_runs(bound.base_off), "write")
        else:
            async_records(eng, op, bound.alloc, goff, esz, "write")
        group_done(eng, op, groups)
    return complete


def writes_through_map(ctx, operand) -> None:
    """A store or reduction through a tensor map: that map's bytes get a private copy (every map's, when the operand
    does not name its parameter).  An operand naming only maps the host prelude encodes marks those (the engine
    copies their buffers): the prelude's other buffers, only read through their maps, are bound without a copy."""
    func = ctx.cc.func
    handles = {p.name for p in func.params if p.kind == "handle"}
    host = {h.var.name for h in func.host if isinstance(h, ir.TensorMapEncode)}
    names = {n.name for n in ir.walk(operand) if isinstance(n, ir.Var)}
    named = (names & handles) | (names & host if names <= handles | host else set())
    ctx.cc.written_globals.update(named or {TENSOR_MAPS})

HANDLERS = {
    "cp.async.bulk.tensor.g2s": _g2s,
    "cp.async.bulk.tensor.s2g": _s2g,
}
