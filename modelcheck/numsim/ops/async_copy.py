"""Asynchronous copies.  Each executing lane issues its own operation; the data moves
when the scheduler delivers the completion (FIFO, between rounds), so a consumer can
observe a copy only through its mbarrier or its group.

- `cp.async.bulk` global->shared: complete_tx(size) on the mbarrier operand.
- `cp.async.bulk` shared->global: tracked by per-thread bulk groups
  (`cp.async.bulk.commit_group`, `cp.async.bulk.wait_group[.read] N`).  Its source
  read is reported at issue (the hardware may read any time until `wait_group.read`);
  the data moves and the destination write is reported at completion.
- `cp.async.{ca,cg}`: per-thread groups (`cp.async.commit_group`, `wait_group N`,
  `wait_all`); `cp.async.mbarrier.arrive` arrives once the thread's earlier cp.async
  operations completed (without `.noinc` it first adds one pending arrival).
Async accesses are reported with proxy "async" (bulk) or "generic" (cp.async) and the
operation's id as actor.
"""
from __future__ import annotations

import numpy as np

from .. import cohort_async
from ..errors import EngineError
from ..memory import cluster_address
from ..runtime import Wait
from ..sync import SyncError
from . import name_of, uniform
from .mbarrier import barrier_of


class AsyncOp:
    """An async operation in flight; setting `done` tells the run's access observers it makes no more accesses."""

    __slots__ = ("id", "kind", "warp", "lane", "site", "iters", "_done", "cta", "eng")

    def __init__(self, op_id, kind, w, lane, site):
        self.id = op_id
        self.kind = kind
        self.warp = w.gid
        self.cta = w.cta
        self.lane = lane
        self.site = site
        self.iters = tuple(w.iters)
        self._done = False
        self.eng = w.eng

    @property
    def done(self) -> bool:
        return self._done

    @done.setter
    def done(self, value: bool) -> None:
        if value and not self._done:
            self.eng.retire(self)
        self._done = value


class Groups:
    """Per-thread async groups of one warp for one family (bulk or cp.async)."""

    __slots__ = ("uncommitted", "committed", "version")

    def __init__(self):
        self.uncommitted = [[] for _ in range(32)]
        self.committed = [[] for _ in range(32)]
        self.version = 0

    def settled(self, lane: int, n: int) -> bool:
        """`wait_group n` may pass for `lane`: every committed group but the newest `n` has completed.  The
        newest `n` are counted in commit order, empty and already completed groups included (PTX ISA,
        cp.async.wait_group and cp.async.bulk.wait_group: the thread waits until N or fewer of the *most recent*
        groups are pending and all prior groups are complete): after `commit; commit` with nothing issued in the
        second, `wait_group 1` waits for the first.  Completed groups at the front decide nothing more: dropped."""
        groups = self.committed[lane]
        k = 0
        while k < len(groups) and all(op.done for op in groups[k]):
            k += 1
        if k:
            groups = self.committed[lane] = groups[k:]
        return all(op.done for g in (groups[:-n] if n else groups) for op in g)

    def commit(self, lane: int) -> None:
        self.committed[lane].append([op for op in self.uncommitted[lane] if not op.done])
        self.uncommitted[lane] = []


def _groups(w, family: str) -> Groups:
    if w.groups is None:
        w.groups = {}
    g = w.groups.get(family)
    if g is None:
        g = w.groups[family] = Groups()
    return g


def _new_op(w, kind, lane, site) -> AsyncOp:
    eng = w.eng
    eng.async_id += 1
    eng.stats["async_ops"] += 1
    return AsyncOp(eng.async_id, kind, w, lane, site)


