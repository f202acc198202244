"""tcgen05 / TMEM operations for cta_group::1 (ptx-encodings §1-3, §7; docs/semantics.md#tcgen05-and-tmem).

- `alloc` / `dealloc` / `relinquish_alloc_permit`: one whole warp (`.sync.aligned`);
  alloc blocks until enough columns are free, then stores the TMEM address to shared
  memory as a generic 4-byte store attributed to the warp's first lane.
- `ld` / `st` (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2; `.pack::16b` /
  `.unpack::16b` with 32x32b; `ld.red` .min/.max, whose reduction register `redval` is one
  more destination): asynchronous on hardware.  ld reads TMEM at issue, but its
  destination registers hold an undefined value until `wait::ld` writes the loaded one
  (modelcheck.numsim.registers: touching them in between is an error); st writes TMEM
  at issue.
  Each is an async op (its records carry the op id as actor); `wait::ld` / `wait::st`
  emit the ids they complete.  Each warp reaches only its lane quarter (warp % 4).
- `cp` (shared -> TMEM through a matrix descriptor) and `shift`: executed at
  completion, like `mma` (ops/umma.py).
- `commit` queues one mbarrier arrival behind the thread's earlier mma/cp/shift
  (completions are delivered FIFO); it is reported like `cp.async.mbarrier.arrive`: an
  "async.issue" event (details kind "tcgen05.commit", the op ids issued since the lane's
  previous commit) and, when it lands, an async "mbarrier.arrive".
- `fence::before_thread_sync` / `after_thread_sync`: sync events only.
Lifecycle and access violations are typed engine errors (see modelcheck.numsim.tmem); alloc,
dealloc and relinquish from part of a warp are `tcgen_partial_warp_participation`, ld/st/wait
from part of a warp `warp_collective_divergence` (a `.sync.aligned` collective, docs/semantics.md#warp-collectives).
"""
from __future__ import annotations

import numpy as np

import ir

from .. import registers
from .. import values as V
from ..descriptors import (LDST_REGS, DescriptorError, DescriptorUnsupported, SmemDescriptor, cp_rows, ldst_map,
                           matrix_addresses, tmem_split)
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import GLOBAL_BASE, SHARED_BASE, cluster_address
from ..runtime import Wait
from ..sync import SyncError
from ..tmem import TmemError, next_alloc_id, record_cells, record_rows, tmem_of
from . import require_full_warp
from .async_copy import _new_op
from .mbarrier import barrier_of
from .pair import alloc2, dealloc2, pair_peer, relinquish2
from .memory import _from_register, _to_register
from .tma import async_records

_MULTICAST = ("warpx2::02_13", "warpx2::01_23", "warpx4")


# --------------------------------------------------------------------------- shared helpers (also ops/umma.py)

class TcState:
    """Per-warp tcgen05 bookkeeping: per-lane ops since the last commit, the warp's unwaited ld/st ids."""

    __slots__ = ("since_commit", "pending_ld", "pending_st")

    def __init__(self):
        self.since_commit = [[] for _ in range(32)]
        self.pending_ld: list[int] = []
        self.pending_st: list[int] = []


def tc_state(w) -> TcState:
    if w.groups is None:
        w.groups = {}
    s = w.groups.get("tcgen05")
    if s is None:
        s = w.groups["tcgen05"] = TcState()
    return s


def lanes_of(w) -> list[int]:
    return [int(k) for k in np.flatnonzero(w.active())]


def at(value, lane) -> int:
    return int(value[lane]) if type(value) is np.ndarray else int(value)


def tmem_error(err: TmemError, span, **extra) -> EngineError:
    return EngineError(err.kind, err.message, span, **err.details, **extra)


def descriptor_error(err: DescriptorError, what: str, value: int, span, descriptor: str):
    if isinstance(err, DescriptorUnsupported):
        return UnsupportedTIRxError(what, span, f"{descriptor} descriptor {value:#x}: {err.field}: {err.message}")
    return EngineError("invalid_descriptor", f"{what}: {descriptor} descriptor {value:#x}: {err.field}: "
                                             f"{err.message}", span, field=err.field, descriptor=descriptor)


