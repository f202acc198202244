"""Proofs by induction with an invariant found by Houdini, and bounded search for counterexamples.

Candidates relate, per barrier family at a symbolic slot s, the generation counters the
protocol is made of: the slot's completed generations, each arriving warp's contributed
generations, each waiting warp's last observed generation, each TMA's delivered
generations — `u <= v + c` for c in {0, 1}.  A candidate is a statement about every slot
at once (s is free in every query).  Houdini drops every candidate false at the initial
state or not preserved by some move (each counterexample model drops all candidates it
falsifies), leaving the strongest inductive conjunction of them.  The premise of an
induction query is the invariant at the queried slot and at the slot the move touches.

A property holds for every size if no state satisfying the invariant can break it.  If
one can, a bounded unrolling from the initial state looks for a real trace (the smallest
symbolic sizes first); a counterexample to induction alone is not a bug.

Every query uses a fresh solver with a timeout (incremental push/pop degraded badly in
the measurements; engineering-measurements §3), one move per query.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import z3

from .model import Model, State
from .transitions import bad_by_property, moves, sigma, transition

TIMEOUT_MS = 5000
OFFSETS = (0, 1)


@dataclass
class Candidate:
    name: str
    family: str
    at: object                 # callable(State, slot term or None) -> z3 Bool
    terms: tuple = ()          # (a, b, c) of a counter candidate `a <= b + c`


@dataclass
class Outcome:
    status: str                # proved | refuted | unknown | incomplete
    seconds: float
    model: dict = field(default_factory=dict)
    depth: int | None = None
    note: str = ""
    finding: object = None


def _solvers():
    """A portfolio of configurations, tried in turn with growing timeouts: linear integer queries over
    floor quotients have heavy-tailed solve times, and a different arithmetic core or seed usually
    answers at once where another stalls (measured: 10 s vs 0.15 s on the same query)."""
    # the older arithmetic core first: on the realistic kernels' queries the default core often runs into its
    # first timeout where this one answers in milliseconds (gemm_ws 15.7 -> 7.7 s CPU, persistent GEMM with
    # one tile 38.8 -> 12.7 s, the corpus rings no slower).  Restarts with other seeds before the default
    # core: over twelve seeds on the KDA ring's hardest queries a third answered within a second and most
    # within five, while the default core timed out on them at 30 s.
    for seed, timeout in ((0, 1000), (4, 2000), (10, 3000)):
        s = z3.Solver()
        s.set("smt.arith.solver", 2)
        s.set("random_seed", seed)
        yield s, timeout
    yield z3.Solver(), 2000
    s = z3.Solver()
    s.set("smt.arith.solver", 2)
    s.set("random_seed", 6)
    yield s, 5000
    yield z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver(), TIMEOUT_MS


def _patient():
    """Longer runs of the older core, for queries the portfolio is known to leave open: the stuck states of a
    ring with several warps per role (the KDA decay-vector ring) took it 11-14 s on three of four seeds, and
    the default core timed out on them."""
    for seed, timeout in ((0, 20000), (3, 20000)):
        s = z3.Solver()
        s.set("smt.arith.solver", 2)
        s.set("random_seed", seed)
        yield s, timeout


def _check(constraints, until: float | None = None, patient: bool = False):
    """sat | unsat | unknown (only when every configuration of the portfolio timed out).  With `patient` only
    the long configurations are tried, and only while they fit before `until` (a monotonic deadline)."""
    for s, timeout in (_patient() if patient else _solvers()):
        if patient and (until is None or time.monotonic() + timeout / 1000 > until):
            break
        s.set("timeout", timeout)
        s.add(*constraints)
        r = s.check()
        if r != z3.unknown:
            return r, (s.model() if r == z3.sat else None)
    return z3.unknown, None


# ---------------------------------------------------------------------------------- candidates
def counters(m: Model, st: State, fam: str, slot) -> dict:
    """{name: generation counter term} of fam at `slot`."""
    key = ("counters", fam, m.key(slot))
    hit = st._cache.get(key)
    if hit is not None:
        return hit
    prm = m.params[fam]
    cs = {"gen": st.gen(fam, slot)}
    for w, shares in prm.share.items():
        if any(shares):
            cs[f"arr{w}"] = st.share_gens(w, fam, slot, st.arrivals(w, fam, slot))
    for w, here in prm.waiters.items():
        if any(here):
            cs[f"wait{w}"] = st.waits(w, fam, slot) + st.k0(w, fam, slot)
    for (w, idx), per in prm.tma_per_gen.items():
        if any(per):
            step = m.proc(w).steps[idx]
            n = st.delivered(w, step, slot)
            out = n
            for s in range(prm.size - 1, -1, -1):
                if per[s]:
                    out = z3.If(slot == s, st.terms.floordiv(n, per[s]), out)
            cs[f"tma{w}_{idx}"] = out
    st._cache[key] = cs
    return cs


def roles(m: Model) -> dict:
    """warp -> the lowest warp with the same sync program (same commands, slots, parities, guards, loops)."""
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


def symmetry(m: Model, st: State, role: dict, fixed: int | None = None) -> list:
    """Warps of one role are interchangeable: the model, its initial state, the candidate set (closed under
    the role's permutations, see `_orbit_closed`) and every property are invariant under permuting them.
    So any state a query could find has a permuted twin whose positions are sorted within each role, and
    the queries look only at those (k! fewer states for a role of k warps).  With `fixed` (the warp whose
    move a query is about) only the permutations leaving that warp in place are used: its role's other
    warps are sorted among themselves."""
    key = ("symmetry", fixed)
    hit = st._cache.get(key)
    if hit is not None:
        return hit
    groups: dict = {}
    for w, rep_w in role.items():
        if w != fixed:
            groups.setdefault(rep_w, []).append(w)
    out = st._cache[key] = []
    for ws in groups.values():
        ws = sorted(ws)
        for a, b in zip(ws, ws[1:]):
            out.append(z3.Or(st.blk[a] > st.blk[b],
                             z3.And(st.blk[a] == st.blk[b],
                                    z3.Or(st.q[a] > st.q[b], z3.And(st.q[a] == st.q[b], st.pos[a] >= st.pos[b])))))
    return out


def representatives(mvs: list, role: dict) -> list:
    """The moves of each role's first warp: a move of another warp of the role is the image of one of these
    under a permutation of the role, which maps the invariant (orbit-closed) and every property to
    themselves, so a query about it has the same answer as the query about its image."""
    return [mv for mv in mvs if role.get(mv.warp, mv.warp) == mv.warp]


def _orbit(c: Candidate, role: dict):
    """What a candidate looks like up to permutations of warps within their roles."""
    if not c.terms:
        return ("", c.name)
    a, b, k = c.terms
    wa, wb = _warp_of(a), _warp_of(b)

    def canon(name, w):
        return (name, None) if w is None else (re.sub(r"\d+", "#", name, count=1), role[w])
    return (c.family, canon(a, wa), canon(b, wb), k, wa is not None and wa == wb)


def _orbit_closed(keep: list, dropped: list, role: dict) -> list:
    """`keep` without every candidate in the orbit of a dropped one (so the kept set stays symmetric)."""
    gone = {_orbit(c, role) for c in dropped}
    return [c for c in keep if _orbit(c, role) not in gone] if gone else keep


def _warp_of(counter: str) -> int | None:
    m = re.match(r"(?:arr|wait|tma)(\d+)", counter)
    return int(m.group(1)) if m else None


def candidates(m: Model) -> list[Candidate]:
    """Every `a <= b + c` over one family's counters, except between two warps of one role: warps with the
    same sync program relate through the generation counter (arr_i <= gen + 1 <= arr_j + 1), and the
    direct pairs would grow with the square of the role's size (4 consumer warps: 4x the candidates)."""
    probe = m.state("probe")
    role = roles(m)
    cands: list[Candidate] = []
    for fam, prm in m.params.items():
        names = sorted(counters(m, probe, fam, z3.Int("probe_slot")))
        for a in names:
            for b in names:
                if a == b:
                    continue
                wa, wb = _warp_of(a), _warp_of(b)
                if wa is not None and wb is not None and wa != wb and role[wa] == role[wb]:
                    continue
                for c in OFFSETS:
                    cands.append(Candidate(f"{fam}[s].{a} <= {b} + {c}", fam,
                                           lambda st, slot, fam=fam, a=a, b=b, c=c:
                                           counters(m, st, fam, slot)[a] <= counters(m, st, fam, slot)[b] + c,
                                           (a, b, c)))
    cands.append(Candidate("positions are well formed", "", lambda st, slot: z3.And(*st.well_formed())))
    return cands


def _at(c: Candidate, st: State, slot):
    """c at state st and slot, built once per state (Houdini asks for the same terms in every round)."""
    key = ("candidate", c.name, st.m.key(slot))
    term = st._cache.get(key)
    if term is None:
        term = st._cache[key] = c.at(st, slot)
    return term


def instances(m: Model, cands, st: State, slots: list[dict]) -> list:
    """Each candidate at each slot assignment (size -> slot term); slot-free candidates once."""
    out = []
    for c in cands:
        if not c.family:
            out.append(_at(c, st, None))
            continue
        size = m.params[c.family].size
        seen = set()
        for assign in slots:
            slot = assign.get(size)
            if slot is None or m.key(slot) in seen:
                continue
            seen.add(m.key(slot))
            out.append(_at(c, st, slot))
    return out


def wait_lemmas(m: Model, st: State) -> list:
    """Facts about each warp's own program: at a wait, the parity it waits with is the one of the generation
    its count of earlier waits on that slot says it intends.  Each involves one warp's position only, so it is
    checked once for all positions (a small query); the ones that hold are added to every induction query.
    The solver would otherwise have to rediscover this modular counting fact inside every large query
    (the number of earlier iterations landing on the same ring slot against the parity's quotient), which
    is what left queries over rings with lookahead guards unanswered."""
    hit = st._cache.get("wait_lemmas")
    if hit is not None:
        return hit
    valid = m.wait_lemma_valid
    out = []
    for i, p in enumerate(m.procs):
        for step in p.steps:
            if step.cmd.kind != "wait":
                continue
            fact = _wait_fact(m, st, p, step)
            key = (p.warp, step.index)
            if key not in valid:
                probe = m.state(f"lemma{p.warp}_{step.index}")
                r, _ = _check(m.domain() + [probe.well_formed()[i], z3.Not(_wait_fact(m, probe, p, step))]
                              + probe.side)
                valid[key] = r == z3.unsat
            if valid[key]:
                out.append(fact)
    st._cache["wait_lemmas"] = out
    return out


def _wait_fact(m: Model, st: State, p, step):
    at, T = st.at(p, step)
    cmd = step.cmd
    guard = T.bool_of(step.guard) if step.guard is not None else z3.BoolVal(True)
    slot = T.int_of(cmd.slot)
    intended = st.waits(p.warp, cmd.family, slot) + st.k0(p.warp, cmd.family, slot)
    return z3.Implies(z3.And(at, guard), st.terms.floormod(intended + 1, 2) != T.floormod(T.int_of(cmd.parity), 2))


def _move_slots(m: Model, sig: dict, mv) -> list:
    """Slot assignments to instantiate the invariant at for a query about move mv: the free slot of each
    size, and the slot the move touches."""
    return [sig] + ([{m.params[mv.family].size: mv.slot}] if mv.slot is not None else [])


def _ranges(m: Model, assign: dict) -> list:
    return [z3.And(v >= 0, v < size) for size, v in assign.items()]


def initial(m: Model, st: State) -> list:
    return [v == 0 for v in st.vars()]


# ---------------------------------------------------------------------------------- Houdini
def houdini(m: Model, cands: list[Candidate], deadline: float, stats: dict | None = None,
            considered: list[Candidate] | None = None) -> tuple[list[Candidate], int]:
    """The largest subset of `cands` true initially and preserved by every move.  `considered`: the candidates
    `cands` was chosen from (by sampling); the orbits of the ones left out are left out too."""
    stats = {} if stats is None else stats
    stats["houdini_queries"] = 0
    s0 = m.state("h0")
    sig = sigma(m, "h")
    role = roles(m)
    # sampling dropped candidates one warp at a time: drop their whole orbits
    given = {c.name for c in cands}
    keep = _orbit_closed(list(cands), [c for c in considered or () if c.name not in given], role)
    while keep:
        conds = [_at(c, s0, sig.get(m.params[c.family].size) if c.family else None) for c in keep]
        r, model = _check(initial(m, s0) + m.domain() + _ranges(m, sig) + [z3.Not(z3.And(*conds))] + s0.side)
        stats["houdini_queries"] += 1
        if r == z3.unsat:
            break
        if r == z3.unknown:
            raise TimeoutError("a Houdini initial-state query timed out")
        kept = [c for c, cond in zip(keep, conds) if z3.is_true(model.eval(cond, model_completion=True))]
        keep = _orbit_closed(kept, [c for c in keep if c not in kept], role)
    s0 = m.state("i0")
    mvs = representatives(moves(m, s0, None), role)
    keep = _rounds(m, keep, mvs, role, s0, sig, deadline, stats)
    return _strongest(keep), stats["houdini_queries"]


def _rounds(m: Model, keep: list, mvs: list, role: dict, s0, sig, deadline: float, stats: dict) -> list:
    """Houdini rounds: drop from `keep` what some move in `mvs` does not preserve, assuming `keep` before it."""
    stable, i = 0, 0
    after: dict = {}          # move index -> the state it leads to (built once: its terms are cached on it)
    while keep and stable < len(mvs):
        if time.monotonic() > deadline:
            raise TimeoutError("the invariant search ran out of time")
        k = i % len(mvs)
        mv = mvs[k]
        i += 1
        # a move changes only the counters of its own family: the others are preserved by construction
        touched = [c for c in keep if not c.family or c.family == mv.family]
        if not touched:
            stable += 1
            continue
        assigns = _move_slots(m, sig, mv)
        pre = instances(m, keep, s0, assigns)
        s1 = after.get(k)
        if s1 is None:
            s1 = after[k] = s0.after(mv.effect)
        post = []
        for c in touched:
            slot = sig.get(m.params[c.family].size) if c.family else None
            after_c = _at(c, s1, slot)
            # a candidate over counters the move left alone is the very term assumed before it
            if not after_c.eq(_at(c, s0, slot)):
                post.append((c, after_c))
        if not post:
            stable += 1
            continue
        base = m.domain() + _ranges(m, sig) + symmetry(m, s0, role, mv.warp) + wait_lemmas(m, s0) + [mv.pre]
        goal = [z3.Not(z3.And(*[t for _, t in post]))]
        # first assume only the move's own family: preservation usually follows from it alone, and the smaller
        # query is much faster on roles of several warps.  Its counterexample counts only if the rest holds too.
        # (side constraints last: building terms adds the quotient definitions they rely on)
        own = instances(m, touched, s0, assigns)
        r, model = _check(base + own + goal + s0.side + s1.side)
        stats["houdini_queries"] += 1
        if r != z3.unsat and len(own) < len(pre) and not (
                r == z3.sat and all(z3.is_true(model.eval(c, model_completion=True)) for c in pre)):
            r, model = _check(base + pre + goal + s0.side + s1.side)
            stats["houdini_queries"] += 1
        if r == z3.unsat:
            stable += 1
            continue
        if r == z3.unknown:
            raise TimeoutError("a Houdini induction query timed out")
        dropped = [c for c, cond in post if not z3.is_true(model.eval(cond, model_completion=True))]
        nxt = _orbit_closed(keep, dropped, role)
        if len(nxt) == len(keep):
            raise RuntimeError("Houdini made no progress")
        keep = nxt
        stable = 0
    return keep


def _strongest(keep: list[Candidate]) -> list[Candidate]:
    """Drop `u <= v + 1` when `u <= v + 0` is kept (implied)."""
    names = {c.name for c in keep}
    return [c for c in keep if not (c.name.endswith(" + 1") and c.name[:-1] + "0" in names)]


# ---------------------------------------------------------------------------------- properties
def prove_all(m: Model, invariant: list[Candidate], deadline: float | None = None) -> dict:
    """(family, property) -> Outcome: proved when no invariant state breaks it, else unknown.  Before
    `deadline` (monotonic), a query the portfolio leaves open gets the patient configurations too."""
    s0 = m.state("p0")
    sig = sigma(m, "p")
    role = roles(m)
    mvs = moves(m, s0, None)
    out: dict = {}
    base = m.domain() + _ranges(m, sig) + wait_lemmas(m, s0)

    def settle(first, cond, warp, patient) -> object:
        """unsat when the invariant excludes cond.  The invariant is instantiated at the slot assignments
        `first`; a model then found is checked against the instances at every blocked wait's slot, and the
        ones it violates are added before asking again (unsat with fewer instances is unsat; sat counts only
        when the model satisfies every instance)."""
        assigns = list(first)
        while True:
            inv = instances(m, invariant, s0, assigns)
            r, model = _check(base + symmetry(m, s0, role, warp) + inv + [cond] + s0.side, until=deadline,
                              patient=patient)
            if r != z3.sat:
                return r
            wrong = [a for a in every_wait if a not in assigns and not all(
                z3.is_true(model.eval(x, model_completion=True)) for x in instances(m, invariant, s0, [a]))]
            if not wrong:
                return r
            assigns += wrong

    # (family, property) -> [(query, queries to fall back on when it stays open)]; a query is (slot
    # assignments, condition, the warp the symmetry leaves in place)
    checks: dict = {}
    for mv in representatives(mvs, role):          # per move (one warp per role)
        for key, cond in mv.bad.items():
            checks.setdefault(key, []).append(((_move_slots(m, sig, mv), cond, mv.warp), []))
    for key, cond in bad_by_property(m, s0, [], sig).items():          # exit balance (no moves)
        checks.setdefault(key, []).append((([sig], cond, None), []))
    # a stuck state, one query per wait that could be the blocked one (the disjunction over all of them in one
    # query timed out with three identical consumer warps).  First the role's first warp only, sorting the
    # others, with the invariant at the blocked wait's own slot and then at the slots of the other waits whose
    # instances the solver's model violates; if that stays open, every warp of the role under the full sort
    # (which answered the KDA ring's stuck states where the partial sort timed out; the partial one is 1.7x
    # faster on FA4's)
    nothing = z3.And(z3.Not(s0.done()), *[z3.Not(mv.pre) for mv in mvs])
    every_wait = [sig] + [{m.params[mv.family].size: mv.slot} for mv in mvs
                          if mv.blocked is not None and mv.slot is not None]
    for mv in representatives(mvs, role):
        if mv.blocked is None:
            continue
        twins = [o for o in mvs if o.blocked is not None and role.get(o.warp) == mv.warp and o.what == mv.what
                 and o.step is not None and o.step.index == mv.step.index]
        # (the instances at every blocked wait's slot at once: adding them lazily made intermediate queries that
        # the solver found harder than the whole)
        fallback = [(every_wait, z3.And(nothing, o.blocked), None) for o in twins] if len(twins) > 1 else []
        checks.setdefault((mv.family, "P4"), []).append(
            ((_move_slots(m, sig, mv), z3.And(nothing, mv.blocked), mv.warp), fallback))
    for key in sorted(checks):
        t0 = time.monotonic()
        status, note = "proved", ""
        for query, fallback in checks[key]:
            r = settle(*query, False)
            if r == z3.unknown:
                # every warp of the role under the full sort, with the patient configurations (before the deadline)
                for q in fallback or [query]:
                    r = settle(*q, True)
                    if r != z3.unsat:
                        break
            if r == z3.sat:
                status, note = "unknown", "not excluded by the invariant"
                break
            if r == z3.unknown:
                status, note = "unknown", "the solver timed out"
                break
        out[key] = Outcome(status, time.monotonic() - t0, note=note)
    return out


# ---------------------------------------------------------------------------------- counterexamples
def bmc(m: Model, key, max_depth: int, deadline: float) -> Outcome:
    """The shallowest trace from the initial state that breaks `key`, with the symbolic sizes minimized."""
    t0 = time.monotonic()
    states = [m.state("b0")]
    cons = m.domain() + initial(m, states[0])
    for depth in range(max_depth + 1):
        if time.monotonic() > deadline:
            return Outcome("unknown", time.monotonic() - t0,
                           note=f"no counterexample within depth {depth - 1} before the time limit")
        cur = states[-1]
        sig = sigma(m, f"b{depth}")
        bad = bad_by_property(m, cur, moves(m, cur, None), sig).get(key)
        if bad is not None:
            opt = z3.Optimize()
            opt.set("timeout", TIMEOUT_MS * 2)
            opt.add(*cons, bad, *_ranges(m, sig), *[x for s in states for x in s.side])
            for v in m.syms.values():
                opt.minimize(v)
            r = opt.check()
            if r == z3.sat:
                model = opt.model()
                sizes = {n: model.eval(v, model_completion=True).as_long() for n, v in m.syms.items()}
                return Outcome("refuted", time.monotonic() - t0, sizes, depth)
        nxt = m.state(f"b{depth + 1}")
        trans, _ = transition(m, cur, nxt)
        cons = cons + [trans]
        states.append(nxt)
    return Outcome("unknown", time.monotonic() - t0, note=f"no counterexample within depth {max_depth}")