def issue_on_barrier(w, kind: str, lane: int, site, span, what: str, rt, brt, blocal: int, size: int,
                     extra: dict | None = None):
    """Issue `lane`'s async op `kind` that writes into CTA `rt` and completes `size` tx bytes on the mbarrier at
    `blocal` of CTA `brt` (a cluster peer's included): the barrier must be live; the issue event names the
    generation the op completes (`extra`: more details for it).  Returns (op, barrier, generation)."""
    bar = barrier_of(w, cluster_address(brt.cluster_rank, blocal) if brt is not w.rt else blocal, span, what,
                     remote=True)
    try:
        bar.require_live(what)
    except SyncError as err:
        raise EngineError(err.kind, err.message, span, **err.details) from None
    op = _new_op(w, kind, lane, site)
    gen = bar.local_gen
    details = {"op": op.id, "kind": op.kind, "lane": lane, "name": name_of(w, blocal), **(extra or {})}
    if rt is not w.rt:
        details["target_cta"] = rt.index
    w.eng.sync(w, "async.issue", site, barrier=("mbarrier", brt.index, blocal), tx=size, generation=gen,
               details=details)
    return op, bar, gen


def _lanes(w):
    return [int(k) for k in np.flatnonzero(w.active())]


def _at(value, lane):
    return int(value[lane]) if type(value) is np.ndarray else int(value)


def _one_lane(lane: int) -> np.ndarray:
    lanes = np.zeros(32, dtype=np.bool_)
    lanes[lane] = True
    return lanes


def _copy(eng, src_alloc, src_off, dst_alloc, dst_off, size, op, proxy, zero_from=None, read_recorded=False):
    """Copy `size` bytes; with `zero_from`, only that many are read and the rest are zero-filled.
    `read_recorded`: the source read was already reported at issue (`_record_source_read`)."""
    if zero_from is None:
        data = src_alloc.data[src_off:src_off + size].copy()
    else:
        data = np.zeros(size, dtype=np.uint8)
        if zero_from:
            data[:zero_from] = src_alloc.data[src_off:src_off + zero_from]
    dst_alloc.data[dst_off:dst_off + size] = data
    dst_alloc.mark_written(dst_off, size)
    lanes = np.zeros(32, dtype=np.bool_)
    lanes[op.lane] = True
    if zero_from != 0 and not read_recorded:
        eng.access(None, op.site, src_alloc, src_off, size if zero_from is None else zero_from, "read",
                   proxy=proxy, lanes=lanes, actor=op.id, iters=op.iters, warp=op.warp, cta=op.cta)
    eng.access(None, op.site, dst_alloc, dst_off, size, "write", proxy=proxy, lanes=lanes, actor=op.id,
               iters=op.iters, warp=op.warp, cta=op.cta)


