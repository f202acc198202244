"""The sync skeleton laid out over the symbolic sizes: per-family parameters and closed-form counts.

Each warp's skeleton becomes numbered steps in blocks (`program.layout`): straight runs and
loops over a symbolic trip count.  `Model` holds, per barrier family, what every size has in
common, read off concrete evaluations at sampled sizes: the count, each warp's arrival units
per generation on each slot (its share), the offset of its first wait (k0 = -1 when it waits
with parity 1 first: the phase before init), the expect_tx bytes and TMA executions per
generation.  The slot and guard of every command are classified once (`program.slot_form`,
`program.guard_set`).

`State` gives, for warps placed at a position (block, iteration q, offset in the block), the
number of times each command ran before that position on a given slot, as z3 terms in the
symbolic sizes: loops count `#{r < x : (r + b) % D == s} = (x - ((s - b) mod D) + D - 1) // D`,
so slots are z3 terms, not enumerated, and the size of a query does not grow with D.  Floor
divisions are lowered to quotient variables (`z3expr.Terms`).  The happens-before certificate
places one warp per event (`symbolic.SymEvent`) or none at all (`symbolic.Ends`: the counts at
the end of the run).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import z3

from .exprs import OutsideFragment, evaluate
from .program import Proc, guard_set, layout, slot_form
from .skeleton import Skeleton
from .solving import Ledger
from .z3expr import Terms, eq, gt, if_, max_, min_

# the commands whose passing a warp's wait counter counts: an mbarrier wait, and a named barrier's sync (it
# passes once its generation completes, so the counter ties the warp's position to that generation)
WAITS = ("wait", "bar_wait")


def _first_parity(c, env) -> int:
    """The parity of a warp's first wait (a named barrier's sync waits for generation 0: parity 0)."""
    return int(evaluate(c.parity, env)) if c.kind == "wait" else 0


@dataclass
class FamilyParams:
    """Per barrier family, values per slot (tuples indexed by slot)."""

    size: int
    count: int                      # expected arrivals per generation (the same on every slot)
    share: dict                     # warp -> arrival units per generation, per slot (0: never arrives there)
    k0: dict                        # warp -> generation offset of its first wait, per slot (0 if it never waits)
    waiters: dict                   # warp -> per slot: does it wait there at all


def lookup(slot, values: tuple):
    """values[slot] for a z3 slot term (constant when every slot has the same value)."""
    if all(v == values[0] for v in values):
        return z3.IntVal(values[0])
    out = z3.IntVal(values[-1])
    for s in range(len(values) - 2, -1, -1):
        out = z3.If(slot == s, values[s], out)
    return out


class Model:
    def __init__(self, skel: Skeleton, ranges: dict, tma_bytes: dict, ledger: Ledger | None = None):
        self.skel = skel
        self.ledger = Ledger() if ledger is None else ledger     # what z3 spends on the certificate's queries
        self.ranges = ranges                        # symbolic name -> (lo, hi or None)
        self._keyed: dict = {}                      # AST id -> term, for `key`
        self.tx_runs: dict = {}                     # (warp, family) -> its expect_tx commands per generation
        self.events: dict = {}                      # (warp, step index) -> its symbolic event (symbolic.event)
        self.query_period: int | None = None        # residues the certificate's queries split on (solving.period)
        self.syms = {name: z3.Int(name) for name in skel.symbolic}
        self.size_terms = Terms(dict(self.syms))    # quotients of the sizes alone, shared by every state
        self.procs: list[Proc] = []
        for w, items in sorted(skel.warps.items()):
            p = layout(w, items, self.size_terms, skel.symbolic, {n: lo for n, (lo, _) in ranges.items()})
            if p.steps:
                self.procs.append(p)
        self.tma_bytes = tma_bytes                  # site -> bytes per TMA execution
        self.families: dict[str, int] = {}
        for p in self.procs:
            for st in p.steps:
                self.families.setdefault(st.cmd.family, skel.family_size.get(st.cmd.family, 1))
        self.async_steps = [(p, st) for p in self.procs for st in p.steps if st.cmd.kind in ("tma", "commit")]
        for _p, st in self.async_steps:
            if st.guard is not None:
                raise OutsideFragment(f"a guarded asynchronous {st.cmd.kind}", st.cmd.span)
            if st.cmd.kind == "tma" and st.cmd.site not in tma_bytes:
                raise OutsideFragment("a TMA copy whose byte count the concrete run did not observe", st.cmd.span)
        self._by_warp = {p.warp: p for p in self.procs}
        self.forms: dict = {}
        for p in self.procs:
            for st in p.steps:
                var = st.block.var if st.block.kind == "loop" else None
                gs = guard_set(var, st.guard, skel.symbolic, st.cmd.span) if var else None
                form = slot_form(var, st.cmd.slot, skel.symbolic, st.cmd.span)
                if form.kind == "rot" and form.expr is not None and gs is not None and gs.period > 1:
                    raise OutsideFragment("a ring cursor with a symbolic entry under a periodic guard", st.cmd.span)
                self.forms[(p.warp, st.index)] = (gs, form)
        self.params: dict[str, FamilyParams] = {}
        self._init_params()

    def proc(self, warp: int) -> Proc:
        return self._by_warp[warp]

    def form(self, st):
        return self.forms[(st.proc, st.index)]

    def key(self, term):
        """A cache key for a z3 term: its AST id (z3 hash-conses terms, so equal terms share one while they are
        alive).  The model keeps every keyed term alive, so no id is reused for another term while the
        model's caches live; sexpr() strings as keys cost 1-2 s a proof."""
        if term is None:
            return "any"
        i = term.get_id()
        if self._keyed.setdefault(i, term) is not term and not self._keyed[i].eq(term):
            return term.sexpr()
        return i

    # ------------------------------------------------------------------ parameters (concrete evaluation)
    def _envs(self) -> list[dict]:
        envs = []
        for k in (0, 1, 2, 3, 5, 8, 13, 21, 34, 66, 130):
            env = {}
            for name in self.skel.symbolic:
                lo, hi = self.ranges.get(name, (1, None))
                env[name] = lo + k if hi is None else min(lo + k, hi)
            envs.append(env)
        return envs

    def _init_params(self) -> None:
        envs = self._envs()
        for fam, size in self.families.items():
            counts = [self.skel.inits.get((fam, s)) for s in range(size)]
            used = [s for s in range(size) if counts[s] is not None]
            if len(used) != size:
                missing = [s for s in range(size) if counts[s] is None]
                raise OutsideFragment(f"{fam}[{missing[0]}] is used but never initialized before the roles start")
            try:
                values = {int(evaluate(c, {})) for c in counts if c is not None}    # all are: checked above
            except KeyError:
                raise OutsideFragment(f"a symbolic arrival count for {fam}") from None
            if len(values) != 1:
                raise OutsideFragment(f"the slots of {fam} expect different arrival counts {sorted(values)}")
            self.params[fam] = self._family_params(fam, size, values.pop(), envs)

    def _family_params(self, fam, size, count, envs) -> FamilyParams:
        share = {p.warp: [0] * size for p in self.procs}
        k0 = {p.warp: [0] * size for p in self.procs}
        waiters = {p.warp: [False] * size for p in self.procs}
        for s in range(size):
            whole = self._whole_shares(fam, s, count, envs)
            for env in envs:
                for p in self.procs:
                    units, visits = self._visits(p, fam, s, env)
                    if visits and whole is None:
                        # no consistent share of whole generations (a miscounted barrier): a round's units
                        if units % visits:
                            raise OutsideFragment(f"warp {p.warp} arrives on {fam}[{s}] with different counts in "
                                                  f"different rounds")
                        m = units // visits
                        if share[p.warp][s] and share[p.warp][s] != m:
                            raise OutsideFragment(f"warp {p.warp}'s arrivals per round on {fam}[{s}] change with "
                                                  f"the symbolic sizes")
                        share[p.warp][s] = m
                    elif visits and whole is not None:      # (whole is set here: None went above)
                        share[p.warp][s] = whole.get(p.warp, 0)
            for p in self.procs:
                first = next((f for f in (self._first_wait(p, fam, s, env) for env in envs) if f is not None), None)
                if first is not None:
                    waiters[p.warp][s] = True
                    k0[p.warp][s] = -1 if first % 2 == 1 else 0
        freeze = lambda d: {w: tuple(v) for w, v in d.items()}   # noqa: E731
        return FamilyParams(size, count, freeze(share), freeze(k0), freeze(waiters))

    def _whole_shares(self, fam, s, count, envs) -> dict | None:
        """warp -> its arrival units per generation, when every size gives whole generations with the same
        shares; None when the counts do not divide (the barrier's count and its arrivals disagree)."""
        shares: dict = {}
        seen = False
        for env in envs:
            totals = {p.warp: self._visits(p, fam, s, env)[0] for p in self.procs}
            arrivals = sum(totals.values())
            if not arrivals:
                continue
            if arrivals % count:
                return None
            seen = True
            for w, a in totals.items():
                if not a:
                    continue
                if (a * count) % arrivals or shares.setdefault(w, a * count // arrivals) != a * count // arrivals:
                    return None
        return shares if seen else None

    def _visits(self, p, fam, s, env) -> tuple[int, int]:
        """(arrival units, rounds with an arrival) of warp p on fam[s]: a round is one straight-line run or one
        loop iteration, and the warp's share of each generation is its units per round."""
        units = 0
        rounds: set[tuple[int, int | None]] = set()
        for b_index, b in enumerate(p.blocks):
            steps = [st for st in b.steps if st.cmd.family == fam and st.cmd.kind in ("arrive", "bar_arrive",
                                                                                       "commit")]
            if not steps:
                continue
            if b.kind == "straight":
                for st in steps:
                    if (st.guard is None or evaluate(st.guard, env)) and int(evaluate(st.cmd.slot, env)) == s:
                        units += st.cmd.units
                        rounds.add((b_index, None))
                continue
            start, stop = int(evaluate(b.start, env)), int(evaluate(b.stop, env))
            for r in range(start, stop):
                e = dict(env)
                e[b.var] = r
                for st in steps:
                    if (st.guard is None or evaluate(st.guard, e)) and int(evaluate(st.cmd.slot, e)) == s:
                        units += st.cmd.units
                        rounds.add((b_index, r))
        return units, len(rounds)

    def _first_wait(self, p, fam, s, env):
        """The parity of warp p's first wait on fam[s] (None: it never waits there)."""
        for b in p.blocks:
            if b.kind == "straight":
                for st in b.steps:
                    c = st.cmd
                    if c.kind in WAITS and c.family == fam and int(evaluate(c.slot, env)) == s and \
                            (st.guard is None or evaluate(st.guard, env)):
                        return _first_parity(c, env)
                continue
            start, stop = int(evaluate(b.start, env)), int(evaluate(b.stop, env))
            for r in range(start, stop):
                e = dict(env)
                e[b.var] = r
                for st in b.steps:
                    c = st.cmd
                    if c.kind in WAITS and c.family == fam and int(evaluate(c.slot, e)) == s and \
                            (st.guard is None or evaluate(st.guard, e)):
                        return _first_parity(c, e)
        return None

    # ------------------------------------------------------------------ symbolic states
    def state(self, tag: str, warps=None) -> "State":
        return State(self, tag, warps)

    def domain(self) -> list:
        """Constraints on the symbolic constants (their ranges), and the quotients of terms over them alone."""
        out = []
        for name, v in self.syms.items():
            lo, hi = self.ranges.get(name, (1, None))
            out.append(v >= lo)
            if hi is not None:
                out.append(v <= hi)
        return out + list(self.size_terms.side)


def roles(m: Model) -> dict:
    """warp -> the lowest warp with the same sync program (same commands, slots, parities, guards, loops).  Warps
    of one role are interchangeable: a fact shown for the role's first warp holds for every warp of it."""
    def program(p):
        return [(st.cmd, st.guard, st.block.kind, st.block.var, st.block.start, st.block.stop, st.offset)
                for st in p.steps]
    firsts: list = []
    out = {}
    for p in m.procs:
        prog = program(p)
        rep = next((w for w, other in firsts if other == prog), None)
        if rep is None:
            firsts.append((p.warp, prog))
            rep = p.warp
        out[p.warp] = rep
    return out


def role_members(role: dict) -> dict:
    """representative warp -> the warps of its role, in order."""
    out: dict = {}
    for w, rep in sorted(role.items()):
        out.setdefault(rep, []).append(w)
    return out


class State:
    """Positions of some warps, and the counts of their commands before those positions, as z3 terms."""

    def __init__(self, model: Model, tag: str, warps=None):
        """`warps`: the warps whose positions the state has variables for (all by default; an event places its
        own warp, `symbolic.Ends` none)."""
        self.m = model
        self.tag = tag
        procs = model.procs if warps is None else [model.proc(w) for w in warps]
        self.blk = {p.warp: z3.Int(f"b{p.warp}_{tag}") for p in procs}
        self.q = {p.warp: z3.Int(f"q{p.warp}_{tag}") for p in procs}
        self.pos = {p.warp: z3.Int(f"o{p.warp}_{tag}") for p in procs}
        self.terms = Terms(dict(model.syms), model.size_terms)
        self._cache: dict = {}

    @property
    def side(self) -> list:
        """The definitions of the quotient variables the state's terms use."""
        return self.terms.side

    def terms_for(self, names: dict) -> Terms:
        """Terms over other names whose quotient variables and side constraints are this state's."""
        return self.terms.over(names)

    # ------------------------------------------------------------------ counting
    def _below(self, x, period: int, residue):
        """#{r in [0, x) : r % period == residue} for x >= 0 (residue an int or a term in [0, period))."""
        if z3.is_int_value(x) and x.as_long() == 0:
            return z3.IntVal(0)
        return self.terms.floordiv(x - residue + period - 1, period)

    def _slot_of(self, form):
        """The slot of a command whose slot does not move with its loop (a constant or a symbolic term)."""
        return self.terms.int_of(form.expr) if form.kind == "expr" else form.value

    def _count_between(self, u, v, gs, form, slot):
        T = self.terms
        if slot is None or form.kind in ("const", "expr"):
            if gs is None or gs.period == 1:
                n = v - u if gs is None or gs.pattern[0] else z3.IntVal(0)
            else:
                n = sum((self._below(v, gs.period, e) - self._below(u, gs.period, e)
                         for e, on in enumerate(gs.pattern) if on), z3.IntVal(0))
            return n if slot is None else if_(eq(slot, self._slot_of(form)), n, z3.IntVal(0))
        if form.kind == "rot" and (gs is None or gs.period == 1):
            if gs is not None and not gs.pattern[0]:
                return z3.IntVal(0)
            offset = form.offset if form.expr is None else T.int_of(form.expr)
            e = T.floormod(slot - offset, form.size)
            return self._below(v, form.size, e) - self._below(u, form.size, e)
        vals = tuple((e + form.offset) % form.size for e in range(form.size)) if form.kind == "rot" else form.values
        gp = 1 if gs is None else gs.period
        pat = (True,) if gs is None else gs.pattern
        period = len(vals) * gp // math.gcd(len(vals), gp)
        n = z3.IntVal(0)
        for e in range(period):
            if pat[e % gp]:
                n = n + if_(eq(slot, vals[e % len(vals)]), self._below(v, period, e) - self._below(u, period, e),
                            z3.IntVal(0))
        return n

    def _iterations_done(self, st, at_end: bool):
        """Iterations of st's loop in which st has run, read off the warp's position (no division)."""
        b = st.block
        if at_end:
            return b.trips
        w = st.proc
        i = self.m.proc(w).blocks.index(b)
        here = self.q[w] + if_(gt(self.pos[w], st.offset), 1, 0)
        return if_(gt(self.blk[w], i), b.trips, if_(eq(self.blk[w], i), here, z3.IntVal(0)))

    def count(self, st, slot, at_end: bool = False):
        """Executions of step st on `slot` (a z3 term; None = any slot) before its warp's position (over the
        whole run with `at_end`)."""
        key = ("count", st.proc, st.index, self.m.key(slot), at_end)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        b = st.block
        T = self.terms
        gs, form = self.m.form(st)
        if b.kind == "straight":
            if at_end:
                n = z3.IntVal(1)
            else:
                w = st.proc
                i = self.m.proc(w).blocks.index(b)
                blk, pos = self.blk[w], self.pos[w]
                n = if_(gt(blk, i), z3.IntVal(1), if_(eq(blk, i), if_(gt(pos, st.offset), z3.IntVal(1), z3.IntVal(0)),
                                                     z3.IntVal(0)))
            if st.guard is not None:
                n = if_(T.bool_of(st.guard), n, z3.IntVal(0))
            if slot is not None:
                n = if_(eq(slot, self._slot_of(form)), n, z3.IntVal(0))
        else:
            start = T.int_of(b.start)
            done = self._iterations_done(st, at_end)
            u = start if gs.lo is None else max_(start, T.int_of(gs.lo))
            v = start + done if gs.hi is None else min_(start + done, T.int_of(gs.hi))
            if gs.lo is not None or gs.hi is not None:
                v = max_(u, v)
            n = self._count_between(u, v, gs, form, slot)
            if gs.factor is not None:
                n = if_(T.bool_of(gs.factor), n, z3.IntVal(0))
        self._cache[key] = n
        return n

    def waits(self, warp, fam, slot, at_end: bool = False):
        """Waits warp has passed on fam[slot] (all it will ever pass, with at_end)."""
        key = ("W", warp, fam, self.m.key(slot), at_end)
        if key not in self._cache:
            self._cache[key] = sum((self.count(st, slot, at_end=at_end) for st in self.m.proc(warp).steps
                                    if st.cmd.family == fam and st.cmd.kind in WAITS), z3.IntVal(0))
        return self._cache[key]

    def share_gens(self, warp, fam, slot, units):
        """units // (warp's share per generation on this slot), per slot."""
        shares = self.m.params[fam].share.get(warp)
        if shares is None or not any(shares):
            return units
        distinct = sorted({m for m in shares if m})
        if len(distinct) == 1 and all(shares):
            return self.terms.floordiv(units, distinct[0])
        out = units
        for s in range(len(shares) - 1, -1, -1):
            if shares[s]:
                out = z3.If(slot == s, self.terms.floordiv(units, shares[s]), out)
        return out

    def k0(self, warp, fam, slot):
        return lookup(slot, self.m.params[fam].k0[warp])
