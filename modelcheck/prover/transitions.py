"""The moves of the transition system between two symbolic states, and what each move violates.

A move is one warp running its next step or one asynchronous completion landing.  Every
move carries `pre` (it can happen in the first state), `post` (the second state is its
result), the barrier slot it touches (a z3 term), and `bad`: for each (barrier family,
property) the condition under which taking it breaks that property.  Deadlock and exit
balance are properties of a single state.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from .model import Model, State, _min


@dataclass
class Move:
    what: str                 # "step" | "deliver"
    warp: int
    step: object
    pre: object
    post: object = None
    bad: dict = field(default_factory=dict)       # (family, property) -> z3 Bool
    blocked: object = None                        # for waits: at the step, guard holds, cannot pass
    family: str = ""
    slot: object = None                           # the slot term the move touches (None: none)
    effect: tuple = ()                            # what it changes, for State.after


def _or_into(bad: dict, key, cond) -> None:
    bad[key] = cond if key not in bad else z3.Or(bad[key], cond)


def moves(m: Model, s0: State, s1: State | None) -> list[Move]:
    out = []
    for p in m.procs:
        for st in p.steps:
            out.append(_step_move(m, s0, s1, p, st))
        for i, b in enumerate(p.blocks):
            if b.kind == "loop":
                mv = Move("exit", p.warp, None, s0.at_exit(p, i), effect=("pos", p.warp, (i + 1, 0, 0)))
                if s1 is not None:
                    mv.post = z3.And(*_frame(s0, s1, warp=p.warp, to=(i + 1, 0, 0)))
                out.append(mv)
    for p, st in m.async_steps:
        out.append(_delivery(m, s0, s1, p, st))
    return out


def _frame(s0: State, s1: State, warp=None, to=None, delivery=None) -> list:
    """s1 equals s0 except warp's position (now `to`: (block, q, offset) terms) or one delivery counter."""
    eqs = []
    for w in s0.blk:
        if w == warp:
            eqs += [s1.blk[w] == to[0], s1.q[w] == to[1], s1.pos[w] == to[2]]
        else:
            eqs += [s1.blk[w] == s0.blk[w], s1.q[w] == s0.q[w], s1.pos[w] == s0.pos[w]]
    for key, d in s0.d.items():
        eqs.append(s1.d[key] == (d + 1 if key == delivery else d))
    return eqs


def _successor(p, st, s0: State):
    """The position after running step st."""
    b = st.block
    i = p.blocks.index(b)
    if st.offset + 1 < b.length:
        return i, s0.q[p.warp], st.offset + 1
    if b.kind == "loop":
        return i, s0.q[p.warp] + 1, 0
    return i + 1, 0, 0


def intended(m: Model, s0: State, warp, fam, slot):
    """The generation `warp`'s next arrival on fam[slot] is meant for."""
    return s0.share_gens(warp, fam, slot, s0.arrivals(warp, fam, slot))


def _misplaced(m: Model, s0: State, warp, fam, slot):
    """P1 for an arrival of `warp`: it lands on another generation than its own, or on a generation whose
    arrivals are complete but whose bytes are still pending."""
    prm = m.params[fam]
    sa = s0.total_arrivals(fam, slot)
    from .model import lookup
    arrives_here = lookup(slot, tuple(1 if x else 0 for x in prm.share.get(warp, (0,) * prm.size))) == 1
    wrong = s0.terms.floordiv(sa, prm.count) != intended(m, s0, warp, fam, slot)
    overfull = sa >= (s0.gen(fam, slot) + 1) * prm.count
    return z3.Or(z3.Not(arrives_here), wrong, overfull)


def backpressure(m: Model, s0: State, fam, slot):
    """Some warp still owes a wait for the generation before the one being mutated, or nobody ever waits on
    this slot and a generation of it has completed (then none is consumed before the next is started)."""
    prm = m.params[fam]
    g = s0.gen(fam, slot)
    from .model import lookup
    watched = tuple(1 if any(here[s] for here in prm.waiters.values()) else 0 for s in range(prm.size))
    owed = [] if all(watched) else [z3.And(g >= 1, lookup(slot, watched) == 0)]
    for q in m.procs:
        if not any(prm.waiters.get(q.warp, ())):
            continue
        need = _min(s0.waits(q.warp, fam, slot, at_end=True), g - s0.k0(q.warp, fam, slot))
        owed.append(s0.waits(q.warp, fam, slot) < need)
    return z3.Or(*owed) if owed else z3.BoolVal(False)