def _bulk_g2s(ctx, call, info):
    """`cp.async.bulk.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes{.multicast::cluster}`: the
    destination and its mbarrier are in one CTA of the cluster (a shared::cta address is the executing CTA's), or
    with `.multicast::cluster` the same CTA-relative offsets in every CTA of ctaMask (PTX ISA 9.7.9.25.4.1); each
    destination gets the bytes and complete_tx(size) on its barrier -- the placement rules of the TMA load
    (`tma._destinations`).  `cp.async.bulk.shared::cluster.shared::cta` (info "cp.async.bulk.s2c") is the same
    with the executing CTA's shared memory as the source."""
    from .tma import _destinations     # tma imports this module
    ops = call.operands
    dst_fn, src_fn, size_fn, bar_fn = (ctx.expr(o) for o in ops[:4])
    mask_fn = ctx.expr(ops[4]) if any(k.startswith("multicast") for k in info.quals) else None
    site = ctx.site(call, "cp.async.bulk")
    span = call.span
    from_shared = info.name == "cp.async.bulk.s2c"
    what = f"cp.async.bulk ({'shared::cta' if from_shared else 'global'} -> shared)"
    space = "shared" if from_shared else "global"

    def run(w):
        dst_a, src_a, size_a, bar_a = dst_fn(w), src_fn(w), size_fn(w), bar_fn(w)
        mask_a = mask_fn(w) if mask_fn is not None else None
        eng = w.eng
        w.effects += 1
        for lane in _lanes(w):
            size = _at(size_a, lane)
            dst, src, baddr = _at(dst_a, lane), _at(src_a, lane), _at(bar_a, lane)
            if size <= 0 or size % 16 or dst % 16 or src % 16:
                raise EngineError("misaligned_address", f"cp.async.bulk needs 16-byte aligned addresses and a size "
                                  f"that is a multiple of 16; got dst {dst:#x}, src {src:#x}, size {size}", span)
            s_alloc = w.rt.shared.find(src, size) if from_shared else eng.globals.find(src, size)
            if s_alloc is None:
                raise EngineError("oob", f"cp.async.bulk range [{src:#x}, +{size}) is outside every {space} "
                                         f"allocation (lane {lane})", span, address=src, lane=lane, size=size)
            mask = None if mask_a is None else _at(mask_a, lane)
            for rt, local, brt, blocal in _destinations(w, dst, baddr, mask, span, what):
                d_alloc = rt.shared.find(local, size)
                if d_alloc is None:
                    raise EngineError("oob", f"cp.async.bulk range [{dst:#x}, +{size}) is outside every shared "
                                             f"allocation (lane {lane})", span, address=dst, lane=lane, size=size)
                op, bar, gen = issue_on_barrier(w, "bulk.g2s", lane, site, span, "cp.async.bulk", rt, brt, blocal,
                                                size)
                eng.enqueue(_complete_g2s(eng, w, op, s_alloc, src - s_alloc.base, d_alloc, local - d_alloc.base,
                                          size, bar, blocal, span, gen, rt, brt))
    return run, False


def _complete_g2s(eng, w, op, s_alloc, s_off, d_alloc, d_off, size, bar, baddr, span, bound_gen, rt, brt):
    cta, warp = w.cta, w.gid

    def complete():
        if rt.exited:
            raise EngineError("cluster_exit_while_peer_access",
                              f"bulk copy into CTA {rt.index}'s shared memory (issued by warp {warp} of CTA {cta}) "
                              f"completes after CTA {rt.index} exited", span, peer_cta=rt.index, warp=warp)
        _copy(eng, s_alloc, s_off, d_alloc, d_off, size, op, "async")
        op.done = True
        gen = bar.local_gen
        try:
            completed = bar.complete_tx(size)
        except SyncError as err:     # the finding names the copy's issuing warp and iteration
            raise EngineError(err.kind, err.message, span, warp=warp, cta=cta, iters=list(op.iters),
                              **err.details) from None
        eng.touch(bar)
        eng.async_sync(cta, warp, "mbarrier.complete_tx", op.site, op.iters, barrier=("mbarrier", brt.index, baddr),
                       tx=size, generation=gen, completed=completed,
                       details={"op": op.id, "async": True, "bound_generation": bound_gen})
    return complete


