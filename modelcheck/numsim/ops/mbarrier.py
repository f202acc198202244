"""mbarrier operations: init, inval, arrive[.expect_tx|_drop], expect_tx, complete_tx,
test_wait/try_wait with a parity or a state token (DPS result; a false result is a poll), and the blocking
`T.cuda.mbarrier_wait`.  Every lane that executes an operation performs it (an
arrive by 32 lanes is 32 arrivals); events carry the generation each operation
lands in (counted from the barrier's latest init).
"""
from __future__ import annotations

import numpy as np

from .. import cohort_mbarrier
from ..errors import EngineError
from ..memory import CLUSTER_WINDOW, GLOBAL_BASE, cluster_address
from ..runtime import Poll, Wait
from ..sync import SyncError
from . import groups, name_of, uniform
from .access import peer_exited
from .cluster import cluster_of


def barrier_of(w, addr: int, span, what: str, remote: bool = False):
    """The mbarrier at `addr`; a shared::cluster address of a peer CTA only for `remote` (`.shared::cluster`)
    forms, which act on the peer's barrier."""
    rt = w.rt
    if CLUSTER_WINDOW <= addr < GLOBAL_BASE:
        rt, addr = cluster_of(w, addr, span, what)
        if rt is not w.rt and rt.exited:
            peer_exited(w, rt, addr, span, what)
        if rt is not w.rt and not remote:
            raise EngineError("invalid_address", f"{what}: address {cluster_address(rt.cluster_rank, addr):#x} is "
                                                 f"CTA {rt.cluster_rank}'s barrier (a shared::cluster address), but "
                                                 f"this form only acts on the executing CTA's shared::cta barriers",
                              span, address=addr, rank=rt.cluster_rank)
    bar = rt.mbarriers.get(addr)
    if bar is not None:
        return bar
    if addr >= GLOBAL_BASE or rt.shared.find(addr, 8) is None:
        raise EngineError("oob", f"{what}: address {addr:#x} is not an 8-byte location in shared memory",
                          span, address=addr)
    if addr % 8:
        raise EngineError("misaligned_address", f"{what}: mbarrier address {addr:#x} is not 8-byte aligned",
                          span, address=addr)
    return rt.mbarrier(addr)


# The state token an arrive returns (PTX: opaque, 64 bits) names the barrier and the phase the arrival landed
# in.  NumSim's encoding (a model choice): bits 0-31 the phase counted from the barrier's latest init, 32-55 the
# barrier's shared::cta address, 56-62 its init count (mod 128), bit 63 set, so a value no arrive produced is
# told apart from a token.
_TOKEN_MARK = 1 << 63


def token_of(bar, gen: int) -> int:
    return _TOKEN_MARK | (bar.epoch & 0x7F) << 56 | (bar.addr & 0xFF_FFFF) << 32 | (gen & 0xFFFF_FFFF)


def _token_phase(bar, token: int, what: str, span) -> int:
    """The phase (counted from the latest init) the token names; PTX ISA 9.7.13.15.16 defines the wait only for
    a token of this barrier from its current phase or the one before (`mbarrier_invalid_phase` otherwise)."""
    if not token >> 63:
        raise EngineError("mbarrier_invalid_phase", f"{what} with state {token:#x}, which no mbarrier.arrive "
                                                    f"returned", span, state=token)
    addr, epoch = token >> 32 & 0xFF_FFFF, token >> 56 & 0x7F
    if addr != bar.addr & 0xFF_FFFF:
        raise EngineError("mbarrier_invalid_phase", f"{what} on the barrier at {bar.addr:#x} with a state token "
                                                    f"of the barrier at {addr:#x}", span, state=token)
    if epoch != bar.epoch & 0x7F:
        raise EngineError("mbarrier_invalid_phase", f"{what} with a state token from before the barrier's "
                                                    f"latest mbarrier.init", span, state=token)
    gen = token & 0xFFFF_FFFF
    current = bar.local_gen & 0xFFFF_FFFF
    if (current - gen) % (1 << 32) > 1:
        raise EngineError("mbarrier_invalid_phase", f"{what} with a stale state token: it names phase {gen}, "
                                                    f"but the barrier is already in phase {current} (a token may "
                                                    f"name only the current phase or the one before)", span,
                          state=token, token_phase=gen, phase=current)
    return gen


def _fail(err: SyncError, span):
    return EngineError(err.kind, err.message, span, **err.details)


def _init(ctx, call, info):
    addr, count = (ctx.expr(o) for o in call.operands)
    site = ctx.site(call, "mbarrier.init")
    span = call.span

    def run(w):
        a, c = addr(w), count(w)
        w.effects += 1
        lanes = np.flatnonzero(w.active())
        for lane in lanes:
            la = int(a[lane]) if type(a) is np.ndarray else int(a)
            lc = int(c[lane]) if type(c) is np.ndarray else int(c)
            bar = barrier_of(w, la, span, "mbarrier.init")
            try:
                bar.init(lc)
            except SyncError as err:
                raise _fail(err, span) from None
            w.eng.touch(bar)
            w.eng.sync(w, "mbarrier.init", site, barrier=("mbarrier", bar.cta, bar.addr), count=lc, generation=0,
                       details={"lane": int(lane), "epoch": bar.epoch})
    return run, False


