"""Lane-mask control flow at run time: the closures compiled loops and ifs run.

Assumes a warp `w` with an active-lane mask (`w.active()`, `w.mask`), its loop stack and exit mask, and
statement bodies compiled by `compile_stmt.Compiler` (plain functions, or generator functions where they
can block).  Guarantees: a loop runs while any lane is active and removes lanes that `break` (from the
loop), `continue` (from the iteration) or return (from the warp); a divergent `if` runs both sides under
their masks and restores the entry mask after; divergent paths that block run as separate paths the
scheduler interleaves (`_paths`); a loop past its iteration budget raises `ResourceLimit` naming it.
"""
from __future__ import annotations

import numpy as np

from . import values as V
from .budget import CHECK_EVERY
from .cohort_rows import _Split as CohortSplit
from .errors import EngineError, ResourceLimit
from ..common.ranges import id_ranges
from .runtime import Loop, Poll, Wait


def _or(a, b):
    if a is None:
        return b.copy()
    return a | b


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    """Lanes leave the kernel (`return`): they drop out of every enclosing loop and branch."""


_ESCAPES = (_Break, _Continue, _Return)


def _if_closure(cond, then_fn, then_b, else_fn, else_b, has_else, k):
    """An `if` statement's closure (a generator when a branch can block)."""
    if not (then_b or else_b):
        def run(w):
            w.instr += k
            c = cond(w)
            if type(c) is not np.ndarray:
                if c:
                    then_fn(w)
                elif has_else:
                    else_fn(w)
                return
            _divergent_if(w, V.truthy(c), then_fn, else_fn if has_else else None)
        return run, False

    def run_gen(w):
        w.instr += k
        c = cond(w)
        if type(c) is not np.ndarray:
            if c:
                if then_b:
                    yield from then_fn(w)
                else:
                    then_fn(w)
            elif has_else:
                if else_b:
                    yield from else_fn(w)
                else:
                    else_fn(w)
            return
        yield from _divergent_if_gen(w, V.truthy(c), then_fn, then_b, else_fn if has_else else None, else_b)
    return run_gen, True


def _note_iters(err: EngineError, w) -> None:
    """Keep the failing loop-iteration vector on an error (the loops' `finally` pops it on the way out)."""
    if err.details.get("warp", w.gid) == w.gid:
        err.details.setdefault("iters", list(w.iters))


def _next_iteration(w, loop: Loop, start_mask) -> bool:
    """Lanes for the next iteration: all that entered it except those that broke out."""
    if loop.brk is None and loop.cont is None:
        return True
    lanes = w.FULL if start_mask is None else start_mask
    if loop.brk is not None:
        lanes = lanes & ~loop.brk
    loop.cont = None
    if not V.nnz(lanes):
        return False
    w.mask = None if (start_mask is None and lanes.all()) else lanes
    return True


def _in_range(i, b, st):
    """The lanes whose loop variable `i` has not reached `b` (from below for a positive step, from above for a
    negative one); any of the three may differ per lane."""
    if type(st) is np.ndarray:
        return np.where(st > 0, i < b, i > b)
    return (i < b) if st > 0 else (i > b)


def _run_for(w, slot, a, b, st, body, span):
    loop = Loop()
    w.loops.append(loop)
    w.iters.append(0)
    saved = w.mask
    budget = w.eng.loop_budget
    env = w.env
    uniform_stop = type(b) is not np.ndarray and type(a) is not np.ndarray and type(st) is not np.ndarray
    try:
        i, k = a, 0
        while True:
            if uniform_stop:
                if (st > 0 and i >= b) or (st < 0 and i <= b):
                    break
            else:
                stay = w.active() & _in_range(i, b, st)
                if not V.nnz(stay):
                    break
                w.mask = stay
            env[slot] = i
            w.iters[-1] = k
            w.instr += 1
            try:
                body(w)
            except _Continue:
                pass
            except _Break:
                loop.brk = _or(loop.brk, w.active())
            if not _next_iteration(w, loop, saved):
                break
            i = i + st          # (never in place: a lane-varying start may be a shared array)
            k += 1
            if k > budget:
                raise ResourceLimit("loop_iterations", f"a for loop ran more than {budget} iterations at {span}",
                                    span=str(span), budget=budget)
            if w.instr - w.instr_seen >= CHECK_EVERY:
                w.eng.checkpoint(w)     # the run's step, time and memory budgets
    except EngineError as err:
        _note_iters(err, w)
        raise
    finally:
        w.loops.pop()
        w.iters.pop()
        w.mask = saved
    _left_loop(w, saved)