def _bulk_s2g(ctx, call, info):
    dst_fn, src_fn, size_fn = (ctx.expr(o) for o in call.operands[:3])
    site = ctx.site(call, "cp.async.bulk")
    span = call.span

    def run(w):
        dst_a, src_a, size_a = dst_fn(w), src_fn(w), size_fn(w)
        eng = w.eng
        groups = _groups(w, "bulk")
        w.effects += 1
        for lane in _lanes(w):
            size = _at(size_a, lane)
            dst, src = _at(dst_a, lane), _at(src_a, lane)
            if size <= 0 or size % 16 or dst % 16 or src % 16:
                raise EngineError("misaligned_address", f"cp.async.bulk needs 16-byte aligned addresses and a size "
                                  f"that is a multiple of 16; got dst {dst:#x}, src {src:#x}, size {size}", span)
            s_alloc = w.rt.shared.find(src, size)
            d_alloc = eng.globals.find(dst, size)
            if d_alloc is None or s_alloc is None:
                bad = src if s_alloc is None else dst
                raise EngineError("oob", f"cp.async.bulk range [{bad:#x}, +{size}) is outside every allocation "
                                         f"(lane {lane})", span, address=bad, lane=lane, size=size)
            op = _new_op(w, "bulk.s2g", lane, site)
            groups.uncommitted[lane].append(op)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "lane": lane})
            # the store may read its source any time from issue until wait_group.read retires it: the read is
            # reported at issue, so a reuse of the source in that window comes after it in the trace
            eng.access(None, site, s_alloc, src - s_alloc.base, size, "read", proxy="async", lanes=_one_lane(lane),
                       actor=op.id, iters=op.iters, warp=op.warp, cta=op.cta)

            def complete(op=op, s_alloc=s_alloc, s_off=src - s_alloc.base, d_alloc=d_alloc,
                         d_off=dst - d_alloc.base, size=size, groups=groups):
                _copy(eng, s_alloc, s_off, d_alloc, d_off, size, op, "async", read_recorded=True)
                group_done(eng, op, groups)
            eng.enqueue(complete)
    return run, False


def group_done(eng, op, groups, announce: bool = True) -> None:
    """`op` of a bulk or cp.async group completed: waits on its group may pass; a bulk op's completion is also a
    sync event (Synccheck orders the bytes it moved by it)."""
    op.done = True
    groups.version += 1
    eng.touch(groups)
    if announce:
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})


def _commit(family):
    def compile_(ctx, call, info):
        site = ctx.site(call, info.name)

        def run(w):
            groups = _groups(w, family)
            for lane in _lanes(w):
                groups.commit(lane)
            w.effects += 1
            w.eng.sync(w, f"{family}.commit_group", site)
        return run, False
    return compile_


def _wait_group(family, wait_all=False):
    def compile_(ctx, call, info):
        n_fn = ctx.expr(call.operands[0]) if call.operands else (lambda w: 0)
        site = ctx.site(call, info.name)
        span = call.span

        def run(w):
            n = int(uniform(n_fn(w), w, "wait_group count", span))
            groups = _groups(w, family)
            lanes = _lanes(w)
            if wait_all:
                for lane in lanes:
                    groups.commit(lane)

            def ready():
                return all(groups.settled(lane, n) for lane in lanes)
            blocked = False
            while not ready():
                blocked = True
                yield Wait(groups, ready, f"await {info.name} {n} ({family} groups still pending)", site)
            w.effects += 1
            w.eng.sync(w, f"{family}.wait_group", site, count=n,
                       details={"read": "read" in info.quals, "blocked": blocked})
        run.cohort = cohort_async.wait_group(n_fn, family, wait_all, "read" in info.quals,
                                             info.name, site, _groups)
        return run, True
    return compile_


def _cp_async(ctx, call, info):
    ops = [ctx.expr(o) for o in call.operands]
    dst_fn, src_fn, cp_size_fn = ops[:3]
    src_size_fn = ops[3] if len(ops) > 3 and call.operands[3].dtype != "uint64" else None
    site = ctx.site(call, "cp.async")
    span = call.span

    def run(w):
        dst_a, src_a, cp_a = dst_fn(w), src_fn(w), cp_size_fn(w)
        src_sz = src_size_fn(w) if src_size_fn is not None else None
        eng = w.eng
        groups = _groups(w, "cp.async")
        w.effects += 1
        for lane in _lanes(w):
            size = _at(cp_a, lane)
            if size not in (4, 8, 16):
                raise EngineError("unsupported_operation", f"cp.async copies 4, 8 or 16 bytes, got {size}", span)
            dst, src = _at(dst_a, lane), _at(src_a, lane)
            keep = size if src_sz is None else min(_at(src_sz, lane), size)
            d_alloc = w.rt.shared.find(dst, size)
            # only the src_size bytes actually read must lie in the source (the rest is zero-filled)
            s_alloc = eng.globals.find(src, keep) if keep > 0 else None
            if d_alloc is None or (keep > 0 and s_alloc is None) or dst % size or src % size:
                bad = dst if d_alloc is None else src
                raise EngineError("oob", f"cp.async at {bad:#x} ({size} B) is outside every allocation or "
                                         f"misaligned (lane {lane})", span, address=bad, lane=lane)
            op = _new_op(w, "cp.async", lane, site)
            groups.uncommitted[lane].append(op)
            eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "lane": lane})

            def complete(op=op, s_alloc=s_alloc, s_off=src - s_alloc.base if s_alloc else 0, d_alloc=d_alloc,
                         d_off=dst - d_alloc.base, size=size, keep=keep, groups=groups):
                _copy(eng, s_alloc, s_off, d_alloc, d_off, size, op, "generic",
                      zero_from=keep if keep < size else None)
                group_done(eng, op, groups, announce=False)
            eng.enqueue(complete)
    run.cohort = cohort_async.cp_async(dst_fn, src_fn, cp_size_fn, src_size_fn, site, AsyncOp,
                                       _groups)
    return run, False