def _inval(ctx, call, info):
    addr = ctx.expr(call.operands[0])
    site = ctx.site(call, "mbarrier.inval")
    span = call.span

    def run(w):
        w.effects += 1
        for a, _lanes, _n in groups(addr(w), w):
            bar = barrier_of(w, a, span, "mbarrier.inval")
            try:
                bar.inval()
            except SyncError as err:
                raise _fail(err, span) from None
            w.eng.touch(bar)
            w.eng.sync(w, "mbarrier.inval", site, barrier=("mbarrier", bar.cta, bar.addr), generation=bar.local_gen)
    return run, False


def _arrive(ctx, call, info):
    operands = call.operands
    state = None
    if info.operands and info.operands[0].name == "state":
        # the state register: an opaque token of the phase the arrival landed in (PTX ISA 9.7.13.15.13),
        # which a later test_wait/try_wait on the same barrier names the phase with (`token_of`)
        state = ctx.lvalue(operands[0], info.name)
        operands = operands[1:]
    ops = [ctx.expr(o) for o in operands]
    addr = ops[0]
    expect_tx = "expect_tx" in info.name
    drop = "arrive_drop" in info.name
    count = ops[1] if len(ops) > 1 and not expect_tx else (lambda w: 1)
    tx = ops[1] if expect_tx else (lambda w: 0)
    kind = "mbarrier.arrive"
    order = info.quals.get("sem", "release")
    # a peer's barrier: the .shared::cluster form, or the sink form (no state) with no state space -- PTX writes
    # it `mbarrier.arrive{.sem}{.scope}{.shared::cluster}.b64 _, [addr]`, and a generic address may name the
    # shared::cluster window; a form that returns a state, or says .shared::cta, acts on its own CTA only
    space = info.quals.get("space", "")
    remote = space == "shared::cluster" or (not space and state is None)
    site = ctx.site(call, info.name)
    span = call.span

    def run(w):
        a_all, c_all, t_all = addr(w), count(w), tx(w)
        w.effects += 1
        tokens = np.zeros(32, np.uint64) if state is not None else None
        for a, lanes, n in groups(a_all, w):
            sub = _sum_over(c_all, lanes, n, w)
            txb = _sum_over(t_all, lanes, n, w) if expect_tx else 0
            bar = barrier_of(w, a, span, info.name, remote)
            gen = bar.local_gen
            if tokens is not None:
                tokens[w.active() if lanes is None else lanes] = token_of(bar, gen)
            prior_consumed = bar.consumed or gen == 0
            try:
                completed = bar.arrive(sub, txb, drop)
            except SyncError as err:
                raise _fail(err, span) from None
            eng = w.eng
            eng.touch(bar)
            if eng.sync_obs:
                details = {"prior_consumed": prior_consumed, "order": order, "expect_tx": expect_tx, "drop": drop,
                           "expected": bar.expected}
                if lanes is not w.mask:
                    details["lanes"] = _lanes_of(lanes, w)   # only a subset of the active lanes arrived here
                eng.sync(w, kind, site, barrier=("mbarrier", bar.cta, bar.addr), count=sub, tx=txb, generation=gen,
                         completed=completed, details=details)
        if tokens is not None:
            state(w, tokens)
    run.cohort = cohort_mbarrier.arrive(addr, count, tx, state, expect_tx, drop, kind, order, site, span,
                                        token_of)
    return run, False


def _sum_over(value, lanes, n, w) -> int:
    if type(value) is not np.ndarray:
        return int(value) * n
    m = w.active() if lanes is None else lanes
    return int(value[m].astype(np.int64).sum())


def _lanes_of(lanes, w):
    m = w.active() if lanes is None else lanes
    return [int(k) for k in np.flatnonzero(m)]


def _tx(ctx, call, info):
    addr, nbytes = (ctx.expr(o) for o in call.operands)
    complete = info.name == "mbarrier.complete_tx"
    remote = info.quals.get("space") == "shared::cluster"
    site = ctx.site(call, info.name)
    span = call.span

    def run(w):
        a_all, b_all = addr(w), nbytes(w)
        w.effects += 1
        for a, lanes, n in groups(a_all, w):
            total = _sum_over(b_all, lanes, n, w)
            bar = barrier_of(w, a, span, info.name, remote)
            gen = bar.local_gen
            prior_consumed = bar.consumed or gen == 0
            try:
                completed = bar.complete_tx(total) if complete else (bar.expect_tx(total), False)[1]
            except SyncError as err:
                raise _fail(err, span) from None
            w.eng.touch(bar)
            if w.eng.sync_obs:
                w.eng.sync(w, info.name, site, barrier=("mbarrier", bar.cta, bar.addr), tx=total, generation=gen,
                           completed=completed, details={"prior_consumed": prior_consumed})
    return run, False