def smem_descriptor(value: int, what: str, span) -> SmemDescriptor:
    d = SmemDescriptor.decode(value)
    try:
        d.validate()
    except DescriptorError as err:
        raise descriptor_error(err, what, value, span, "shared-memory matrix") from None
    return d


def smem_footprint(w, addrs: np.ndarray, esz: int, span, what: str, rt=None):
    """[(allocation, byte offsets in it)] for elements at absolute shared `addrs` of CTA `rt` (default: `w`'s);
    oob if any byte is outside."""
    flat = np.asarray(addrs, dtype=np.int64).reshape(-1)
    lo, hi = int(flat.min()), int(flat.max()) + esz
    shared = (rt or w.rt).shared
    a = shared.find(lo, hi - lo) if lo < GLOBAL_BASE else None
    if a is not None:
        return [(a, flat - a.base)]
    out: dict[int, tuple] = {}
    for addr in np.unique(flat).tolist():
        b = shared.find(addr, esz)
        if b is None:
            raise EngineError("oob", f"{what}: shared operand bytes [{addr:#x}, +{esz}) are outside every shared "
                                     f"allocation", span, address=addr)
        out.setdefault(b.id, (b, []))[1].append(addr - b.base)
    return [(b, np.array(offs, dtype=np.int64)) for b, offs in out.values()]


def whole_warp(w, what: str, span) -> None:
    """alloc/dealloc/relinquish need all 32 threads of one warp (a TMEM lifecycle rule,
    docs/semantics.md#tcgen05-and-tmem)."""
    if w.nthreads == 32 and (w.mask is None or w.mask.all()):
        return
    missing = [int(k) for k in np.flatnonzero(~w.active())]
    raise EngineError("tcgen_partial_warp_participation",
                      f"{what} is .sync.aligned: all 32 threads of the warp must execute it, but lanes "
                      f"{_lane_text(missing)} do not; issue it from the whole warp (outside lane-dependent branches)",
                      span, missing_lanes=missing)


def _lane_text(lanes):
    return f"{lanes[0]}..{lanes[-1]} ({len(lanes)} lanes)" if len(lanes) > 6 else ", ".join(map(str, lanes))


def warp_uniform(value, w, what: str, span) -> int:
    if type(value) is not np.ndarray:
        return int(value)
    vals = value[w.active()]
    if (vals == vals[0]).all():
        return int(vals[0])
    raise EngineError("tcgen_collective_argument_mismatch",
                      f"{what} must be the same on every thread of the warp; got {sorted(set(vals.tolist()))[:4]}",
                      span)


# --------------------------------------------------------------------------- allocation


def _alloc(ctx, call, info):
    dst_fn, n_fn = (ctx.expr(o) for o in call.operands)
    site = ctx.site(call, "tcgen05.alloc")
    span = call.span
    pair = info.quals.get("cta_group") == "2"

    def run(w):
        whole_warp(w, "tcgen05.alloc", span)
        dst = warp_uniform(dst_fn(w), w, "tcgen05.alloc destination", span)
        ncols = warp_uniform(n_fn(w), w, "tcgen05.alloc column count", span)
        if pair:
            a = yield from alloc2(w, dst, ncols, span, site)
            _alloc_written(w, site, dst, a, ncols, False, pair)
            return
        tm = tmem_of(w.rt)
        slot = w.rt.shared.find(dst, 4) if dst < GLOBAL_BASE else None
        if slot is None:
            raise EngineError("oob", f"tcgen05.alloc destination {dst:#x} is not a 4-byte location in shared memory",
                              span, address=dst)
        if dst % 4:
            raise EngineError("misaligned_address", f"tcgen05.alloc destination {dst:#x} is not 4-byte aligned", span)
        blocked = False
        while True:
            try:
                tm.check_request(ncols)
            except TmemError as err:
                raise tmem_error(err, span) from None
            col = tm.first_fit(ncols)
            if col is not None:
                break
            blocked = True
            yield Wait(tm, lambda: tm.first_fit(ncols) is not None,
                       lambda: f"await tcgen05.alloc of {ncols} columns ({tm.describe()})", site)
        a = tm.allocate(col, ncols, next_alloc_id(w.eng), w.gid, site)
        w.eng.touch(tm)
        _alloc_written(w, site, dst, a, ncols, blocked, False)
    return run, True


