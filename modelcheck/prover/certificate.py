"""The happens-before certificate of `execution`, proved for every size.

At the small sizes the certificate is decided exactly on concrete intended executions (the
sweep).  For all sizes it is split into facts z3 proves one at a time, none of which involves
more than a few events:

  P1  per family: every warp's arrival units on a slot are its share times one common number of
      generations, the shares add up to the count, no arrival spans two generations; a warp's
      expect_tx commands come in runs of a fixed length per generation and its TMA completions
      balance them generation by generation;
  P2  per wait step: its parity is its intended generation's;
  P3  per (wait step, mutation step) of a family: every wait of g happens before every mutation of
      g + 1, by one of a set of path templates (`paths`); every generation followed by another
      has a waiter;
      (named barriers: per pair of contribution steps, g before g + 1, counted under P1)
  P4  per waiting warp: its waits never outnumber the generations; and for the whole kernel a
      ranking that grows along every happens-before edge (`ranking`): no cycle, no deadlock.

A fact z3 refutes comes with sizes; the concrete execution there is checked, and the smallest
size at which it fails is reported as the candidate counterexample (Synccheck confirms it).
Anything the solver cannot settle leaves the certificate `unknown`, never `proved`.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace

import z3

from .execution import ARRIVALS, ASYNC, MUTATIONS, Executions
from . import solving
from .model import Model, lookup, role_members, roles
from .paths import Pair, PathProver
from .ranking import Ranking
from .result import fmt_sizes
from .symbolic import Ends, event, event_at, split_of

SWEEP = 12                 # sizes decided concretely: lo .. lo + SWEEP - 1
OUT_OF_TIME = "the wall-clock safety net stopped it (the proof's max_seconds ran out)"
SCAN_LIMIT = 400           # sizes scanned concretely for the smallest failing one
LADDER = 8                 # failing sizes handed on for confirmation


@dataclass
class Certificate:
    status: str                                   # proved | failed | unknown
    seconds: dict = field(default_factory=dict)   # (family, property) -> solver seconds
    failures: list = field(default_factory=list)  # [(sizes, [execution.Failure])], the smallest failing sizes first
    reason: str = ""
    stats: dict = field(default_factory=dict)

    def properties(self, m: Model) -> list:
        return [(fam, prop) for fam in sorted(m.params) for prop in family_properties(fam)]


def family_properties(fam: str) -> tuple:
    """The properties a family has: a named barrier has no parity and no consumption order of its own."""
    return ("P1", "P4") if fam.startswith("bar") else ("P1", "P2", "P3", "P4")


class _Failed(Exception):
    def __init__(self, env: dict, why):
        super().__init__(str(why))
        self.env = env
        self.why = why


class _Unknown(Exception):
    pass


def certify(m: Model, deadline: float) -> Certificate:
    t0 = time.process_time()
    stats: dict = {"method": "certificate"}
    spent: dict = {}
    cert = Certificate("unknown", stats=stats)
    c = Certifier(m, deadline, stats, spent)
    try:
        c.sweep()
        c.tx_runs()
        c.arithmetic()
        c.happens_before()
        c.acyclic()
        cert.status = "proved"
    except _Failed as f:
        cert.status = "failed"
        cert.failures = c.failing_sizes(f.env)
        if not cert.failures:
            cert.status, cert.reason = "unknown", (f"z3 finds {f.why} at {fmt_sizes(f.env)}, but the concrete "
                                                   f"execution there satisfies the certificate: the encodings disagree")
    except _Unknown as u:
        cert.reason = str(u)
    total = time.process_time() - t0
    fams = sorted(m.params)
    shared = (total - sum(spent.values())) / max(1, len(fams))
    for fam in fams:
        for prop in family_properties(fam):
            cert.seconds[(fam, prop)] = spent.get((fam, prop), 0.0) + (shared if prop == "P4" else 0.0)
    stats["certificate_seconds"] = total
    return cert


class Certifier:
    def __init__(self, m: Model, deadline: float, stats: dict, spent: dict):
        self.m = m
        self.deadline = deadline
        self.stats = stats
        self.spent = spent
        self.role = roles(m)
        self.reps = sorted(set(self.role.values()))
        self.members = role_members(self.role)
        self.domain = m.domain()
        self.execution = Executions(m)
        self.swept: list = []

    # ------------------------------------------------------------------ concrete

    def sweep(self) -> None:
        """Decide the certificate at the small sizes; stop at the first that fails."""
        envs = _small_sizes(self.m.ranges, SWEEP)
        for env in envs:
            fails = self.execution(env).check()
            self.stats["concrete_sizes"] = len(self.swept) + 1
            if fails:
                raise _Failed(env, fails[0].condition)
            self.swept.append(env)

    def failing_sizes(self, env: dict) -> list:
        """[(sizes, failures)]: the smallest sizes whose execution fails the certificate, from the first one up to
        `env` and beyond it (at most LADDER): Synccheck's semantics differ from P1-P4 in places (a partial
        generation at exit hangs nothing; a wait that only some mutations follow may still work), so the first
        failing size is not always the first one Synccheck confirms."""
        names = sorted(env)
        if len(names) == 1:
            n = names[0]
            lo, hi = self.m.ranges[n]
            start = max(lo, env[n] - SCAN_LIMIT)
            top = env[n] + SWEEP if hi is None else min(hi, env[n] + SWEEP)
            candidates = [{n: v} for v in range(start, top + 1)]
        else:
            candidates = _small_sizes(self.m.ranges, SWEEP)
            if env not in candidates:
                candidates.append(dict(env))
        out = []
        for e in candidates:
            ex = self.execution(e)
            fails = ex.check()
            if fails:
                out.append((e, [replace(f, events=tuple(ex.describe(n) for n in f.nodes[:4])) for f in fails]))
                if len(out) == LADDER:
                    break
        return out

    def tx_runs(self) -> None:
        """expect_tx commands per generation of each (warp, family), the same at every swept size."""
        runs: dict = {}
        for env in self.swept:
            counts: dict = {}
            for e in self.execution(env).events:
                if e is not None and e.kind == "expect_tx" and e.gen is not None:
                    key = (e.warp, e.family, e.slot, e.gen)
                    counts[key] = counts.get(key, 0) + 1
            for (w, fam, _, _), n in counts.items():
                runs.setdefault((w, fam), set()).add(n)
        for key, ns in runs.items():
            if len(ns) != 1:
                raise _Unknown(f"warp {key[0]} issues different numbers of expect_tx on {key[1]} per generation")
            self.m.tx_runs[key] = ns.pop()

    # ------------------------------------------------------------------ queries
    def _solve(self, key: tuple, violation: list, e=None) -> solving.Answer:
        """sat (with a model) | unsat | unknown (with why) of a fact's violation, its time charged to `key`; `e`:
        the event the fact is about, if any (its iteration is split on when the query is hard)."""
        if time.monotonic() > self.deadline:
            raise _Unknown(OUT_OF_TIME)
        t0 = time.process_time()
        answer = solving.check(self.m, self.domain + violation, "fact", split_of(self.m, e))
        self.spent[key] = self.spent.get(key, 0.0) + time.process_time() - t0
        self.stats["z3_queries"] = self.stats.get("z3_queries", 0) + 1
        return answer

    def _query(self, key: tuple, constraints: list, what: str, e=None) -> None:
        """A violation of a fact: unsat proves it; sat is a counterexample at the model's sizes."""
        answer = self._solve(key, constraints, e)
        if answer.result == z3.unsat:
            return
        if answer.result == z3.unknown:
            raise _Unknown(f"z3 did not settle {what}: {answer.why}")
        model = answer.model
        raise _Failed({n: model.eval(v, model_completion=True).as_long() for n, v in self.m.syms.items()}, what)

    def _slot(self, fam: str, tag: str):
        s = z3.Int(f"slot_{fam}_{tag}")
        return s, [s >= 0, s < self.m.params[fam].size]

    def arithmetic(self) -> None:
        m = self.m
        ends = Ends(m, "ends")
        for fam, prm in m.params.items():
            s, rng = self._slot(fam, "a")
            for slot in range(prm.size):
                total = sum(prm.share[w][slot] for w in prm.share)
                if total and total != prm.count:
                    raise _Failed(dict(self.swept[0]) if self.swept else {}, f"the shares of {fam}[{slot}] add up to "
                                                                             f"{total}, not its count {prm.count}")
            units = {w: ends.units(w, fam, s) for w in self.reps}
            every = self._all_units(units)
            T = ends.state.terms
            wrong = [T.floormod(every, prm.count) != 0]
            for w in self.reps:
                wrong.append(prm.count * units[w] != lookup(s, prm.share.get(w, (0,) * prm.size)) * every)
            self._query((fam, "P1"), rng + [z3.Or(*wrong)] + ends.side,
                        f"arrival units on {fam} that are not whole generations of every warp's share")
            gens = T.floordiv(every, prm.count)      # the generations of slot s (whole, by the query above)
            self._in_range(fam)
            self._straddle(fam)
            if fam.startswith("bar"):
                continue
            self._bytes(fam, ends, s, rng)
            self._parities(fam)
            waiters = [w for w in self.reps if any(prm.waiters.get(w, ()))]
            over = [ends.waits(w, fam, s) + ends.state.k0(w, fam, s) > gens for w in waiters]
            if over:
                self._query((fam, "P4"), rng + [z3.Or(*over)] + ends.side,
                            f"a wait on {fam} for a generation that never completes")
            # every generation followed by another is consumed: the waiters' waits (each on consecutive
            # generations from k0 <= 0) reach up to the one before the last
            short = [ends.waits(w, fam, s) + ends.state.k0(w, fam, s) < gens - 1 for w in self.reps]
            self._query((fam, "P3"), rng + [gens >= 2] + short + ends.side,
                        f"a generation of {fam} followed by another that nobody waits for")

    def _all_units(self, units: dict):
        """Arrival units of every warp, from one term per role's representative."""
        return sum((units[w] * len(self.members[w]) for w in self.reps), z3.IntVal(0))

    def _in_range(self, fam: str) -> None:
        """Every command's slot is one of the family's."""
        m = self.m
        size = m.params[fam].size
        for w in self.reps:
            for st in m.proc(w).steps:
                if st.cmd.family == fam:
                    e = event(m, m.proc(w), st)
                    self._query((fam, "P1"), [e.exists, z3.Or(e.slot < 0, e.slot >= size)] + e.side,
                                f"warp {w}'s {st.cmd.kind} on {fam} at a slot outside 0..{size - 1}", e)

    def _straddle(self, fam: str) -> None:
        m = self.m
        prm = m.params[fam]
        for w in self.reps:
            steps = [st for st in m.proc(w).steps if st.cmd.family == fam and st.cmd.kind in ARRIVALS]
            shares = set(prm.share.get(w, ())) - {0}
            if not steps or (len(shares) == 1 and all(st.cmd.units == next(iter(shares)) for st in steps)):
                continue                         # whole shares only: never split
            for st in steps:
                e = event(m, m.proc(w), st)
                have = e.units_before()
                split = [z3.And(e.slot == slot, e.T.floormod(have, share) + st.cmd.units > share)
                         for slot, share in enumerate(prm.share.get(w, ())) if share]
                self._query((fam, "P1"), [e.exists, z3.Or(*split)] + e.side,
                            f"warp {w}'s arrival on {fam} spanning two generations", e)

    def _bytes(self, fam: str, ends: Ends, s, rng: list) -> None:
        m = self.m
        for w in self.reps:
            p = m.proc(w)
            expects = [st for st in p.steps if st.cmd.family == fam and st.cmd.kind == "expect_tx"]
            tmas = [st for st in p.steps if st.cmd.family == fam and st.cmd.kind == "tma"]
            if not expects and not tmas:
                continue
            per = m.tx_runs.get((w, fam))
            if per is None:
                raise _Unknown(f"warp {w}'s expect_tx on {fam} do not come in runs of one length per generation")
            for st in expects:
                e = event(m, p, st)
                # its generation completes: the warp has a share there and arrives in it later (after its last
                # arrival an expect_tx would open a generation nobody completes)
                every = self._all_units({v: ends.units(v, fam, e.slot) for v in self.reps})
                last = ends.state.terms.floordiv(every, m.params[fam].count)
                self._query((fam, "P4"), [e.exists, z3.Or(e.share() == 0, e.gen() >= last)] + e.side + ends.side,
                            f"warp {w}'s expect_tx on {fam} for a generation that never completes", e)
                before = e.expects_before()
                self._query((fam, "P1"), [e.exists, e.T.floordiv(before, per) != e.gen()] + e.side,
                            f"warp {w}'s expect_tx on {fam} outside its run of {per} per generation", e)
                tma_b = sum((m.tma_bytes[t.cmd.site] * e.state.count(t, e.slot) for t in tmas), z3.IntVal(0))
                exp_b = sum((x.cmd.units * e.state.count(x, e.slot) for x in expects), z3.IntVal(0))
                self._query((fam, "P1"), [e.exists, e.T.floormod(before, per) == 0, tma_b != exp_b] + e.side,
                            f"TMA bytes on {fam} not matching the generation's expect_tx", e)
            for st in tmas:
                e = event(m, p, st)
                self._query((fam, "P1"), [e.exists, e.expects_before() == 0] + e.side,
                            f"a TMA completing on {fam} before its warp's first expect_tx there", e)
            self._query((fam, "P1"), rng + [ends.tx_bytes(w, fam, s, "tma") != ends.tx_bytes(w, fam, s, "expect_tx")]
                        + ends.side, f"TMA bytes on {fam} not matching the expect_tx at exit")

    def _parities(self, fam: str) -> None:
        m = self.m
        for w in self.reps:
            for st in m.proc(w).steps:
                if st.cmd.family != fam or st.cmd.kind != "wait":
                    continue
                e = event(m, m.proc(w), st)
                par = e.T.int_of(st.cmd.parity)
                bad = z3.Or(par < 0, par > 1, par != e.T.floormod(e.gen(), 2))
                self._query((fam, "P2"), [e.exists, bad] + e.side,
                            f"warp {w}'s wait on {fam} with the parity of another generation", e)

    # ------------------------------------------------------------------ happens-before
    def pairs(self) -> list:
        m = self.m
        out = []
        for fam in m.params:
            named = fam.startswith("bar")
            xs = [(w, st) for w in self.reps for st in m.proc(w).steps if st.cmd.family == fam and
                  st.cmd.kind == ("bar_arrive" if named else "wait")]
            ys = [(w, st) for w in self.reps for st in m.proc(w).steps if st.cmd.family == fam and
                  st.cmd.kind in (("bar_arrive",) if named else MUTATIONS)]
            for vx, sx in xs:
                for wy, sy in ys:
                    cases = []
                    if vx == wy:
                        cases.append(True)
                    if vx != wy or len(self.members[vx]) > 1:
                        cases.append(False)
                    for same in cases:
                        out.append(Pair(fam, "P1" if named else "P3", (vx, sx.index), (wy, sy.index), same,
                                        sy.cmd.kind in ASYNC))
        return out

    def dominated(self) -> set:
        """(warp, step index) of mutation steps whose every event follows, in its own iteration, an event of an
        earlier mutation step on the same slot and generation: whatever happens before that one happens before
        it (program order; a completion follows its issue), so its pairs need no queries of their own."""
        m = self.m
        out = set()
        for w in self.reps:
            p = m.proc(w)
            for y in p.steps:
                if y.cmd.kind not in MUTATIONS or y.cmd.family.startswith("bar"):
                    continue
                for z in p.steps:
                    if z is y or z.block is not y.block or z.offset >= y.offset or z.cmd.family != y.cmd.family or \
                            z.cmd.kind not in MUTATIONS or (w, z.index) in out:
                        continue
                    ey = event(m, p, y)
                    ez = event_at(m, p, z, ey.r)
                    same = z3.And(ez.exists, ez.slot == ey.slot, ez.gen() == ey.gen())
                    if self._holds((y.cmd.family, "P3"), [ey.exists, z3.Not(same)] + ey.side + ez.side, ey):
                        out.add((w, y.index))
                        break
        return out

    def _holds(self, key: tuple, violation: list, e=None) -> bool:
        """The violation is unsat (the fact holds); sat or unknown: it is not established."""
        return self._solve(key, violation, e).result == z3.unsat

    def happens_before(self) -> None:
        prover = PathProver(self.m, self.role, self.execution, self.domain, self.stats)
        skip = self.dominated()
        pairs = [p for p in self.pairs() if p.y not in skip]
        self.stats["dominated_steps"] = len(skip)
        for env in _harvest_sizes(self.swept):
            prover.harvest(self.execution(env), pairs)
        for pair in pairs:
            t0 = time.process_time()
            status, info = prover.prove(pair, self.deadline)
            key = (pair.family, pair.prop)
            self.spent[key] = self.spent.get(key, 0.0) + time.process_time() - t0
            if status == "failed":
                env = info[0]
                raise _Failed(env, f"a {pair.family} event pair with no happens-before path")
            if status == "unknown":
                raise _Unknown(info)
        self.stats["path_templates"] = sum(len(v) for v in prover.templates.values())

    def acyclic(self) -> None:
        rank = Ranking(self.m, self.role, self.domain, self.stats)
        spent: dict = {}
        seeds = [self.execution(env) for env in _harvest_sizes(self.swept)]
        status, why = rank.prove(seeds, self.deadline, spent, [self.execution(env) for env in self.swept])
        for fam, sec in spent.items():
            if fam:
                self.spent[(fam, "P4")] = self.spent.get((fam, "P4"), 0.0) + sec
        if status == "proved":
            self.stats["ranking_coefficients"] = len(rank.solution)
            return
        if status == "infeasible":
            for ex in self.execution.all():
                if not ex.acyclic:
                    raise _Failed(ex.env, "a happens-before cycle")
            raise _Unknown("no ranking of the form a*r + b + c*N orders the happens-before")
        raise _Unknown(why)


def _small_sizes(ranges: dict, count: int) -> list:
    """Sizes from the lower bounds up, in order of their sum (one symbolic size: lo .. lo + count - 1)."""
    names = sorted(ranges)
    axes = []
    for n in names:
        lo, hi = ranges[n]
        top = lo + count - 1 if hi is None else min(hi, lo + count - 1)
        axes.append(range(lo, top + 1))
    if len(names) > 1:
        axes = [a[:4] for a in axes]
    grid = [dict(zip(names, vals)) for vals in itertools.product(*axes)]
    return sorted(grid, key=lambda e: (sum(e.values()), tuple(e[n] for n in names)))


def _harvest_sizes(swept: list) -> list:
    """Two of the swept sizes to take templates and ranking constraints from: a middle one and the largest."""
    if not swept:
        return []
    picks = [swept[len(swept) // 2], swept[-1]]
    return [dict(e) for i, e in enumerate(picks) if e not in picks[:i]]