def _try_wait(ctx, call, info):
    dst = ctx.lvalue(call.operands[0], info.name)
    addr = ctx.expr(call.operands[1])
    parity = ctx.expr(call.operands[2])
    with_token = not info.name.endswith(".parity")
    order = info.quals.get("sem", "acquire")
    site = ctx.site(call, info.name)
    span = call.span

    def run(w):
        a_all, p_all = addr(w), parity(w)
        a = uniform(a_all, w, f"{info.name} address", span)
        raw = int(uniform(p_all, w, f"{info.name} {'state' if with_token else 'parity'}", span))
        if not with_token and raw not in (0, 1):
            raise EngineError("mbarrier_invalid_phase", f"{info.name} with parity {raw}; a parity is 0 or 1", span,
                              parity=raw)
        bar = barrier_of(w, a, span, info.name)
        try:
            bar.require_live(info.name)
        except SyncError as err:
            raise _fail(err, span) from None
        if with_token:
            # the token's phase has completed iff the barrier moved past it; as a parity wait on that
            # phase's parity (the only two phases a token may name), so the checkers' phase rules apply
            p = _token_phase(bar, raw, info.name, span) & 1
        else:
            p = raw
        ready = bar.ready(p)
        effects = w.effects
        dst(w, 1 if ready else 0)
        w.effects = effects   # the poll's own result is not a side effect for quiescence
        if ready:
            observed = bar.consume()
            w.eng.touch(bar)
            if w.eng.sync_obs:
                w.eng.sync(w, "mbarrier.wait", site, barrier=("mbarrier", bar.cta, bar.addr), parity=p,
                           generation=observed, details={"order": order, "polling": True, "parity_value": p})
            return
        if w.eng.sync_obs:
            w.eng.sync(w, "mbarrier.poll", site, barrier=("mbarrier", bar.cta, bar.addr), parity=p,
                       generation=bar.local_gen)
        yield Poll(bar, site, lambda: f"await {info.name} on {name_of(w, a)}; phase {p} ({bar.describe()})")

    def describe(w, a, p, bar):
        return lambda: f"await {info.name} on {name_of(w, a)}; phase {p} ({bar.describe()})"
    run.cohort = cohort_mbarrier.try_wait(dst, addr, parity, with_token, order, site, span,
                                          info.name, _token_phase, describe)
    return run, True


def _wait(ctx, call, info):
    addr, parity = (ctx.expr(o) for o in call.operands)
    site = ctx.site(call, "mbarrier.wait")
    span = call.span

    def run(w):
        a = addr(w)
        if type(a) is np.ndarray:
            a = uniform(a, w, "mbarrier_wait address", span)
        p = parity(w)
        if type(p) is np.ndarray:
            p = uniform(p, w, "mbarrier_wait parity", span)
        raw = int(p)
        if raw not in (0, 1):
            raise EngineError("mbarrier_invalid_phase", f"mbarrier_wait with parity {raw}; a parity is 0 or 1", span,
                              parity=raw)
        p = raw
        bar = w.rt.mbarriers.get(a) or barrier_of(w, a, span, "mbarrier_wait")
        if not bar.live:
            raise EngineError("mbarrier_use_before_init", "mbarrier_wait on an mbarrier that is not initialized",
                              span, barrier=a)
        blocked = False
        while not bar.ready(p):
            if not bar.live:
                raise EngineError("mbarrier_use_before_init", "mbarrier_wait on an invalidated mbarrier", span)
            blocked = True
            yield Wait(bar, lambda b=bar, q=p: b.ready(q) or not b.live,
                       lambda: f"await mbarrier.try_wait on {name_of(w, a)}; phase {p}", site)
        observed = bar.consume()
        eng = w.eng
        eng.touch(bar)
        w.effects += 1
        if eng.sync_obs:
            eng.sync(w, "mbarrier.wait", site, barrier=("mbarrier", bar.cta, bar.addr), parity=p, generation=observed,
                     details={"order": "acquire", "blocked": blocked, "parity_value": raw})
    return run, True


def _fence_init(ctx, call, info):
    site = ctx.site(call, "fence.mbarrier_init")

    def run(w):
        w.eng.sync(w, "fence.mbarrier_init", site)
    return run, False


HANDLERS = {
    "mbarrier.init": _init,
    "mbarrier.inval": _inval,
    "mbarrier.arrive": _arrive,
    "mbarrier.arrive_drop": _arrive,
    "mbarrier.arrive.expect_tx": _arrive,
    "mbarrier.arrive_drop.expect_tx": _arrive,
    "mbarrier.expect_tx": _tx,
    "mbarrier.complete_tx": _tx,
    "mbarrier.try_wait.parity": _try_wait,
    "mbarrier.test_wait.parity": _try_wait,
    "mbarrier.try_wait": _try_wait,
    "mbarrier.test_wait": _try_wait,
    "cuda.mbarrier_wait": _wait,
    "cuda.mbarrier_wait_acquire_cluster": _wait,     # the same wait, acquiring at cluster scope
    "fence.mbarrier_init": _fence_init,
}