def _alloc_written(w, site, dst, a, ncols, blocked, pair) -> None:
    """The allocated address stored to this CTA's slot (a generic write of the warp's first lane), and the event."""
    slot = w.rt.shared.find(dst, 4)
    eng = w.eng
    off = dst - slot.base
    slot.data[off:off + 4] = np.array([a.col0], dtype="<u4").view(np.uint8)
    slot.mark_written(off, 4)
    first = np.zeros(32, dtype=np.bool_)
    first[0] = True
    eng.access(w, site, slot, off, 4, "write", lanes=first)
    w.effects += 1
    details = {"taddr": a.col0, "ncols": ncols, "allocation": a.id, "slot": dst, "blocked": blocked}
    if pair:
        details["cta_group"] = 2
    eng.sync(w, "tcgen05.alloc", site, details=details)


def _dealloc(ctx, call, info):
    t_fn, n_fn = (ctx.expr(o) for o in call.operands)
    site = ctx.site(call, "tcgen05.dealloc")
    span = call.span
    pair = info.quals.get("cta_group") == "2"

    def run(w):
        whole_warp(w, "tcgen05.dealloc", span)
        taddr = warp_uniform(t_fn(w), w, "tcgen05.dealloc address", span) & 0xFFFFFFFF
        ncols = warp_uniform(n_fn(w), w, "tcgen05.dealloc column count", span)
        if pair:
            a = yield from dealloc2(w, taddr, ncols, span, site)
        else:
            tm = tmem_of(w.rt)
            try:
                a = tm.release(taddr, ncols)
            except TmemError as err:
                raise tmem_error(err, span) from None
            w.eng.touch(tm)
        w.effects += 1
        w.eng.sync(w, "tcgen05.dealloc", site, details={"taddr": taddr, "ncols": ncols, "allocation": a.id})
    return run, True


def _relinquish(ctx, call, info):
    site = ctx.site(call, "tcgen05.relinquish_alloc_permit")
    span = call.span
    pair = info.quals.get("cta_group") == "2"

    def run(w):
        whole_warp(w, "tcgen05.relinquish_alloc_permit", span)
        if pair:
            yield from relinquish2(w, span, site)
        else:
            tmem_of(w.rt).relinquished = True
        w.effects += 1
        w.eng.sync(w, "tcgen05.relinquish_alloc_permit", site)
    return run, True


# --------------------------------------------------------------------------- ld / st / wait


def _ldst_cells(w, shape, dl, dc, taddr, split, pack, span, what):
    """(lanes, cols) of every register (32 x R, doubled columns for pack/unpack) and the allocation."""
    l0, c0 = tmem_split(taddr)
    lanes, cols = l0 + dl, c0 + dc
    if shape == "16x32bx2":
        l1, c1 = tmem_split(taddr + split)
        lanes[16:], cols[16:] = l1 + dl[16:], c1 + dc[16:]
    if pack:
        lanes = np.repeat(lanes, 2, axis=1)
        cols = np.stack([cols, cols + 1], axis=2).reshape(32, -1)
    q = w.index % 4
    # (the ufunc reductions themselves: ndarray.min / max add a Python wrapper per call)
    lo, hi = int(np.minimum.reduce(lanes, axis=None)), int(np.maximum.reduce(lanes, axis=None))
    if 0 <= lo and hi < 128 and (lo < 32 * q or hi >= 32 * q + 32):
        raise EngineError("tmem_access_invalid_target",
                          f"{what}: warp {w.index} of the CTA is warp {q} of its warpgroup and may access TMEM lanes "
                          f"{32 * q}-{32 * q + 31} only; this access touches lanes {lo}-{hi}", span,
                          lanes=[lo, hi], quarter=q)
    try:
        alloc = tmem_of(w.rt).covering(lanes, cols, what)
    except TmemError as err:
        raise tmem_error(err, span) from None
    return lanes, cols, alloc


