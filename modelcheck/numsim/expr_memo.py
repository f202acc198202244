"""Reuse of pure expression values: an index or predicate computed from the same variable values again.

Kernels recompute the same lane arithmetic at every access (`(warp & 3) * 64 + (lane & 15) * 4` from a
`lane_id()` bound once): each operator is a numpy call on 32 lanes.  A pure subexpression -- operators,
casts and non-lazy selects over variables, constants and thread indices, no load, call, `and`/`or` or
division by a variable -- is a function of its variables' values alone: masks, memory and schedule do not
enter it.  Its site keeps the values it computed, keyed by the variable values it read (Python ints) or their
identities (arrays: values are never changed in place, numsim.values) and the thread indices it used; an entry
holds those objects, so an identity in its key cannot be reused by another object while it lives.  A hit returns the
same (read-only) result the closure would compute; a miss computes it.  A site whose inputs change at most
evaluations (a value loaded anew) stops looking once its misses pass `_TRIAL` and half its hits.
"""
from __future__ import annotations

import numpy as np

import ir

_CAP = 64           # entries per site before it starts over (distinct CTAs / warps / iteration values)
_OFF = 1 << 62      # misses that turn a site off at once
_TRIAL = 256        # misses after which a site that hits less than twice per miss evaluates directly
_DIVISIONS = ("/", "//", "%", "tdiv", "tmod")


_INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def inputs(e: ir.Expr, const_value, seen: dict, register=None) -> tuple[tuple[str, ...], tuple[str, ...], int] | None:
    """(variables, thread-index tags, operators) of a pure expression, or None when it is not pure.
    `const_value`: the compiler's compile-time value of a leaf (scalar parameters are constants); `seen`: the
    answers so far by node id (a parent's answer is its children's, so a tree is walked once); `register(load)`:
    the input name (`register_name`) of a read of a register at constant indices no asynchronous operation writes,
    else None (such a read has no side effect while the register holds a value: see `memoized`)."""
    key = id(e)
    if key in seen:
        return seen[key][1]
    out = _inputs(e, const_value, seen, register)
    seen[key] = (e, out)        # (the node itself keeps its id from being reused)
    return out


def register_name(buffer: str, flat: int) -> str:
    """An input name for register element `flat` of local buffer `buffer` (no variable has such a name)."""
    return f"\0{buffer}[{flat}]"


def _inputs(e, const_value, seen, register):
    if isinstance(e, (ir.Const, ir.ConstRef)) or const_value(e) is not None:
        return (), (), 0
    if isinstance(e, ir.Var):
        return (e.name,), (), 0
    if isinstance(e, ir.Load):
        name = register(e) if register is not None else None
        return None if name is None else ((name,), (), 0)
    if isinstance(e, ir.ThreadIndex):
        return (), (e.tag,), 0
    if isinstance(e, ir.BinOp):
        if e.op in ("and", "or"):
            return None         # evaluated per lane under the mask (short circuit): not mask-independent
        if e.op in _DIVISIONS and not (e.op == "/" and e.a.dtype not in _INTS):   # (float division never faults)
            c = const_value(e.b)
            if c is None or isinstance(c, bool) or not c > 0:
                return None     # a variable divisor faults only on active lanes: mask-dependent
        parts = [e.a, e.b]
    elif isinstance(e, ir.UnaryOp):
        parts = [e.a]
    elif isinstance(e, ir.Cast):
        parts = [e.value]
    elif isinstance(e, ir.Select) and not e.lazy:
        parts = [e.cond, e.true_value, e.false_value]
    else:
        return None
    names: list[str] = []
    tags: list[str] = []
    n = 1
    for part in parts:
        sub = inputs(part, const_value, seen, register)
        if sub is None:
            return None
        names += [x for x in sub[0] if x not in names]
        tags += [x for x in sub[1] if x not in tags]
        n += sub[2]
    return tuple(names), tuple(tags), n


def _tag_key(tag: str):
    """A thread index's part of the key: what determines it for a warp (its index in the CTA for threadIdx,
    block dimensions being fixed for the run)."""
    k = "xyz".index(tag[-1])
    if tag.startswith("blockIdx"):
        return lambda w: w.block_idx[k]
    if tag.startswith("clusterCtaIdx"):
        return lambda w: w.rt.cluster_idx[k]
    return lambda w: w.index


def _part(v):
    """A variable value's part of a key: a Python int by value (immutable, and loop counters and indices are made
    anew each time), anything else (arrays, numpy scalars -- a float's value would merge -0.0 and 0.0 and never
    match a NaN) by identity, which its entry keeps alive."""
    return v if type(v) is int else (id(v),)


def memoized(fn, slots: list[int], tags, regs=()):
    """`fn` (a pure expression's closure reading the variables in `slots`, the thread indices `tags` and the
    register elements `regs`, (local slot, index) pairs) returning a kept value when the same inputs come again.
    A register is part of the key only while it holds a Python int (a uniform index, the common case): reading one
    that holds a value has no side effect, so a hit skips nothing but arithmetic; any other (a lane vector, which
    a CTA cohort's row may change in place, or an unwritten register, whose read is noted) evaluates directly."""
    table: dict = {}
    state = [0, 0]          # misses, hits
    tag_keys = [_tag_key(t) for t in tags]

    def miss(w, key, held):
        r = fn(w)
        if type(r) is not np.ndarray:
            state[0] = _OFF                 # a warp-uniform value: computing it costs less than looking it up
            return r
        r.flags.writeable = False           # shared by every later hit: never changed in place
        if len(table) >= _CAP:
            table.clear()
        table[key] = (held, r)
        state[0] += 1
        return r

    if regs:
        regs = tuple(regs)

        def with_registers(w):
            if w.COHORT or state[0] > _TRIAL and state[1] < 2 * state[0]:
                return fn(w)
            local = w.local
            held = []
            for s, i in regs:
                v = local[s][i]
                if type(v) is not int:
                    return fn(w)
                held.append(v)
            env = w.env
            held.extend(env[s] for s in slots)
            key = tuple(map(_part, held)) + tuple(t(w) for t in tag_keys)
            ent = table.get(key)
            if ent is not None:
                state[1] += 1
                return ent[1]
            return miss(w, key, tuple(held))
        return with_registers

    if not tag_keys and len(slots) == 1:
        (s,) = slots

        def one(w):
            if w.COHORT or state[0] > _TRIAL and state[1] < 2 * state[0]:
                return fn(w)
            a = w.env[s]
            ent = table.get(a if type(a) is int else (id(a),))
            if ent is not None:
                state[1] += 1
                return ent[1]
            return miss(w, a if type(a) is int else (id(a),), a)
        return one

    if not tag_keys and len(slots) == 2:
        s0, s1 = slots

        def two(w):
            if w.COHORT or state[0] > _TRIAL and state[1] < 2 * state[0]:
                return fn(w)
            env = w.env
            a, b = env[s0], env[s1]
            key = (a if type(a) is int else (id(a),), b if type(b) is int else (id(b),))
            ent = table.get(key)
            if ent is not None:
                state[1] += 1
                return ent[1]
            return miss(w, key, (a, b))
        return two

    def general(w):
        if w.COHORT or state[0] > _TRIAL and state[1] < 2 * state[0]:
            return fn(w)
        env = w.env
        held = tuple(env[s] for s in slots)
        key = tuple(map(_part, held)) + tuple(t(w) for t in tag_keys)
        ent = table.get(key)
        if ent is not None:
            state[1] += 1
            return ent[1]
        return miss(w, key, held)
    return general
