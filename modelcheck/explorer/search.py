"""Explicit-state search over fixed sync programs.

A state is the semantic protocol state only — per-warp program cursors, each
resource's counters and generation, each warp's pending named-barrier generation,
and the multiset of pending async completions — so equal situations reached by
different histories merge.  Transitions: a warp runs its next command when its
happens-before gating allows and the command is enabled (a wait only when its parity
is ready, a named-barrier resume only when its generation completed), or a pending
completion lands.  A reachable state with no enabled transition that is not complete
is a deadlock; a command the protocol rejects in some schedule is a protocol error;
more than one distinct final state is non-confluence.  Sleep sets skip orders of
commuting transitions (both orders reach the same state).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..numsim.budget import now

from .program import Command

# mbarrier state: (live, expected, pending, tx, gen, consumed)
_MB_FRESH = (False, 0, 0, 0, 0, True)
# named state: (gen, count or -1, arrived, contributors frozenset((warp, flavor, lane bits)), aligned flags frozenset)
_NB_FRESH: tuple[int, int, int, frozenset, frozenset] = (0, -1, 0, frozenset(), frozenset())


class ProtocolViolation(Exception):
    def __init__(self, message: str, rule: str):
        super().__init__(message)
        self.message = message
        self.rule = rule


@dataclass
class SearchResult:
    status: str                          # complete | deadlock | protocol_error | nonconfluent | limit
    states: int = 0
    transitions: int = 0
    witness: list = field(default_factory=list)
    message: str = ""
    rule: str = ""
    blocked: list = field(default_factory=list)
    limit: str = ""
    finals: int = 0
    witnesses: list = field(default_factory=list)


class Model:
    """The transition system of a set of programs (a projection, or the whole program)."""

    def __init__(self, programs: dict[int, list[Command]], gates: dict | None, resource_names: dict):
        self.warps = sorted(programs)
        self.progs = [programs[w] for w in self.warps]
        self.windex = {w: k for k, w in enumerate(self.warps)}
        # resources in order of first use (a dict: a list's `in` made this quadratic on long programs)
        res = list(dict.fromkeys(c.resource for prog in self.progs for c in prog))
        self.resources = res
        self.rindex = {r: k for k, r in enumerate(res)}
        self.names = resource_names
        # a projection assumes the run's generation assignment of the other resources (its gating);
        # with check_generations, the first command that gets another generation than it had in the
        # run is recorded in `deviation` (the projection's verdict then cannot be trusted)
        self.check_generations = False
        self.deviation: dict | None = None
        self.gates = {}
        if gates:
            for (w, i), req in gates.items():
                if w in self.windex:
                    self.gates[(self.windex[w], i)] = tuple((self.windex[w2], n) for w2, n in req
                                                            if w2 in self.windex and n > 0)

    def initial(self):
        rs = tuple(_MB_FRESH if r[0] == "mbarrier" else _NB_FRESH for r in self.resources)
        return (tuple(0 for _ in self.progs), rs, tuple(-1 for _ in self.progs), ())

    def is_complete(self, state) -> bool:
        cursors, _, _, pending = state
        return not pending and all(c == len(p) for c, p in zip(cursors, self.progs))

    # ------------------------------------------------------------------ enabled
    def enabled(self, state) -> list:
        pending = state[3]
        out = [("cmd", k) for k in range(len(self.progs)) if self._runnable(state, k)]
        seen = set()
        for p in pending:
            if p not in seen:
                seen.add(p)
                out.append(("land", p))
        return out

    def _runnable(self, state, k: int) -> bool:
        """Warp k's next command may run: not finished, its gating commands done, and ready."""
        cursors, rs, contrib, _ = state
        prog = self.progs[k]
        i = cursors[k]
        if i >= len(prog):
            return False
        gate = self.gates.get((k, i))
        if gate and any(cursors[w2] < n for w2, n in gate):
            return False
        c = prog[i]
        r = rs[self.rindex[c.resource]]
        if c.kind == "wait":
            # on a barrier that is not initialized the wait is enabled: step reports the use before init
            return not r[0] or (c.parity & 1) == ((r[4] - 1) & 1)
        if c.kind == "resume":
            return r[0] > contrib[k]
        return True

    def is_enabled(self, state, t) -> bool:
        """`t in self.enabled(state)`, without listing every transition."""
        return self._runnable(state, t[1]) if t[0] == "cmd" else t[1] in state[3]

    # ------------------------------------------------------------------ step
    def step(self, state, t):
        cursors, rs, contrib, pending = state
        rs = list(rs)
        if t[0] == "land":
            kind, ri, amount = t[1][0], t[1][1], t[1][2]
            pend = list(pending)
            pend.remove(t[1])
            rs[ri] = self._land(rs[ri], kind, amount, self.resources[ri])
            return (cursors, tuple(rs), contrib, tuple(pend))
        k = t[1]
        c = self.progs[k][cursors[k]]
        ri = self.rindex[c.resource]
        if self.check_generations and self.deviation is None:
            self._check_generation(state, k, c, rs[ri])
        pend = pending
        contrib = list(contrib)
        if c.resource[0] == "mbarrier":
            rs[ri], issued = self._mbarrier(rs[ri], c)
            if issued is not None:
                pend = tuple(sorted(pending + ((issued[0], ri, issued[1]),)))
        else:
            rs[ri], g = self._named(rs[ri], c, self.warps[k])
            if c.kind == "contribute" and c.flavor == "sync":
                contrib[k] = g
        cursors = list(cursors)
        cursors[k] += 1
        return (tuple(cursors), tuple(rs), tuple(contrib), pend)

    def name(self, resource) -> str:
        return self.names.get(resource, str(resource))

    def _check_generation(self, state, k: int, c: Command, r) -> None:
        if c.resource[0] == "mbarrier":
            if c.kind == "wait":
                now = r[4] - 1 if r[0] and r[4] >= 1 else None
            elif c.kind in ("arrive", "expect_tx", "complete_tx", "issue_tx", "issue_arrive"):
                now = r[4]
            else:
                return
        else:
            now = state[2][k] if c.kind == "resume" else r[0]
        if now != c.generation:
            self.deviation = dict(self.describe(state, ("cmd", k)), run_generation=c.generation, generation=now)

    def _mbarrier(self, r, c: Command):
        live, expected, pending, tx, gen, consumed = r
        name = self.name(c.resource)
        if c.kind == "init":
            if live:
                raise ProtocolViolation(f"mbarrier.init on live {name} without mbarrier.inval", "reinit")
            return (True, c.count, c.count, 0, 0, True), None
        if not live:
            raise ProtocolViolation(f"{c.kind} on {name} before mbarrier.init", "use_before_init")
        if c.kind == "inval":
            return (False, expected, pending, tx, gen, consumed), None
        if c.kind == "wait":
            return (live, expected, pending, tx, gen, True if gen >= 1 else consumed), None
        if c.kind in ("arrive", "expect_tx") and gen >= 1 and not consumed:
            raise ProtocolViolation(f"{'mbarrier.arrive' if c.kind == 'arrive' else 'mbarrier.expect_tx'} on "
                                    f"{name} started before generation {gen - 1} was consumed",
                                    "arrive_before_consumption")
        if c.kind == "issue_tx":
            return r, ("tx", c.tx)
        if c.kind == "issue_arrive":
            if not c.noinc:
                pending += 1
            return (live, expected, pending, tx, gen, consumed), ("arrive", 1)
        if c.kind == "expect_tx":
            return (live, expected, pending, tx + c.tx, gen, consumed), None
        if c.kind == "complete_tx":
            return self._land(r, "tx", c.tx, c.resource), None
        # arrive (with optional expect_tx)
        tx += c.tx
        if c.count > pending:
            raise ProtocolViolation(f"{name} received {expected - pending + c.count} arrivals, expected {expected}",
                                    "arrival_overflow")
        pending -= c.count
        if pending == 0 and tx < 0:     # completions landed before this expect_tx: more than it announces
            raise ProtocolViolation(f"{name}: transactions over-delivered by {-tx} byte(s)", "over_delivery")
        return _complete((live, expected, pending, tx, gen, consumed), name), None

    def _land(self, r, kind, amount, resource):
        live, expected, pending, tx, gen, consumed = r
        name = self.name(resource)
        if not live:
            raise ProtocolViolation(f"an async completion landed on {name} while it was not initialized",
                                    "use_before_init")
        if kind == "tx":
            tx -= amount
            if pending == 0 and tx < 0:
                raise ProtocolViolation(f"{name}: transactions over-delivered by {-tx} byte(s)", "over_delivery")
            return _complete((live, expected, pending, tx, gen, consumed), name)
        if amount > pending:
            raise ProtocolViolation(f"{name} received {expected - pending + amount} arrivals, expected {expected}",
                                    "arrival_overflow")
        if pending == amount and tx < 0:
            raise ProtocolViolation(f"{name}: transactions over-delivered by {-tx} byte(s)", "over_delivery")
        return _complete((live, expected, pending - amount, tx, gen, consumed), name)

    def _named(self, r, c: Command, warp: int):
        gen, count, arrived, contributors, aligned = r
        name = self.name(c.resource)
        if c.kind == "resume":
            return r, None
        if count == -1:
            count = c.count
        elif count != c.count:
            raise ProtocolViolation(f"{name} generation {gen}: thread count {c.count} differs from {count}",
                                    "contract_mismatch")
        if any(w == warp and f == c.flavor and lanes & c.lanes for w, f, lanes in contributors):
            raise ProtocolViolation(f"warp {warp} contributes twice to {name} generation {gen}", "arrival_overflow")
        if c.flavor == "sync":
            if aligned and (c.aligned not in aligned):
                raise ProtocolViolation(f"{name} generation {gen} mixes aligned and unaligned blocking syncs",
                                        "aligned_mismatch")
            aligned = aligned | {c.aligned}
        arrived += c.threads
        if arrived > count:
            raise ProtocolViolation(f"{name} generation {gen}: {arrived} threads arrived, expected {count}",
                                    "arrival_overflow")
        if arrived == count:
            return (gen + 1, -1, 0, frozenset(), frozenset()), gen
        return (gen, count, arrived, contributors | {(warp, c.flavor, c.lanes)}, aligned), gen

    # ------------------------------------------------------------------ reporting
    def describe(self, state, t) -> dict:
        cursors = state[0]
        if t[0] == "land":
            kind, ri, amount = t[1]
            return {"transition": "complete", "completion": kind, "amount": amount,
                    "barrier": self.name(self.resources[ri])}
        k = t[1]
        c = self.progs[k][cursors[k]]
        return {"transition": "issue", "warp": c.warp, "index": c.index, "kind": c.kind, "site": c.site,
                "iters": list(c.iters), "barrier": self.name(c.resource), "command": c.label()}

    def blocked(self, state) -> list:
        cursors, rs, contrib, _ = state
        out = []
        for k, prog in enumerate(self.progs):
            i = cursors[k]
            if i >= len(prog):
                continue
            c = prog[i]
            r = rs[self.rindex[c.resource]]
            item = {"warp": c.warp, "kind": c.kind, "site": c.site, "iters": list(c.iters),
                    "barrier": self.name(c.resource)}
            if c.kind == "wait":
                item["awaits"] = f"mbarrier.try_wait; phase {c.parity}"
                item["state"] = f"generation {r[4]}, {r[1] - r[2]}/{r[1]} arrivals, tx {r[3]}"
            elif c.kind == "resume":
                item["awaits"] = f"bar.sync; generation {contrib[k]}"
            else:
                gate = self.gates.get((k, i))
                item["awaits"] = "a happens-before predecessor" if gate else c.kind
            out.append(item)
        return out


