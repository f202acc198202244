"""The transition system run concretely: random schedules at small sizes.

Two uses.  Houdini starts from the candidates that hold in every sampled reachable state
(a candidate false in one is not an invariant, and dropping it here costs no solver
query).  And the tests compare this plain-Python reading of the model with the z3 terms
evaluated at the same concrete states, so the symbolic encoding has an independent check.
"""
from __future__ import annotations

import random

import numpy as np

from .model import WAITS, Model
from .program import evaluate


class Concrete:
    """The model at concrete sizes `env`."""

    def __init__(self, m: Model, env: dict):
        self.m = m
        self.env = env
        self.total = {p.warp: m.total_steps(p, env) for p in m.procs}
        self.bases = {(p.warp, id(b)): _ev(b.base, env) for p in m.procs for b in p.blocks}
        self.trips = {(p.warp, id(b)): (max(0, int(evaluate(b.stop, env)) - int(evaluate(b.start, env)))
                                        if b.kind == "loop" else 1) for p in m.procs for b in p.blocks}
        self._counts: dict = {}
        self._cs: dict = {}

    # ------------------------------------------------------------------ decoding
    def step_at(self, warp: int, t: int):
        """(step, iteration environment) of warp's step t, or None past the end."""
        p = self.m.proc(warp)
        for b in p.blocks:
            base = self.bases[(warp, id(b))]
            if b.kind == "straight":
                if base <= t < base + b.length:
                    return b.steps[t - base], dict(self.env)
                continue
            q, off = divmod(t - base, b.length)
            if t >= base and q < self.trips[(warp, id(b))]:
                env = dict(self.env)
                env[b.var] = int(evaluate(b.start, self.env)) + q
                return b.steps[off], env
        return None

    # ------------------------------------------------------------------ counters
    def count(self, st, slot, t) -> int:
        key = (st.proc, st.index, slot, t)
        n = self._counts.get(key)
        if n is None:
            n = self._counts[key] = self.m.concrete_count(st, slot, t, self.env)
        return n

    def delivered(self, st, slot, d: int) -> int:
        """Executions among the first d of an (unguarded) asynchronous step that target `slot`."""
        b = st.block
        if b.kind == "straight":
            return int(d >= 1 and (slot is None or int(evaluate(st.cmd.slot, self.env)) == slot))
        start = int(evaluate(b.start, self.env))
        n = 0
        for r in range(start, start + d):
            e = dict(self.env)
            e[b.var] = r
            if slot is None or int(evaluate(st.cmd.slot, e)) == slot:
                n += 1
        return n

    def arrivals(self, state, warp, fam, slot) -> int:
        t, d = state
        total = 0
        for st in self.m.proc(warp).steps:
            if st.cmd.family != fam:
                continue
            if st.cmd.kind in ("arrive", "bar_arrive"):
                total += st.cmd.units * self.count(st, slot, t[warp])
            elif st.cmd.kind == "commit":
                total += self.delivered(st, slot, d[(warp, st.index)])
        return total

    def gen(self, state, fam, slot) -> int:
        prm = self.m.params[fam]
        g = sum(self.arrivals(state, p.warp, fam, slot) for p in self.m.procs) // prm.count
        if any(prm.bytes_per_gen):
            _, d = state
            delivered = sum(self.m.tma_bytes[st.cmd.site] * self.delivered(st, slot, d[(p.warp, st.index)])
                            for p, st in self.m.async_steps if st.cmd.family == fam and st.cmd.kind == "tma")
            g = min(g, delivered // prm.bytes_per_gen[0])
        return g

    def waits(self, state, warp, fam, slot) -> int:
        t, _ = state
        return sum(self.count(st, slot, t[warp]) for st in self.m.proc(warp).steps
                   if st.cmd.family == fam and st.cmd.kind in WAITS)

    def counters(self, state, fam, slot) -> dict:
        key = (tuple(sorted(state[0].items())), tuple(sorted(state[1].items())), fam, slot)
        hit = self._cs.get(key)
        if hit is None:
            hit = self._cs[key] = self._counters(state, fam, slot)
        return hit

    def _counters(self, state, fam, slot) -> dict:
        _, d = state
        return counter_values(self.m.params[fam], slot, self.gen(state, fam, slot),
                              lambda w: self.arrivals(state, w, fam, slot),
                              lambda w: self.waits(state, w, fam, slot),
                              lambda w, idx: self.delivered(self.m.proc(w).steps[idx], slot, d[(w, idx)]))

    # ------------------------------------------------------------------ moves
    def enabled(self, state) -> list:
        t, d = state
        out = []
        for p in self.m.procs:
            w = p.warp
            if t[w] >= self.total[w]:
                continue
            st, env = self.step_at(w, t[w])
            c = st.cmd
            if st.guard is not None and not evaluate(st.guard, env):
                out.append(("step", w))
                continue
            slot = int(evaluate(c.slot, env))
            if c.kind == "wait":
                if self.gen(state, c.family, slot) % 2 != int(evaluate(c.parity, env)) % 2:
                    out.append(("step", w))
            elif c.kind == "bar_wait":
                prm = self.m.params[c.family]
                share = prm.share[w][slot] or c.units
                if self.gen(state, c.family, slot) >= self.arrivals(state, w, c.family, slot) // share:
                    out.append(("step", w))
            else:
                out.append(("step", w))
        for p, st in self.m.async_steps:
            key = (p.warp, st.index)
            if d[key] < self.count(st, None, t[p.warp]):
                out.append(("deliver", key))
        return out

    def initial(self):
        return ({p.warp: 0 for p in self.m.procs}, {(p.warp, st.index): 0 for p, st in self.m.async_steps})



def _ev(term, env) -> int:
    from .model import _ev as ev
    return ev(term, env)


class Walk:
    """One random schedule at concrete sizes with its counters kept up to date move by move.

    `Concrete` recounts every command from the start for each state; along a walk a move changes
    one warp's position or one delivery count, so the counters change by at most one command's
    units.  Each state's counters go into `Concrete`'s cache, where `surviving` reads them."""

    def __init__(self, c: Concrete):
        self.c = c
        m = c.m
        self.t, self.d = c.initial()
        self.arr: dict = {}           # (warp, family, slot) -> arrival units so far (commits: delivered)
        self.waits: dict = {}         # (warp, family, slot) -> waits passed
        self.deliv: dict = {}         # (warp, step index, slot) -> deliveries of an async step
        self.issued = dict.fromkeys(self.d, 0)
        self.cur = {p.warp: self._decode(p.warp) for p in m.procs}
        self.tx_sites = {fam: [(p.warp, st.index, m.tma_bytes[st.cmd.site]) for p, st in m.async_steps
                               if st.cmd.family == fam and st.cmd.kind == "tma"] for fam in m.params}

    def _decode(self, w: int):
        """(step, guard holds, slot, parity) of warp w's next step, or None at its end."""
        if self.t[w] >= self.c.total[w]:
            return None
        st, env = self.c.step_at(w, self.t[w])
        c = st.cmd
        on = st.guard is None or bool(evaluate(st.guard, env))
        slot = int(evaluate(c.slot, env)) if on else None
        parity = int(evaluate(c.parity, env)) % 2 if on and c.kind == "wait" else None
        return st, on, slot, parity

    def gen(self, fam, slot) -> int:
        m = self.c.m
        prm = m.params[fam]
        g = sum(self.arr.get((p.warp, fam, slot), 0) for p in m.procs) // prm.count
        if any(prm.bytes_per_gen):
            delivered = sum(nbytes * self.deliv.get((w, idx, slot), 0) for w, idx, nbytes in self.tx_sites[fam])
            g = min(g, delivered // prm.bytes_per_gen[0])
        return g

    def enabled(self) -> list:
        m = self.c.m
        out = []
        for p in m.procs:
            w = p.warp
            cur = self.cur[w]
            if cur is None:
                continue
            st, on, slot, parity = cur
            c = st.cmd
            if not on:
                out.append(("step", w))
            elif c.kind == "wait":
                if self.gen(c.family, slot) % 2 != parity:
                    out.append(("step", w))
            elif c.kind == "bar_wait":
                share = m.params[c.family].share[w][slot] or c.units
                if self.gen(c.family, slot) >= self.arr.get((w, c.family, slot), 0) // share:
                    out.append(("step", w))
            else:
                out.append(("step", w))
        for key, n in self.d.items():
            if n < self.issued[key]:
                out.append(("deliver", key))
        return out

    def apply(self, move) -> None:
        if move[0] == "step":
            w = move[1]
            st, on, slot, _ = self.cur[w]
            if on:
                c = st.cmd
                if c.kind in ("arrive", "bar_arrive"):
                    key = (w, c.family, slot)
                    self.arr[key] = self.arr.get(key, 0) + c.units
                elif c.kind in WAITS:
                    key = (w, c.family, slot)
                    self.waits[key] = self.waits.get(key, 0) + 1
                if (w, st.index) in self.issued:
                    self.issued[(w, st.index)] += 1
            self.t = dict(self.t)
            self.t[w] += 1
            self.cur[w] = self._decode(w)
            return
        w, idx = move[1]
        st = self.c.m.proc(w).steps[idx]
        slot = self._delivery_slot(st, self.d[(w, idx)])
        self.d = dict(self.d)
        self.d[(w, idx)] += 1
        key = (w, idx, slot)
        self.deliv[key] = self.deliv.get(key, 0) + 1
        if st.cmd.kind == "commit":
            akey = (w, st.cmd.family, slot)
            self.arr[akey] = self.arr.get(akey, 0) + 1

    def _delivery_slot(self, st, k: int) -> int:
        """The slot of the (k+1)-th execution of an (unguarded) asynchronous step."""
        b = st.block
        env = self.c.env
        if b.kind == "loop":
            env = dict(env)
            env[b.var] = int(evaluate(b.start, self.c.env)) + k
        return int(evaluate(st.cmd.slot, env))

    def state(self):
        return self.t, self.d

    def record(self) -> None:
        """Put this state's counters, per family and slot, into the Concrete's cache."""
        m = self.c.m
        ts, ds = tuple(sorted(self.t.items())), tuple(sorted(self.d.items()))
        for fam, prm in m.params.items():
            for slot in range(prm.size):
                self.c._cs[(ts, ds, fam, slot)] = counter_values(
                    prm, slot, self.gen(fam, slot), lambda w: self.arr.get((w, fam, slot), 0),
                    lambda w: self.waits.get((w, fam, slot), 0), lambda w, idx: self.deliv.get((w, idx, slot), 0))


def counter_values(prm, slot: int, gen: int, arrivals, waits, delivered) -> dict:
    """A family's generation counters at one slot, as `induction.counters` names them, from the raw counts
    (arrival units, waits passed, TMA deliveries) of each warp."""
    cs = {"gen": gen}
    for w, shares in prm.share.items():
        if any(shares):
            a = arrivals(w)
            cs[f"arr{w}"] = a // shares[slot] if shares[slot] else a
    for w, here in prm.waiters.items():
        if any(here):
            cs[f"wait{w}"] = waits(w) + prm.k0[w][slot]
    for (w, idx), per in prm.tma_per_gen.items():
        if any(per):
            n = delivered(w, idx)
            cs[f"tma{w}_{idx}"] = n // per[slot] if per[slot] else n
    return cs


def reachable_states(m: Model, sizes: list[dict], walks: int = 6, seed: int = 0, limit: int = 4000) -> list:
    """(Concrete, state) pairs along random schedules at each size (every state of each walk); each
    state's counters are already in its Concrete's cache."""
    rng = random.Random(seed)
    out = []
    for env in sizes:
        c = Concrete(m, env)
        for _ in range(walks):
            walk = Walk(c)
            walk.record()
            out.append((c, walk.state()))
            for _ in range(limit):
                moves = walk.enabled()
                if not moves:
                    break
                walk.apply(rng.choice(moves))
                walk.record()
                out.append((c, walk.state()))
    return out


def surviving(m: Model, cands: list, samples: list) -> list:
    """The candidates that hold in every sampled state (slot-free candidates are kept as they are).

    Per family the sampled counters form a matrix (one row per state and slot, duplicates dropped);
    a candidate `a <= b + k` is then one vectorized comparison of two columns."""
    rows: dict = {fam: set() for fam in m.params}
    names: dict = {}
    for c, state in samples:
        for fam, prm in m.params.items():
            for slot in range(prm.size):
                cs = c.counters(state, fam, slot)
                order = names.setdefault(fam, tuple(cs))
                rows[fam].add(tuple(cs[n] for n in order))
    columns = {}
    for fam, seen in rows.items():
        if seen:
            mat = np.array(sorted(seen), dtype=np.int64)
            columns[fam] = {n: mat[:, i] for i, n in enumerate(names[fam])}
    keep = []
    for cand in cands:
        if not cand.family:
            keep.append(cand)
            continue
        a, b, k = cand.terms
        col = columns.get(cand.family)
        if col is None or bool(np.all(col[a] <= col[b] + k)):
            keep.append(cand)
    return keep
