"""mbarrier arrive and try_wait/test_wait for a whole cohort warp at once (numsim.cohort).

Why.  Run per CTA row (`CohortWarp.each_row` / `each_row_blocking`), each of these costs a 32-lane view of the
cohort warp, an evaluation of its operands and a generator per row: in the selective_state_update kernels
(~130 arrives and polls per CTA) that per-row overhead was a third of the cohort run.  Here the operands are
evaluated once over the cohort's 32k lanes and only the barrier update and its event are per row.

Why it is exact.  Each row still acts on its own CTA's barrier object (`rt.mbarriers`), with the count and tx it
would compute on its own lanes (a uniform operand times the row's active lanes, else the sum over them), in
the same order within the row, and records the same sync event (its fields are what ops/mbarrier gives the
row's view) in the row's own event list; the state token / result register is written under the cohort mask,
which is each row's write under its own mask.  A row's outcome that differs from its cohort's (one row's
try_wait ready and another's not) splits, as `each_row_blocking` does.  Anything else -- an address not the
same on every active lane, or not yet a barrier of some row (the first use creates and validates it), a cluster
address -- takes the per-row path (`fallback`).
"""
from __future__ import annotations

import numpy as np

from .cohort_async import _common
from .cohort_rows import _Split
from .errors import EngineError
from .memory import CLUSTER_WINDOW
from .runtime import Poll
from .sync import SyncError


def _row_bars(w, a: int, masks: list):
    """Each active row's barrier at shared address `a` (None for rows with no active lane), or None when some row
    has none there yet (its first use validates the address: per row)."""
    if not 0 <= a < CLUSTER_WINDOW:
        return None
    bars: list = []
    for r, m in enumerate(masks):
        if m is False:
            bars.append(None)
            continue
        bar = w.rows[r].rt.mbarriers.get(a)
        if bar is None:
            return None
        bars.append(bar)
    return bars


def _row_sums(value, w, masks: list) -> list:
    """Per row: `value` summed over the row's active lanes (ops/mbarrier._sum_over on the row's view)."""
    if type(value) is not np.ndarray:
        n = (np.ones(w.FULL.size, np.bool_) if w.mask is None else w.mask).reshape(-1, 32).sum(axis=1)
        return (n.astype(np.int64) * int(value)).tolist()
    v = value.astype(np.int64)
    if w.mask is not None:
        v = np.where(w.mask, v, 0)
    return v.reshape(-1, 32).sum(axis=1).tolist()


def _fail(err: SyncError, span):
    return EngineError(err.kind, err.message, span, **err.details)


def arrive(addr, count, tx, state, expect_tx: bool, drop: bool, kind: str, order: str, site: int, span, token_of):
    """`run.cohort` of mbarrier.arrive[_drop][.expect_tx] (ops/mbarrier._arrive): True if it ran for the whole
    cohort warp, False (nothing done) for the per-row path."""

    def whole(w) -> bool:
        eng = w.eng
        notes = eng.uninit_notes
        a = _common(addr(w), w)
        masks = w.row_masks()
        bars = None if a is None else _row_bars(w, a, masks)
        if bars is None:
            if eng.uninit_notes != notes:
                raise _Split("an mbarrier address read an unwritten register")    # noted once, per row
            return False
        counts = _row_sums(count(w), w, masks)
        txs = _row_sums(tx(w), w, masks) if expect_tx else None
        w.effects += 1
        tokens = np.zeros(w.FULL.size, np.uint64) if state is not None else None
        iters = tuple(w.iters)
        for r, m in enumerate(masks):
            if m is False:
                continue
            bar = bars[r]
            gen = bar.local_gen
            if tokens is not None:
                tokens[32 * r:32 * r + 32] = token_of(bar, gen)     # inactive lanes: kept by the masked write
            prior_consumed = bar.consumed or gen == 0
            txb = txs[r] if txs is not None else 0
            try:
                completed = bar.arrive(counts[r], txb, drop)
            except SyncError as err:
                raise _fail(err, span) from None
            eng.touch(bar)
            if eng.sync_obs:
                details = {"prior_consumed": prior_consumed, "order": order, "expect_tx": expect_tx, "drop": drop,
                           "expected": bar.expected}
                eng.records[r].append(("sync", w.index, iters, m, site, kind,
                                       {"barrier": ("mbarrier", bar.cta, bar.addr), "count": counts[r], "tx": txb,
                                        "generation": gen, "completed": completed, "details": details}))
        if tokens is not None:
            state(w, tokens)
        return True
    return whole


def try_wait(dst, addr, parity, with_token: bool, order: str, site: int, span, name: str, token_phase, describe):
    """`run.cohort` of mbarrier.try_wait/test_wait (ops/mbarrier._try_wait): a generator function of the cohort
    warp and the per-CTA closure `fn`, which it runs per row (`each_row_blocking`) where this path does not
    apply."""

    def whole(w, fn):
        eng = w.eng
        notes = eng.uninit_notes
        masks = w.row_masks()
        if any(m is False for m in masks):
            raise _Split("a CTA of the cohort does not reach a barrier with this warp (its lanes are elsewhere)")
        a = _common(addr(w), w)
        bars = None if a is None else _row_bars(w, a, masks)
        if bars is None:
            if eng.uninit_notes != notes:
                raise _Split("an mbarrier address read an unwritten register")
            return (yield from w.each_row_blocking(fn))
        p_all = parity(w)
        what = f"{name} {'state' if with_token else 'parity'}"
        phases = []
        for r, bar in enumerate(bars):
            if type(p_all) is np.ndarray:
                vals = p_all[32 * r:32 * r + 32]
                if masks[r] is not None:
                    vals = vals[masks[r]]
                if not (vals == vals[0]).all():
                    raise EngineError("unsupported_operation", f"{what} must be the same on every active lane", span)
                raw = int(vals[0])
            else:
                raw = int(p_all)
            if not with_token and raw not in (0, 1):
                raise EngineError("mbarrier_invalid_phase", f"{name} with parity {raw}; a parity is 0 or 1", span,
                                  parity=raw)
            try:
                bar.require_live(name)
            except SyncError as err:
                raise _fail(err, span) from None
            phases.append(token_phase(bar, raw, name, span) & 1 if with_token else raw)
        ready = [bar.ready(p) for bar, p in zip(bars, phases)]
        if all(ready):
            effects = w.effects
            dst(w, 1)
            w.effects = effects      # the poll's own result is not a side effect for quiescence
            iters = tuple(w.iters)
            for r, bar in enumerate(bars):
                p = phases[r]
                observed = bar.consume()
                eng.touch(bar)
                if eng.sync_obs:
                    eng.records[r].append(("sync", w.index, iters, masks[r], site, "mbarrier.wait",
                                           {"barrier": ("mbarrier", bar.cta, bar.addr), "parity": p,
                                            "generation": observed,
                                            "details": {"order": order, "polling": True, "parity_value": p}}))
            return None
        if any(ready):
            raise _Split("the CTAs of the cohort leave a barrier at different steps")   # as each_row_blocking
        effects = w.effects
        dst(w, 0)
        w.effects = effects
        iters = tuple(w.iters)
        polls = []
        for r, bar in enumerate(bars):
            p = phases[r]
            if eng.sync_obs:
                eng.records[r].append(("sync", w.index, iters, masks[r], site, "mbarrier.poll",
                                       {"barrier": ("mbarrier", bar.cta, bar.addr), "parity": p,
                                        "generation": bar.local_gen}))
            polls.append(Poll(bar, site, describe(w.rows[r], a, p, bar)))
        yield w._poll(polls)
        return None
    return whole