def _step_move(m: Model, s0: State, s1, p, st) -> Move:
    at, T = s0.at(p, st)
    cmd = st.cmd
    guard = T.bool_of(st.guard) if st.guard is not None else z3.BoolVal(True)
    fam = cmd.family
    slot = T.int_of(cmd.slot)
    mv = Move("step", p.warp, st, at, family=fam, slot=slot, effect=("pos", p.warp, _successor(p, st, s0)))
    runs = z3.And(at, guard)
    if cmd.kind == "wait":
        par = T.int_of(cmd.parity)
        g = s0.gen(fam, slot)
        passes = s0.terms.floormod(g, 2) != T.floormod(par, 2)
        mv.pre = z3.And(at, z3.Or(z3.Not(guard), passes))
        mv.blocked = z3.And(runs, z3.Not(passes))
        wrong = g - 1 != s0.waits(p.warp, fam, slot) + s0.k0(p.warp, fam, slot)
        mv.bad[(fam, "P2")] = z3.And(runs, passes, z3.Or(wrong, z3.And(par != 0, par != 1)))
    elif cmd.kind in ("arrive", "bar_arrive", "expect_tx"):
        if cmd.kind != "expect_tx":
            mv.bad[(fam, "P1")] = z3.And(runs, _misplaced(m, s0, p.warp, fam, slot))
        if not fam.startswith("bar"):
            mv.bad[(fam, "P3")] = z3.And(runs, backpressure(m, s0, fam, slot))
    elif cmd.kind == "bar_wait":
        passes = s0.gen(fam, slot) >= intended(m, s0, p.warp, fam, slot)
        mv.pre = z3.And(at, z3.Or(z3.Not(guard), passes))
        mv.blocked = z3.And(runs, z3.Not(passes))
    if s1 is not None:
        mv.post = z3.And(*_frame(s0, s1, warp=p.warp, to=mv.effect[2]))
    return mv


def _delivery(m: Model, s0: State, s1, p, st) -> Move:
    key = (p.warp, st.index)
    d = s0.d[key]
    cmd = st.cmd
    fam = cmd.family
    b = st.block
    names = dict(m.syms)
    if b.kind == "loop":
        names[b.var] = s0.terms.int_of(b.start) + d      # the d-th execution's iteration
    slot = s0.terms_for(names).int_of(cmd.slot)
    mv = Move("deliver", p.warp, st, d < s0.issued(p.warp, st), family=fam, slot=slot, effect=("deliver", key))
    prm = m.params[fam]
    if cmd.kind == "commit":
        p1 = _misplaced(m, s0, p.warp, fam, slot)
    else:
        from .model import lookup
        per = lookup(slot, prm.tma_per_gen.get(key, (0,) * prm.size))
        mine = s0.delivered(p.warp, st, slot)
        if not any(prm.bytes_per_gen) or not any(prm.tma_per_gen.get(key, ())):
            p1 = z3.BoolVal(True)        # bytes land on a barrier that expects none
        else:
            # its delivered generations (per slot, by its per-generation count) must be the open one
            gens = mine
            for s in range(prm.size - 1, -1, -1):
                n = prm.tma_per_gen[key][s]
                if n:
                    gens = z3.If(slot == s, s0.terms.floordiv(mine, n), gens)
            p1 = z3.Or(per == 0, gens != s0.gen(fam, slot))
    mv.bad[(fam, "P1")] = z3.And(mv.pre, p1)
    mv.bad[(fam, "P3")] = z3.And(mv.pre, backpressure(m, s0, fam, slot))
    if s1 is not None:
        mv.post = z3.And(*_frame(s0, s1, delivery=key))
    return mv


def stuck(m: Model, s0: State, mvs: list[Move]) -> dict:
    """family -> the state is not done, nothing can move, and some warp waits on that family."""
    nothing = z3.And(z3.Not(s0.done()), *[z3.Not(mv.pre) for mv in mvs])
    out: dict = {}
    for mv in mvs:
        if mv.blocked is not None:
            _or_into(out, mv.family, mv.blocked)
    return {fam: z3.And(nothing, cond) for fam, cond in out.items()}


def unbalanced(m: Model, s0: State, sigma: dict) -> dict:
    """family -> at the end, some slot (the symbolic slot sigma[size]) has a partial generation or bytes
    not matching its expect_tx."""
    out: dict = {}
    for fam, prm in m.params.items():
        slot = sigma[prm.size]
        sa = s0.total_arrivals(fam, slot)
        bad = s0.terms.floormod(sa, prm.count) != 0
        if any(prm.bytes_per_gen) or any(st.cmd.family == fam and st.cmd.kind == "tma" for _, st in m.async_steps):
            bad = z3.Or(bad, s0.expected_bytes(fam, slot) != s0.delivered_bytes(fam, slot))
        out[fam] = z3.And(s0.done(), slot >= 0, slot < prm.size, bad)
    return out


def transition(m: Model, s0: State, s1: State) -> tuple[object, list[Move]]:
    mvs = moves(m, s0, s1)
    return z3.Or(*[z3.And(mv.pre, mv.post) for mv in mvs]), mvs


def sigma(m: Model, tag: str) -> dict:
    """One symbolic slot per family size: what holds for it holds for every slot."""
    return {size: z3.Int(f"sigma{size}_{tag}") for size in m.sizes()}


def bad_by_property(m: Model, s0: State, mvs: list[Move], slots: dict) -> dict:
    """(family, property) -> condition on s0 (and the move taken from it) that breaks it."""
    bad: dict = {}
    for mv in mvs:
        for key, cond in mv.bad.items():
            _or_into(bad, key, cond)
    for fam, cond in stuck(m, s0, mvs).items():
        _or_into(bad, (fam, "P4"), cond)
    for fam, cond in unbalanced(m, s0, slots).items():
        _or_into(bad, (fam, "P4"), cond)
    return bad