def _cp_async_mbarrier_arrive(ctx, call, info):
    addr_fn = ctx.expr(call.operands[0])
    noinc = "noinc" in info.quals
    site = ctx.site(call, "cp.async.mbarrier.arrive")
    span = call.span

    def run(w):
        a_all = addr_fn(w)
        eng = w.eng
        w.effects += 1
        for lane in _lanes(w):
            a = _at(a_all, lane)
            bar = barrier_of(w, a, span, "cp.async.mbarrier.arrive")
            try:
                bar.require_live("cp.async.mbarrier.arrive")
            except SyncError as err:
                raise EngineError(err.kind, err.message, span, **err.details) from None
            if not noinc:
                bar.pending += 1
            gen = bar.local_gen
            op = _new_op(w, "cp.async.mbarrier.arrive", lane, site)
            # the generation at issue, as tcgen05.commit's: phase B checks every schedule keeps it
            eng.sync(w, "async.issue", site, barrier=("mbarrier", w.cta, a), generation=gen,
                     details={"op": op.id, "kind": "cp.async.mbarrier.arrive", "lane": lane, "noinc": noinc})
            cta, warp, iters = w.cta, w.gid, tuple(w.iters)

            def complete(bar=bar, a=a, gen=gen, cta=cta, warp=warp, iters=iters, op=op, lane=lane):
                prior_consumed = bar.consumed or bar.local_gen == 0
                try:
                    completed = bar.arrive(1)
                except SyncError as err:
                    raise EngineError(err.kind, err.message, span, warp=warp, cta=cta, iters=list(iters),
                                      **err.details) from None
                eng.touch(bar)
                op.done = True
                eng.async_sync(cta, warp, "mbarrier.arrive", site, iters, barrier=("mbarrier", cta, a), count=1,
                               generation=bar.local_gen - (1 if completed else 0), completed=completed,
                               details={"async": True, "kind": "cp.async.mbarrier.arrive", "op": op.id,
                                        "lane": lane, "covers": "prior cp.async of the lane",
                                        "prior_consumed": prior_consumed})
            eng.enqueue(complete)
    return run, False


HANDLERS = {
    "cp.async.bulk.g2s": _bulk_g2s,
    "cp.async.bulk.s2c": _bulk_g2s,
    "cp.async.bulk.s2g": _bulk_s2g,
    "cp.async.bulk.commit_group": _commit("bulk"),
    "cp.async.bulk.wait_group": _wait_group("bulk"),
    "cp.async": _cp_async,
    "cp.async.commit_group": _commit("cp.async"),
    "cp.async.wait_group": _wait_group("cp.async"),
    "cp.async.wait_all": _wait_group("cp.async", wait_all=True),
    "cp.async.mbarrier.arrive": _cp_async_mbarrier_arrive,
}