def ld_destinations(call, info) -> set[str]:
    """The local buffers a tcgen05.ld writes (its first LDST_REGS[shape] * num operands)."""
    regs = LDST_REGS[info.quals["shape"]] * int(info.quals["num"][1:]) + ("red" in info.quals)
    return {o.buffer for o in call.operands[:regs] if isinstance(o, ir.Load)}


_RED_TYPES = {"f32": np.float32, "s32": np.int32, "u32": np.uint32}


def ld_reduction(vals: np.ndarray, quals) -> np.ndarray:
    """tcgen05.ld.red's `redval` (PTX ISA 9.7.18.8.3; model: the .min/.max of each thread's loaded values, of
    their absolute values with `.abs`; a NaN input makes the result NaN with `.NaN` and is skipped without it,
    as min/max treat NaN): (32,) uint32 bit patterns of the result."""
    x = vals.view(_RED_TYPES[quals["type"]])
    if "abs" in quals:
        x = np.abs(x)
    if quals["type"] != "f32":
        out = (x.min(axis=1) if "min" in quals else x.max(axis=1)).astype(x.dtype)
        return out.view(np.uint32)
    with np.errstate(invalid="ignore"):
        skip = np.fmin if "min" in quals else np.fmax
        out = skip.reduce(x, axis=1)
        if "NaN" in quals:
            out = np.where(np.isnan(x).any(axis=1), np.float32(np.nan), out)
    return out.astype(np.float32).view(np.uint32)


def _ldst(action):
    def compile_(ctx, call, info):
        shape, num = info.quals["shape"], int(info.quals["num"][1:])
        pack = ("pack::16b" if action == "ld" else "unpack::16b") in info.quals
        regs = LDST_REGS[shape] * num
        ops = call.operands
        red = "red" in info.quals
        if action == "ld":
            dsts = [ctx.lvalue(o, "tcgen05.ld") for o in ops[:regs + red]]
            # each destination's numpy type where it is 4 bytes wide (the b32 bits viewed), else None (converted)
            dst_views = [np.dtype(V.NP_DTYPE[d.dtype]) if d.dtype != "bool" and np.dtype(V.NP_DTYPE[d.dtype]).itemsize
                         == 4 else None for d in dsts]
            rest = ops[regs + red:]
        else:
            rest = ops[:len(ops) - regs]
            srcs = [(ctx.expr(o), o.dtype) for o in ops[len(ops) - regs:]]
        taddr_fn = ctx.expr(rest[0])
        split_fn = ctx.expr(rest[1]) if shape == "16x32bx2" else (lambda w: 0)
        dl, dc = ldst_map(shape, num)
        if pack:
            dc = 2 * dc
        what = f"tcgen05.{action}{'.red' if red else ''}.{shape}.x{num}" + (
            ".pack::16b" if pack and action == "ld" else ".unpack::16b" if pack else "")
        site = ctx.site(call, f"tcgen05.{action}")
        span = call.span
        kind = "read" if action == "ld" else "write"

        def run(w):
            require_full_warp(w, what + " (.sync.aligned)", span)
            if pack and shape != "32x32b":
                raise UnsupportedTIRxError(what, span, "16-bit packing is modeled for the 32x32b shape only")
            taddr = warp_uniform(taddr_fn(w), w, f"{what} address", span) & 0xFFFFFFFF
            split = warp_uniform(split_fn(w), w, f"{what} immHalfSplitoff", span)
            lanes, cols, alloc = _ldst_cells(w, shape, dl, dc, taddr, split, pack, span, what)
            cells = tmem_of(w.rt).cells
            eng = w.eng
            op = _new_op(w, f"tcgen05.{action}", 0, site)
            st = tc_state(w)
            (st.pending_ld if action == "ld" else st.pending_st).append(op.id)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "taddr": taddr, "shape": shape,
                                                      "num": num, "allocation": alloc.id})
            if action == "ld":
                vals = cells[lanes, cols]
                if pack:
                    vals = (vals[:, 0::2] & 0xFFFF) | ((vals[:, 1::2] & 0xFFFF) << 16)
                record_cells(eng, site, alloc, lanes, cols, kind, w=w, op=op)
                # the registers hold the values only once tcgen05.wait::ld returns (numsim.registers)
                if red:      # the reduction register after the loaded ones
                    vals = np.concatenate([vals, ld_reduction(vals.astype(np.uint32), info.quals)[:, None]], axis=1)
                # one register per row of a C-ordered copy: each row is the register's 32 lanes, contiguous (a
                # destination of the b32 width views them, as `_to_register` does; others convert there)
                rows = np.ascontiguousarray(vals.T, dtype=np.uint32)
                results = [(d, rows[r].view(np_t) if np_t is not None else _to_register(rows[r], "b32", d.dtype))
                           for r, (d, np_t) in enumerate(zip(dsts, dst_views))]
                later = [(d, v) for d, v in results if d.slot is not None]
                for d, v in results:
                    if d.slot is None:      # a memory destination (not a register): written at issue
                        d(w, v)
                registers.issue(w, op.id, site, what, "tcgen05.wait::ld", later, read_completes=True)
            else:
                rows = np.empty((regs, 32), dtype=np.uint32)
                for r, (fn, dtype) in enumerate(srcs):
                    rows[r] = _from_register(fn(w), dtype, "b32")      # (a uniform value broadcasts to the lanes)
                vals = rows.T
                if pack:
                    vals = np.stack([vals & 0xFFFF, vals >> 16], axis=2).reshape(32, -1)
                cells[lanes, cols] = vals
                record_cells(eng, site, alloc, lanes, cols, kind, w=w, op=op)
            op.done = True
            w.effects += 1
        return run, False
    return compile_