def _run_for_gen(w, slot, a, b, st, body, span):
    loop = Loop()
    w.loops.append(loop)
    w.iters.append(0)
    saved = w.mask
    budget = w.eng.loop_budget
    uniform_stop = type(b) is not np.ndarray and type(a) is not np.ndarray and type(st) is not np.ndarray
    try:
        i, k = a, 0
        while True:
            if uniform_stop:
                if (st > 0 and i >= b) or (st < 0 and i <= b):
                    break
            else:
                stay = w.active() & _in_range(i, b, st)
                if not V.nnz(stay):
                    break
                w.mask = stay
            w.env[slot] = i
            w.iters[-1] = k
            w.instr += 1
            try:
                yield from body(w)
            except _Continue:
                pass
            except _Break:
                loop.brk = _or(loop.brk, w.active())
            if not _next_iteration(w, loop, saved):
                break
            i = i + st          # (never in place: a lane-varying start may be a shared array)
            k += 1
            if k > budget:
                raise ResourceLimit("loop_iterations", f"a for loop ran more than {budget} iterations at {span}",
                                    span=str(span), budget=budget)
            if w.instr - w.instr_seen >= CHECK_EVERY:
                w.eng.checkpoint(w)     # the run's step, time and memory budgets
    except EngineError as err:
        _note_iters(err, w)
        raise
    finally:
        w.loops.pop()
        w.iters.pop()
        w.mask = saved
    _left_loop(w, saved)


def _escaped(w, lanes, exc) -> None:
    """Lanes of a divergent branch left the iteration (continue), the loop (break) or the kernel (return:
    they leave every enclosing loop, and `w.exited` keeps them out of the code after the loops)."""
    if isinstance(exc, _Return):
        w.exited = _or(w.exited, lanes)
        for loop in w.loops:
            loop.brk = _or(loop.brk, lanes)
        return
    loop = w.loops[-1]
    if isinstance(exc, _Break):
        loop.brk = _or(loop.brk, lanes)
    else:
        loop.cont = _or(loop.cont, lanes)


def _after_divergence(w, saved):
    loop = w.loops[-1] if w.loops else None
    remaining = w.FULL.copy() if saved is None else saved.copy()
    if loop is not None:
        if loop.brk is not None:
            remaining &= ~loop.brk
        if loop.cont is not None:
            remaining &= ~loop.cont
    if w.exited is not None:
        remaining &= ~w.exited
    if not V.nnz(remaining):
        w.mask = saved
        raise _Continue if loop is not None else _Return
    w.mask = None if (saved is None and remaining.all()) else remaining


def _left_loop(w, saved) -> None:
    """After a loop: the lanes that entered it, less those that returned inside it (none left: they all
    returned, so the warp leaves the enclosing code too)."""
    if w.exited is None:
        return
    remaining = (w.FULL if saved is None else saved) & ~w.exited
    if not V.nnz(remaining):
        raise _Return
    w.mask = remaining


def _divergent_if(w, c, then_fn, else_fn):
    saved = w.mask
    active = w.FULL if saved is None else saved
    t = active & c
    escaped = False
    if V.nnz(t):
        w.mask = t
        try:
            then_fn(w)
        except _ESCAPES as exc:
            _escaped(w, t, exc)
            escaped = True
    if else_fn is not None:
        f = active & ~c
        if V.nnz(f):
            w.mask = f
            try:
                else_fn(w)
            except _ESCAPES as exc:
                _escaped(w, f, exc)
                escaped = True
    if escaped:
        _after_divergence(w, saved)
    else:
        w.mask = saved


def _divergent_if_gen(w, c, then_fn, then_b, else_fn, else_b):
    saved = w.mask
    active = w.FULL if saved is None else saved
    t = active & c
    f = active & ~c if else_fn is not None else None
    if V.nnz(t) and f is not None and V.nnz(f):
        # both sides have lanes: independent thread scheduling (sm_70+) runs them as separate paths
        escaped = yield from _paths(w, ((t, then_fn, then_b), (f, else_fn, else_b)))
        if escaped:
            _after_divergence(w, saved)
        else:
            w.mask = saved
        return
    escaped = False
    for lanes, fn, blocking in ((t, then_fn, then_b), (f, else_fn, else_b)):
        if lanes is None or not V.nnz(lanes):
            continue
        w.mask = lanes
        try:
            if blocking:
                yield from fn(w)
            else:
                fn(w)
        except _ESCAPES as exc:
            _escaped(w, lanes, exc)
            escaped = True
    if escaped:
        _after_divergence(w, saved)
    else:
        w.mask = saved


