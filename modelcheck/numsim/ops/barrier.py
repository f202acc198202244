"""Named barriers: bar.sync / barrier.sync[.aligned] / bar.arrive / bar.red, and the
`T.cuda.cta_sync` (bar.sync 0 over the CTA), `T.cuda.warpgroup_sync(id)` (bar.sync id,
128) and `T.tvm_storage_sync` spellings.  Aligned forms need the whole warp; a warp's
contribution counts its threads; `bar.sync` and `bar.red` wait for the generation
they contribute to, `bar.arrive` does not.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..errors import EngineError
from ..runtime import Wait
from ..sync import SyncError
from . import require_full_warp, uniform


def _contribute(w, site, span, bid, count, flavor, aligned, kind, pred=None):
    if not 0 <= bid < 16:
        raise EngineError("named_barrier_contract_mismatch", f"named barrier id {bid} is outside 0..15", span,
                          barrier=bid)
    # barriers count whole warps: the lanes past the end of a partial last warp count as arrived
    # (an aligned barrier adds the warp size, not the active threads; PTX bar.sync)
    if aligned:
        require_full_warp(w, f"{kind} {bid}", span)
        threads = 32
    else:
        threads = w.active_count() + 32 - w.nthreads
    lanes = V.lane_bits(w.mask)
    if count is None:
        count = (w.rt.nthreads + 31) // 32 * 32
    nb = w.rt.named[bid]
    try:
        gen = nb.contribute(w.gid, threads, count, flavor, site, aligned, lanes)
    except SyncError as err:
        raise EngineError(err.kind, err.message, span, **err.details) from None
    if pred is not None:
        nb.red.setdefault(gen, []).append(pred)
    w.eng.touch(nb)
    w.effects += 1
    w.eng.sync(w, kind, site, barrier=("named", w.cta, bid), count=count, generation=gen,
               completed=nb.gen > gen, details={"threads": threads, "aligned": aligned, "flavor": flavor,
                                                "lanes": lanes})
    return nb, gen


def _wait_generation(w, site, nb, gen, kind):
    blocked = False
    while nb.gen <= gen:
        blocked = True
        yield Wait(nb, lambda b=nb, g=gen: b.gen > g,
                   lambda: f"await {kind} {nb.id}; generation {gen} ({nb.describe()})", site)
    w.eng.sync(w, "bar.wait", site, barrier=("named", w.cta, nb.id), generation=gen,
               details={"blocked": blocked})


def _bar_sync(ctx, call, info):
    ops = [ctx.expr(o) for o in call.operands]
    aligned = "aligned" in info.quals
    site = ctx.site(call, "bar.sync" if aligned else "barrier.sync")
    span = call.span
    kind = "bar.sync"

    def run(w):
        bid = int(uniform(ops[0](w), w, "barrier id", span))
        count = int(uniform(ops[1](w), w, "barrier thread count", span)) if len(ops) > 1 else None
        nb, gen = _contribute(w, site, span, bid, count, "sync", aligned, kind)
        yield from _wait_generation(w, site, nb, gen, kind)
    return run, True


def _bar_arrive(ctx, call, info):
    bid_fn, count_fn = (ctx.expr(o) for o in call.operands)
    aligned = "aligned" in info.quals
    site = ctx.site(call, "bar.arrive")
    span = call.span

    def run(w):
        bid = int(uniform(bid_fn(w), w, "barrier id", span))
        count = int(uniform(count_fn(w), w, "barrier thread count", span))
        _contribute(w, site, span, bid, count, "arrive", aligned, "bar.arrive")
    return run, False


def _bar_red(ctx, call, info):
    dst = ctx.lvalue(call.operands[0], "bar.red")
    ops = [ctx.expr(o) for o in call.operands[1:]]
    mode = info.quals.get("red", "popc")
    aligned = "aligned" in info.quals
    site = ctx.site(call, "bar.red")
    span = call.span

    def run(w):
        bid = int(uniform(ops[0](w), w, "barrier id", span))
        count = int(uniform(ops[1](w), w, "barrier thread count", span)) if len(ops) == 3 else None
        pred = V.truthy(ops[-1](w))
        vec = pred if type(pred) is np.ndarray else np.full(32, pred)
        vec = vec[w.active()]
        nb, gen = _contribute(w, site, span, bid, count, "sync", aligned, "bar.red", pred=vec)
        yield from _wait_generation(w, site, nb, gen, "bar.red")
        preds = np.concatenate(nb.red.get(gen, [vec]))
        threads = int(V.nnz(preds >= 0))  # every contributed lane, true or false
        if mode == "popc":
            result = int(V.nnz(preds))
        elif mode == "and":
            result = int(bool(preds.all())) if threads else 1
        else:
            result = int(bool(preds.any()))
        dst(w, result)
    return run, True


def _cta_sync(ctx, call, info):
    site = ctx.site(call, "bar.sync")
    span = call.span

    def run(w):
        nb, gen = _contribute(w, site, span, 0, None, "sync", True, "bar.sync")
        yield from _wait_generation(w, site, nb, gen, "bar.sync")
    return run, True


def _warpgroup_sync(ctx, call, info):
    bid_fn = ctx.expr(call.operands[0])
    site = ctx.site(call, "bar.sync")
    span = call.span

    def run(w):
        bid = int(uniform(bid_fn(w), w, "barrier id", span))
        nb, gen = _contribute(w, site, span, bid, 128, "sync", True, "bar.sync")
        yield from _wait_generation(w, site, nb, gen, "bar.sync")
    return run, True


def _storage_sync(ctx, call, info):
    """Two signatures share the name.  apache-tvm's is (scope, is_load: bool, num_blocks): its CUDA codegen
    prints `__syncthreads()` for shared/shared.dyn whatever the other operands (they only matter for
    "global"), and nothing for "warp".  TileLang's is (scope, barrier_id, thread_count): `bar.sync id, n`.
    A bool second operand tells them apart."""
    ops = call.operands
    scope = ops[0].value if hasattr(ops[0], "value") else "shared"
    span = call.span
    if scope == "global":
        return ctx.unsupported(call, call.op, "a global-scope storage sync is a grid-wide barrier"), False
    if scope not in ("shared", "shared.dyn", "warp"):
        raise EngineError("unsupported_operation", f"tvm_storage_sync scope {scope!r}", span)
    tvm_form = len(ops) > 1 and getattr(ops[1], "dtype", None) == "bool"
    if scope == "warp" and (tvm_form or len(ops) == 1):
        # TVM's codegen emits no instruction for a warp-scope storage sync
        return (lambda w: None), False
    rest = [] if tvm_form else [ctx.expr(o) for o in ops[1:]]
    site = ctx.site(call, "bar.sync")

    def run(w):
        bid = int(uniform(rest[0](w), w, "barrier id", span)) if rest else 0
        count = int(uniform(rest[1](w), w, "barrier thread count", span)) if len(rest) > 1 else None
        nb, gen = _contribute(w, site, span, bid, count, "sync", True, "bar.sync")
        yield from _wait_generation(w, site, nb, gen, "bar.sync")
    return run, True


HANDLERS = {
    "bar.sync": _bar_sync,
    "bar.arrive": _bar_arrive,
    "bar.red": _bar_red,
    "cuda.cta_sync": _cta_sync,
    "cuda.warpgroup_sync": _warpgroup_sync,
    "tir.tvm_storage_sync": _storage_sync,
}