def _wait(action):
    def compile_(ctx, call, info):
        site = ctx.site(call, f"tcgen05.wait::{action}")
        span = call.span

        def run(w):
            require_full_warp(w, f"tcgen05.wait::{action} (.sync.aligned)", span)
            st = tc_state(w)
            done = st.pending_ld if action == "ld" else st.pending_st
            if action == "ld":
                st.pending_ld = []
                registers.complete(w, done)
            else:
                st.pending_st = []
            w.effects += 1
            w.eng.sync(w, f"tcgen05.wait::{action}", site, details={"ops": done})
        return run, False
    return compile_


def _fence(kind):
    def compile_(ctx, call, info):
        site = ctx.site(call, kind)

        def run(w):
            w.eng.sync(w, kind, site)
        return run, False
    return compile_


# --------------------------------------------------------------------------- commit


def _commit(ctx, call, info):
    bar_fn = ctx.expr(call.operands[0])
    mask_fn = ctx.expr(call.operands[1]) if len(call.operands) > 1 else None
    site = ctx.site(call, "tcgen05.commit")
    span = call.span

    def run(w):
        a_all = bar_fn(w)
        m_all = mask_fn(w) if mask_fn is not None else None
        eng = w.eng
        st = tc_state(w)
        w.effects += 1
        for lane in lanes_of(w):
            baddr = at(a_all, lane)
            if m_all is None:
                targets = [baddr]
            else:
                # .multicast::cluster: one arrival on the barrier at the same offset in each CTA of the mask
                mask = at(m_all, lane) & 0xFFFF
                if mask >> w.rt.cluster_size:
                    raise EngineError("invalid_address", f"tcgen05.commit: ctaMask {mask:#06x} names CTA ranks "
                                                         f"beyond the cluster of {w.rt.cluster_size} CTA(s)", span,
                                      cta_mask=mask)
                targets = [cluster_address(r, baddr) for r in range(w.rt.cluster_size) if mask >> r & 1]
            ids = [op.id for op in st.since_commit[lane]]
            st.since_commit[lane] = []
            for target in targets:
                bar = barrier_of(w, target, span, "tcgen05.commit", remote=True)
                try:
                    bar.require_live("tcgen05.commit")
                except SyncError as err:
                    raise EngineError(err.kind, err.message, span, **err.details) from None
                op = _new_op(w, "tcgen05.commit", lane, site)
                gen = bar.local_gen
                # like cp.async.mbarrier.arrive: an issue now, one arrival (no pending increment) when it lands
                eng.sync(w, "async.issue", site, barrier=("mbarrier", bar.cta, bar.addr), count=1, generation=gen,
                         details={"op": op.id, "kind": op.kind, "lane": lane, "noinc": True, "ops": ids,
                                  "covers": _COVERS})
                eng.enqueue(_arrive(eng, op, bar, bar.addr, ids, gen, span))
    return run, False