class _Path:
    """One side of a divergent branch: its lanes and its own position (mask, loop stacks, what it awaits)."""

    __slots__ = ("fn", "blocking", "lanes", "mask", "iters", "loops", "gen", "wait", "last_poll", "done")

    def __init__(self, lanes, fn, blocking, iters, loops):
        self.fn = fn
        self.blocking = blocking
        self.lanes = lanes
        self.mask = lanes
        self.iters = list(iters)
        self.loops = list(loops)
        self.gen = None
        self.wait = None
        self.last_poll = None
        self.done = False


def _ready():
    return True


def _paths(w, branches):
    """Run the sides of a divergent branch as independently scheduled paths until they reconverge.

    Since Volta the paths of a divergent warp are scheduled independently: one side blocked in a
    non-aligned barrier.sync, an mbarrier wait or a spin loop does not stop the other side, which
    may be the one that releases it (PTX ISA, "Independent Thread Scheduling"; CUDA Programming
    Guide, compute capability 7.x).  Each scheduler turn advances every path that is not blocked to
    its next yield; the warp then blocks only when every live path does (on all their objects at
    once), polls when one polls, and otherwise just lets other warps run.  Events are recorded in
    the order the paths run.  Returns whether some lanes left by break/continue."""
    base_iters, base_loops = w.iters, w.loops
    paths = [_Path(lanes, fn, blocking, base_iters, base_loops) for lanes, fn, blocking in branches]
    escaped = False
    current = None

    def enter(p):
        nonlocal current
        w.mask, w.iters, w.loops = p.mask, p.iters, p.loops
        current = p

    def leave():
        nonlocal current
        if current is not None:
            current.mask = w.mask
            current = None

    try:
        while True:
            live = [p for p in paths if not p.done]
            if not live:
                break
            polled = None
            for p in live:
                if p.wait is not None:
                    if not p.wait.check():
                        continue
                    p.wait = None
                enter(p)
                try:
                    if not p.blocking:
                        p.fn(w)
                        p.done = True
                        continue
                    if p.gen is None:
                        p.gen = p.fn(w)
                    y = next(p.gen)
                except StopIteration:
                    p.done = True
                    continue
                except _ESCAPES as exc:
                    leave()
                    w.loops = base_loops
                    _escaped(w, p.lanes, exc)
                    escaped = True
                    p.done = True
                    continue
                finally:
                    leave()
                if type(y) is Wait:
                    if not y.check():
                        p.wait = y
                        p.last_poll = None
                    continue
                # a poll: the second one at the same site with no side effect in between parks the path on
                # the barrier it polls (as the scheduler parks a whole warp)
                key = (y.site, w.effects)
                if p.last_poll == key and y.obj is not None:
                    p.wait = Wait(y.obj, lambda o=y.obj, v=y.obj.version: o.version != v, y.what, y.site)
                    p.last_poll = None
                else:
                    p.last_poll = key
                    polled = y
            live = [p for p in paths if not p.done]
            if not live:
                break
            if w.COHORT:
                # a CTA cohort's rows may diverge where no CTA does: its turns need not be any CTA's steps
                raise CohortSplit("a divergent branch whose sides block or poll in a CTA cohort")
            if all(p.wait is not None for p in live):
                waits = [p.wait for p in live]
                objs = tuple(o for wt in waits for o in wt.watched())
                yield Wait(objs[0], lambda ws=waits: any(wt.check() for wt in ws),
                           lambda ws=waits, ps=live: "; ".join(
                               f"lanes {id_ranges(np.flatnonzero(p.lanes))}: {wt.describe()}" for p, wt in zip(ps, ws)),
                           waits[0].site, objs)
            elif polled is not None:
                yield Poll(None, polled.site, polled.what)
            else:
                yield Wait(None, _ready, "", None)
    finally:
        if current is not None:
            leave()
        for p in paths:
            if p.gen is not None and not p.done:
                enter(p)        # a path's own cleanup (loop stacks) runs in its context
                try:
                    p.gen.close()
                finally:
                    leave()
        w.iters, w.loops = base_iters, base_loops
    return escaped