def _complete(r, name):
    live, expected, pending, tx, gen, consumed = r
    if pending == 0 and tx == 0:
        return (live, expected, expected, 0, gen + 1, False)
    return r


def search(model: Model, max_states: int = 200_000, max_transitions: int = 2_000_000, max_seconds: float = 60.0,
           sleep_sets: bool = True) -> SearchResult:
    """Depth-first exploration of every schedule; stops at the first failure."""
    t0 = now()
    root = model.initial()
    parent: dict = {root: None}
    visited_sleep: dict = {root: frozenset()}
    finals = []
    transitions = 0
    stack: list[tuple[object, frozenset]] = [(root, frozenset())]

    def witness(state, last=None):
        path = []
        cur = state
        while parent[cur] is not None:
            prev, t = parent[cur]
            path.append(model.describe(prev, t))
            cur = prev
        path.reverse()
        if last is not None:
            path.append(model.describe(state, last))
        return path

    while stack:
        state, sleep = stack.pop()
        if model.is_complete(state):
            if state not in finals:
                finals.append(state)
            continue
        ts = model.enabled(state)
        if not ts:
            return SearchResult("deadlock", len(parent), transitions, witness(state),
                                "execution cannot make progress", blocked=model.blocked(state))
        explored: list = []
        succ: dict = {}         # transition -> its successor from `state` (None: the step fails)

        def after(x, state=state, succ=succ):
            if x not in succ:
                try:
                    succ[x] = model.step(state, x)
                except (ProtocolViolation, ValueError):
                    succ[x] = None
            return succ[x]

        for t in ts:
            if t in sleep:
                continue
            transitions += 1
            try:
                nxt = model.step(state, t)
            except ProtocolViolation as err:
                return SearchResult("protocol_error", len(parent), transitions, witness(state, t), err.message,
                                    err.rule)
            succ[t] = nxt
            child_sleep: frozenset = frozenset()
            if sleep_sets:
                # with W warps one state has up to W transitions and W^2 independence checks, each a step of
                # a W-warp state: the budget is checked as they go, not only between states
                kept = []
                for n, u in enumerate(sleep | set(explored)):
                    if n % 32 == 31 and now() - t0 > max_seconds:
                        return SearchResult("limit", len(parent), transitions, limit="wall_time")
                    if _independent(model, state, t, u, after):
                        kept.append(u)
                child_sleep = frozenset(kept)
            if nxt not in parent:
                parent[nxt] = (state, t)
                visited_sleep[nxt] = child_sleep
                stack.append((nxt, child_sleep))
            else:
                old = visited_sleep[nxt]
                if not old <= child_sleep:
                    visited_sleep[nxt] = old & child_sleep
                    stack.append((nxt, old & child_sleep))
            explored.append(t)
            if len(parent) > max_states:
                return SearchResult("limit", len(parent), transitions, limit="fixed_sync_states")
            if transitions > max_transitions:
                return SearchResult("limit", len(parent), transitions, limit="fixed_sync_transitions")
            if now() - t0 > max_seconds:
                return SearchResult("limit", len(parent), transitions, limit="wall_time")
        if now() - t0 > max_seconds:
            return SearchResult("limit", len(parent), transitions, limit="wall_time")
    if len(finals) > 1:
        return SearchResult("nonconfluent", len(parent), transitions, message=f"{len(finals)} distinct final states",
                            finals=len(finals), witnesses=[witness(f) for f in finals[:2]])
    return SearchResult("complete", len(parent), transitions, finals=len(finals))


def _independent(model: Model, state, t, u, after=None) -> bool:
    """t and u commute from `state`: both orders succeed and reach the same state (a strong diamond).

    `after(x)`, when given, returns the (cached) successor of `state` by x, or None if that step fails."""
    if t == u:
        return False
    if t[0] == "cmd" and u[0] == "cmd" and t[1] == u[1]:
        return False
    if after is None:
        def after(x):
            try:
                return model.step(state, x)
            except (ProtocolViolation, ValueError):
                return None
    st, su = after(t), after(u)
    if st is None or su is None or not model.is_enabled(st, u) or not model.is_enabled(su, t):
        return False
    try:
        return model.step(st, u) == model.step(su, t)
    except (ProtocolViolation, ValueError):
        return False
