"""Warp collectives: warp_sync / bar.warp.sync, elect.sync, shuffles, votes, ballots,
activemask, warp reductions.  `.sync` collectives need every lane of the member mask
active (else `warp_collective_divergence`), less the exited ones for shuffles and votes;
the elected lane is the lowest active lane; a shuffle from a lane outside the segment
returns the lane's own value.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from . import reject_exited_sources, require_full_warp, uniform

FULL = 0xFFFFFFFF


def _membermask(fn, w, span):
    if fn is None:
        return FULL
    return int(uniform(fn(w), w, "member mask", span)) & FULL


def _warp_sync(ctx, call, info):
    mask_fn = ctx.expr(call.operands[0]) if call.operands else None
    site = ctx.site(call, "warp_sync")
    span = call.span

    def run(w):
        mm = _membermask(mask_fn, w, span)
        require_full_warp(w, "warp_sync", span, mm)
        w.effects += 1
        w.eng.sync(w, "warp_sync", site, details={"membermask": mm})
    return run, False


def _lowest_active(w) -> int:
    return 0 if w.mask is None else int(np.flatnonzero(w.mask)[0])


def _elect_cuda(ctx, call, info):
    mask_fn = ctx.expr(call.operands[0]) if call.operands else None
    span = call.span

    def run(w):
        mm = _membermask(mask_fn, w, span)
        require_full_warp(w, "elect_sync", span, mm)
        out = np.zeros(32, dtype=np.uint32)
        out[_lowest_active(w)] = 1
        return out
    return run, False


def _elect_ptx(ctx, call, info):
    d = ctx.lvalue(call.operands[0], "elect.sync")
    p = ctx.lvalue(call.operands[1], "elect.sync")
    mask_fn = ctx.expr(call.operands[2])
    span = call.span

    def run(w):
        mm = _membermask(mask_fn, w, span)
        require_full_warp(w, "elect.sync", span, mm)
        leader = _lowest_active(w)
        d(w, leader)
        flag = np.zeros(32, dtype=np.uint32)
        flag[leader] = 1
        p(w, flag)
    return run, False


def _gather(value, src: np.ndarray):
    if type(value) is not np.ndarray:
        return value
    return value[src]


def _cuda_source(kind: str, lane: np.ndarray, arg, width: int) -> np.ndarray:
    seg = (lane // width) * width
    if kind == "idx":
        return seg + (np.asarray(arg) % width)
    if kind == "up":
        return np.where(lane - seg >= arg, lane - arg, lane)
    if kind == "down":
        return np.where(lane - seg + arg < width, lane + arg, lane)
    src = lane ^ np.asarray(arg)
    # shfl.bfly with c = ((32 - width) << 8) | 31: a source in an earlier segment is allowed, a later one is not
    return np.where(src < seg + width, src, lane)


def _cuda_shuffle(kind):
    def compile_(ctx, call, info):
        ops = [ctx.expr(o) for o in call.operands]
        span = call.span

        def run(w):
            mm = int(uniform(ops[0](w), w, "member mask", span)) & FULL
            require_full_warp(w, info.name, span, mm, exited_ok=True)
            value = ops[1](w)
            arg = ops[2](w)
            width = int(uniform(ops[3](w), w, "width", span)) if len(ops) > 3 else 32
            if width not in (1, 2, 4, 8, 16, 32):
                width = 32
            if type(value) is not np.ndarray and kind == "idx" and type(arg) is not np.ndarray and width == 32:
                return value    # every lane reads the same lane of a uniform value
            src = _cuda_source(kind, V.LANES, arg, width)
            reject_exited_sources(w, src, info.name, span)
            return _gather(V.as_vec(value, call.operands[1].dtype), src.astype(np.int64) % 32)
        return run, False
    return compile_


def _ptx_shuffle(ctx, call, info):
    dsts = [ctx.lvalue(call.operands[0], "shfl.sync")]
    rest = call.operands[1:]
    if len(call.operands) == 6:
        dsts.append(ctx.lvalue(call.operands[1], "shfl.sync"))
        rest = call.operands[2:]
    a_fn, b_fn, c_fn, m_fn = (ctx.expr(o) for o in rest)
    mode = info.quals["mode"]
    a_dtype = rest[0].dtype
    span = call.span

    lanes_of: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}   # uniform (b, c) -> (source lane, in segment)
    tiles: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}  # ... tiled over a cohort's n lanes

    def run(w):
        mm = int(uniform(m_fn(w), w, "member mask", span)) & FULL
        require_full_warp(w, "shfl.sync", span, mm, exited_ok=True)
        b, c = b_fn(w), c_fn(w)
        if type(b) is not np.ndarray and type(c) is not np.ndarray:
            key = (int(b), int(c))
            hit = lanes_of.get(key)
            if hit is None:
                hit = lanes_of[key] = _shuffle_lanes(mode, np.asarray(b), np.asarray(c))
            j, ok = hit
        else:
            j, ok = _shuffle_lanes(mode, np.asarray(b), np.asarray(c))
        reject_exited_sources(w, j, "shfl.sync", span)
        value = V.as_vec(a_fn(w), a_dtype)
        dsts[0](w, value[j])
        if len(dsts) > 1:
            dsts[1](w, ok.astype(np.uint32))

    def cohort(w) -> bool:
        """A CTA cohort's warp (numsim.cohort) with every lane of every row active and uniform operands: the
        shuffle of each 32-lane row at once.  False: not that case (the cohort runs `run` row by row)."""
        mm = m_fn(w)
        if w.mask is not None and not _rows_members_active(w, mm):
            return False        # some row's `require_full_warp` fails (or a member mask varies): per row
        b, c = b_fn(w), c_fn(w)
        n = w.FULL.size
        if type(b) is not np.ndarray and type(c) is not np.ndarray:
            key3 = (int(b), int(c), n)
            tiled = tiles.get(key3)
            if tiled is None:
                hit = lanes_of.get(key3[:2])
                if hit is None:
                    hit = lanes_of[key3[:2]] = _shuffle_lanes(mode, np.asarray(b), np.asarray(c))
                # never written in place: `src` below is a new array, `ok` is cast to a new one
                tiled = tiles[key3] = (np.tile(hit[0], n // 32), np.tile(hit[1], n // 32))
            j, ok = tiled
        else:
            j, ok = _shuffle_lanes(mode, np.asarray(b), np.asarray(c), w.lane)
        src = w.lane_base + j
        if w.exited is not None and (w.active() & w.exited[src]).any():
            return False        # an active lane reads an exited one: `run` reports it, row by row
        value = V.as_vec(a_fn(w), a_dtype, n)
        dsts[0](w, value[src])
        if len(dsts) > 1:
            dsts[1](w, ok.astype(np.uint32))
        return True
    run.cohort = cohort
    return run, False


def _rows_members_active(w, mm) -> bool:
    """Each CTA row of a cohort warp with active lanes: its member mask uniform over them, and every member lane
    active or exited -- `require_full_warp(..., exited_ok=True)` and `uniform` passing in every row."""
    act = w.mask.reshape(-1, 32)
    if type(mm) is not np.ndarray and int(mm) & FULL == FULL and w.full_mask is None and w.exited is None:
        # every lane a member, none exited: each row with an active lane has all 32 active
        return bool((act.all(axis=1) == act.any(axis=1)).all())
    live = act.any(axis=1)
    if type(mm) is np.ndarray:
        rows = (mm.astype(np.int64) & FULL).reshape(-1, 32)
        first = rows[np.arange(rows.shape[0]), np.argmax(act, axis=1)]
        if (act & (rows != first[:, None])).any():
            return False
    else:
        first = np.full(act.shape[0], int(mm) & FULL, dtype=np.int64)
    members = ((first[:, None] >> V.LANES.astype(np.int64)) & 1).astype(np.bool_) & live[:, None]
    if w.full_mask is not None:
        members &= w.full_mask.reshape(-1, 32)
    if w.exited is not None:
        members &= ~w.exited.reshape(-1, 32)
    return not (members & ~act).any()


def _shuffle_lanes(mode: str, b: np.ndarray, c: np.ndarray, lane: np.ndarray = V.LANES):
    """(source lane of each lane, whether it lies in the lane's segment) of shfl.sync `mode` with lane
    operand b and clamp/segment operand c (PTX ISA shfl.sync); out of the segment a lane reads itself.
    `lane`: the lanes' ids in their warps (a CTA cohort's rows: numsim.cohort)."""
    b = b & 31
    cval, segmask = c & 31, (c >> 8) & 31
    max_lane = (lane & segmask) | (cval & ~segmask & 31)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - b
        ok = j >= max_lane
    elif mode == "down":
        j = lane + b
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b
        ok = j <= max_lane
    else:
        j = min_lane | (b & ~segmask & 31)
        ok = j <= max_lane
    return np.where(ok, j, lane) % 32, ok


def _vote_ptx(ctx, call, info):
    d = ctx.lvalue(call.operands[0], "vote.sync")
    a_fn, m_fn = ctx.expr(call.operands[1]), ctx.expr(call.operands[2])
    mode = info.quals["mode"]
    span = call.span

    def run(w):
        mm = int(uniform(m_fn(w), w, "member mask", span)) & FULL
        require_full_warp(w, "vote.sync", span, mm, exited_ok=True)
        d(w, _vote(mode, a_fn(w), w, mm))
    return run, False


def _vote(mode, pred, w, mm):
    members = np.array([(mm >> k) & 1 for k in range(32)], dtype=np.bool_) & w.active()
    p = V.truthy(pred)
    vec = p if type(p) is np.ndarray else np.full(32, p)
    vec = vec & members
    if mode == "ballot":
        return int(sum(1 << int(k) for k in np.flatnonzero(vec)))
    if mode == "any":
        return int(bool(vec.any()))
    if mode == "all":
        return int(bool(vec[members].all()))
    vals = (p if type(p) is np.ndarray else np.full(32, p))[members]
    return int(bool(vals.all() or not vals.any()))


def _ballot_cuda(mode):
    def compile_(ctx, call, info):
        m_fn, a_fn = (ctx.expr(o) for o in call.operands)
        span = call.span

        def run(w):
            mm = int(uniform(m_fn(w), w, "member mask", span)) & FULL
            require_full_warp(w, info.name, span, mm, exited_ok=True)
            return _vote(mode, a_fn(w), w, mm)
        return run, False
    return compile_


def _activemask(ctx, call, info):
    d = ctx.lvalue(call.operands[0], "activemask")

    def run(w):
        d(w, int(sum(1 << int(k) for k in np.flatnonzero(w.active()))))
    return run, False


def _warp_reduce(ctx, call, info):
    value_fn = ctx.expr(call.operands[0])
    op = call.operands[1].value
    width_fn = ctx.expr(call.operands[2])
    dtype = call.operands[0].dtype
    span = call.span

    def run(w):
        require_full_warp(w, "warp_reduce", span)
        width = int(uniform(width_fn(w), w, "width", span))
        v = V.as_vec(value_fn(w), dtype).reshape(32 // width, width)
        if op == "sum":
            r = v.sum(axis=1, dtype=v.dtype)
        elif op == "max":
            r = v.max(axis=1)
        else:
            r = v.min(axis=1)
        out = np.repeat(r, width)
        return out if width < 32 else (out[0].item() if np.issubdtype(out.dtype, np.integer) else out[0])
    return run, False


HANDLERS = {
    "bar.warp.sync": _warp_sync,
    "cuda.warp_sync": _warp_sync,
    "cuda.elect_sync": _elect_cuda,
    "elect.sync": _elect_ptx,
    "cuda.__shfl_sync": _cuda_shuffle("idx"),
    "tir.gpu_warp_shuffle": _cuda_shuffle("idx"),
    "cuda.__shfl_xor_sync": _cuda_shuffle("xor"),
    "cuda.__shfl_up_sync": _cuda_shuffle("up"),
    "cuda.__shfl_down_sync": _cuda_shuffle("down"),
    "shfl.sync": _ptx_shuffle,
    "vote.sync": _vote_ptx,
    "cuda.ballot_sync": _ballot_cuda("ballot"),
    "cuda.any_sync": _ballot_cuda("any"),
    "activemask": _activemask,
    "cuda.warp_reduce": _warp_reduce,
}