_COVERS = "all prior tcgen05.mma/cp/shift of the lane"


def _arrive(eng, op, bar, baddr, ids, bound_gen, span):
    def complete():
        gen = bar.local_gen
        try:
            completed = bar.arrive(1)
        except SyncError as err:
            raise EngineError(err.kind, err.message, span, warp=op.warp, **err.details) from None
        op.done = True
        eng.touch(bar)
        eng.async_sync(op.cta, op.warp, "mbarrier.arrive", op.site, op.iters, barrier=("mbarrier", bar.cta, baddr),
                       count=1, generation=gen, completed=completed,
                       details={"async": True, "kind": op.kind, "op": op.id, "lane": op.lane, "ops": ids,
                                "covers": _COVERS, "bound_generation": bound_gen})
    return complete


# --------------------------------------------------------------------------- cp / shift (executed at completion)


def _issue(w, kind, lane, site, details, complete_fn):
    op = _new_op(w, kind, lane, site)
    tc_state(w).since_commit[lane].append(op)
    w.eng.sync(w, "async.issue", site, details={"op": op.id, "kind": kind, "lane": lane, **details})
    w.eng.enqueue(lambda: complete_fn(op))
    return op


def _complete_event(eng, op):
    op.done = True
    eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                   details={"op": op.id, "kind": op.kind, "lane": op.lane})


def _cp(ctx, call, info):
    t_fn, d_fn = (ctx.expr(o) for o in call.operands)
    shape = info.quals["shape"]
    multicast = next((m for m in _MULTICAST if m in info.quals), None)
    pair = info.quals.get("cta_group") == "2"
    site = ctx.site(call, "tcgen05.cp")
    span = call.span
    what = f"tcgen05.cp{'.cta_group::2' if pair else ''}.{shape}" + (f".{multicast}" if multicast else "")

    def run(w):
        t_all, d_all = t_fn(w), d_fn(w)
        w.effects += 1
        try:
            rows, chunks, dests = cp_rows(shape, multicast)
        except DescriptorError as err:      # e.g. 64x128b without .warpx2 (the real parser rejects it too)
            raise UnsupportedTIRxError(what, span, err.message) from None
        if pair:       # either CTA of the pair may issue it (no issuer rule for cp in the cited sources)
            ctas = [w.rt, pair_peer(w, what, span)]
        else:
            ctas = [w.rt]
        for lane in lanes_of(w):
            taddr, dval = at(t_all, lane) & 0xFFFFFFFF, at(d_all, lane)
            desc = smem_descriptor(dval, what, span)
            try:
                addrs = matrix_addresses(desc, rows, chunks, 16, False)
            except DescriptorError as err:
                raise descriptor_error(err, what, dval, span, "shared-memory matrix") from None
            l0, c0 = tmem_split(taddr)
            tlanes = np.concatenate([l0 + d for d in dests])
            cols = np.arange(c0, c0 + 4 * chunks)
            # cta_group::2: each CTA of the pair copies its own shared memory at the descriptor's address into its
            # own TMEM at taddr (docs/semantics.md#cta-pairs-cta_group2)
            targets = []
            for rt in ctas:
                parts = smem_footprint(w, addrs, 16, span, what, rt)
                tm = tmem_of(rt)
                try:
                    alloc = tm.covering(tlanes, cols, f"{what} (CTA rank {rt.cluster_rank})" if pair else what)
                except TmemError as err:
                    raise tmem_error(err, span) from None
                targets.append((rt, parts, tm, alloc))

            def complete(op, addrs=addrs, l0=l0, c0=c0, tlanes=tlanes, cols=cols, targets=targets):
                eng = w.eng
                idx = (addrs.reshape(-1, 1) - SHARED_BASE + np.arange(16)).reshape(-1)
                for rt, parts, tm, alloc in targets:
                    if pair and rt.exited:
                        raise EngineError("cluster_exit_while_peer_access", f"{what} (issued by warp {op.warp} of "
                                                                            f"CTA {op.cta}) completes after CTA "
                                                                            f"{rt.index} exited", span,
                                          peer_cta=rt.index, warp=op.warp)
                    try:
                        tm.covering(tlanes, cols, what)
                    except TmemError as err:
                        raise tmem_error(err, span, warp=op.warp) from None
                    data = rt.shared.pool[idx].reshape(rows, chunks * 16).view("<u4")
                    for a, offs in parts:
                        async_records(eng, op, a, offs, 16, "read")
                    for d in dests:
                        tm.cells[np.ix_(l0 + d, cols)] = data
                        record_rows(eng, op.site, alloc, l0 + d, c0, 4 * chunks, "write", op)
                _complete_event(eng, op)
            details = {"taddr": taddr, "shape": shape, "allocation": targets[0][3].id}
            if pair:
                details.update(cta_group=2, peer_allocation=targets[1][3].id, peer_cta=targets[1][0].index)
            _issue(w, "tcgen05.cp", lane, site, details, complete)
    return run, False


def _shift(ctx, call, info):
    t_fn = ctx.expr(call.operands[0])
    site = ctx.site(call, "tcgen05.shift")
    span = call.span

    def run(w):
        t_all = t_fn(w)
        w.effects += 1
        for lane in lanes_of(w):
            taddr = at(t_all, lane) & 0xFFFFFFFF
            l0, c0 = tmem_split(taddr)
            if l0 % 32:
                raise EngineError("tmem_access_invalid_target", f"tcgen05.shift: the lane of taddr ({l0}) must be "
                                                                f"aligned to 32", span, lane=l0)
            tm = tmem_of(w.rt)
            rows, cols = np.arange(l0, l0 + 32), np.arange(c0, c0 + 8)
            try:
                alloc = tm.covering(rows, cols, "tcgen05.shift")
            except TmemError as err:
                raise tmem_error(err, span) from None

            def complete(op, l0=l0, c0=c0, alloc=alloc, tm=tm, rows=rows, cols=cols):
                try:
                    tm.covering(rows, cols, "tcgen05.shift")
                except TmemError as err:
                    raise tmem_error(err, span, warp=op.warp) from None
                # model: the 32-byte element (8 columns) of rows l0..l0+30 moves down one row; row l0 keeps its value
                tm.cells[l0 + 1:l0 + 32, c0:c0 + 8] = tm.cells[l0:l0 + 31, c0:c0 + 8].copy()
                record_rows(w.eng, op.site, alloc, rows[:-1], c0, 8, "read", op)
                record_rows(w.eng, op.site, alloc, rows[1:], c0, 8, "write", op)
                _complete_event(w.eng, op)
            _issue(w, "tcgen05.shift", lane, site, {"taddr": taddr, "allocation": alloc.id}, complete)
    return run, False


HANDLERS = {
    "tcgen05.alloc": _alloc,
    "tcgen05.dealloc": _dealloc,
    "tcgen05.relinquish_alloc_permit": _relinquish,
    "tcgen05.ld": _ldst("ld"),
    "tcgen05.st": _ldst("st"),
    "tcgen05.wait::ld": _wait("ld"),
    "tcgen05.wait::st": _wait("st"),
    "tcgen05.fence::before_thread_sync": _fence("tcgen05.fence::before_thread_sync"),
    "tcgen05.fence::after_thread_sync": _fence("tcgen05.fence::after_thread_sync"),
    "tcgen05.commit": _commit,
    "tcgen05.cp": _cp,
    "tcgen05.shift": _shift,
}
