"""The intended execution of a sync skeleton at concrete sizes, and its happens-before certificate.

Every command instance (an event) is given the generation its own warp's program says it is
meant for: an arrival the generation its warp's earlier arrival units on that slot fill
(`units // share`), a wait the one after its earlier waits on that slot (`waits + k0`, k0 = -1
when the first wait has parity 1: the phase before init), a TMA completion the one its step's
earlier executions on that slot fill.  Those assignments give a happens-before graph: program
order, an asynchronous command's issue before its completion, and every contribution to a
generation before every wait of it.

If that graph is acyclic and the certificate conditions hold, every schedule gives every event
its intended generation, so the protocol properties hold in all of them (the inductive argument
of the explorer's causal certificates, with the intended assignment in place of one run's):

  P1  each generation of a slot receives exactly `count` arrival units (each arriving warp its
      share, no arrival split across two generations) and as many TMA bytes as were expected;
      every contribution to a named-barrier generation happens before every contribution to
      the next one;
  P2  every wait's parity is its intended generation's parity (0 or 1);
  P3  every generation followed by another has a wait, and every wait of generation g (g = -1
      included) happens before every mutation of generation g + 1 (arrive, expect_tx, commit or
      TMA completion);
  P4  every wait's generation completes (all its arrivals exist), the last generation of every
      slot is whole, and the graph has no cycle (no deadlock).

`Execution.check()` decides these at one size exactly; `prover.certificate` lifts them to every
size.  A failure here is a candidate counterexample that Synccheck confirms.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .model import Model
from .program import Step
from .exprs import evaluate

ARRIVALS = ("arrive", "bar_arrive", "commit")      # commands whose units fill a generation
MUTATIONS = ("arrive", "expect_tx", "commit", "tma")
ASYNC = ("commit", "tma")


@dataclass(frozen=True, slots=True)
class Event:
    node: int
    warp: int
    step: Step
    r: int | None                 # the loop variable's value (None in a straight block)
    slot: int
    gen: int | None               # intended generation (None: the warp has no share of this slot)
    delivery: bool = False        # the completion of an asynchronous command (its node follows the issue's)

    @property
    def family(self) -> str:
        return self.step.cmd.family

    @property
    def kind(self) -> str:
        return self.step.cmd.kind


@dataclass(frozen=True)
class Failure:
    family: str
    prop: str                     # P1..P4
    condition: str                # what was violated, in words
    nodes: tuple = ()             # the events involved
    events: tuple = ()            # those events described (`Execution.describe`), for reports


@dataclass
class Execution:
    """The intended execution of `model` at sizes `env`: events, generations and happens-before."""

    model: Model
    env: dict
    events: list = field(default_factory=list)          # node -> Event (generation nodes: None)
    succ: list = field(default_factory=list)            # node -> successor nodes
    by_warp: dict = field(default_factory=dict)         # warp -> its event nodes in program order
    gens: dict = field(default_factory=dict)            # (family, slot, gen) -> {"node", "contrib", "waits", ...}
    problems: list = field(default_factory=list)        # failures found while assigning generations
    _reach: list | None = None
    _cycle: list | None = None

    def __post_init__(self):
        for p in self.model.procs:
            self._run(p)
        self._link()

    # ------------------------------------------------------------------ building
    def _node(self, ev) -> int:
        self.events.append(ev)
        self.succ.append([])
        return len(self.events) - 1

    def _gen(self, fam: str, slot: int, g: int) -> dict:
        key = (fam, slot, g)
        entry = self.gens.get(key)
        if entry is None:
            entry = self.gens[key] = {"node": self._node(None), "units": 0, "contrib": [], "waits": [],
                                      "mutations": [], "expect": 0, "bytes": 0}
        return entry

    def _run(self, p) -> None:
        m, w = self.model, p.warp
        units: dict = {}          # (family, slot) -> arrival units so far
        waits: dict = {}          # (family, slot) -> waits so far
        announced: dict = {}      # (family, slot) -> generation of the warp's latest expect_tx there
        order = self.by_warp[w] = []
        for b in p.blocks:
            iterations: list[tuple[int | None, dict]]
            if b.kind == "straight":
                iterations = [(None, self.env)]
            else:
                start, stop = int(evaluate(b.start, self.env)), int(evaluate(b.stop, self.env))
                iterations = [(r, {**self.env, b.var: r}) for r in range(start, stop)]
            for r, env in iterations:
                for st in b.steps:
                    if st.guard is not None and not evaluate(st.guard, env):
                        continue
                    self._event(m, w, st, r, env, units, waits, announced, order)

    def _event(self, m, w, st, r, env, units, waits, announced, order) -> None:
        c = st.cmd
        fam = c.family
        prm = m.params[fam]
        slot = int(evaluate(c.slot, env))
        if not 0 <= slot < prm.size:
            self.problems.append(Failure(fam, "P1", f"warp {w}'s {c.kind} on {fam}[{slot}]: the family has slots "
                                                    f"0..{prm.size - 1}"))
            return
        key = (fam, slot)
        share = prm.share.get(w, (0,) * prm.size)[slot]
        gen = None
        if c.kind in ARRIVALS or c.kind == "expect_tx":
            have = units.get(key, 0)
            if share:
                gen = have // share
                if c.kind in ARRIVALS and have % share + c.units > share:
                    self.problems.append(Failure(fam, "P1", f"warp {w}'s arrival of {c.units} units on {fam}[{slot}] "
                                                            f"spans two generations (its share is {share})"))
            else:
                self.problems.append(Failure(fam, "P1", f"warp {w} {'arrives' if c.kind in ARRIVALS else 'expects tx'}"
                                                        f" on {fam}[{slot}], which it has no share of"))
            if c.kind in ARRIVALS:
                units[key] = have + c.units
            elif gen is not None:
                announced[key] = gen
        elif c.kind == "wait":
            gen = waits.get(key, 0) + prm.k0.get(w, (0,) * prm.size)[slot]
            waits[key] = waits.get(key, 0) + 1
        elif c.kind == "bar_wait":
            have = units.get(key, 0)
            gen = have // (share or c.units) - 1
            waits[key] = waits.get(key, 0) + 1
        elif c.kind == "tma":
            # the transaction its warp announced last on that slot
            gen = announced.get(key)
            if gen is None:
                self.problems.append(Failure(fam, "P1", f"warp {w} issues a TMA completing on {fam}[{slot}] before "
                                                        f"any expect_tx of its own there"))
        ev = Event(len(self.events), w, st, r, slot, gen)
        n = self._node(ev)
        if order:
            self.succ[order[-1]].append(n)
        order.append(n)
        if c.kind in ASYNC:
            d = self._node(Event(len(self.events), w, st, r, slot, gen, True))
            self.succ[n].append(d)
        if c.kind == "wait":
            par = int(evaluate(c.parity, env))
            if par not in (0, 1) or gen is None or par != gen % 2:
                self.problems.append(Failure(fam, "P2", f"warp {w}'s wait on {fam}[{slot}] uses parity {par}, but "
                                                        f"it intends generation {gen}", (n,)))

    def _link(self) -> None:
        """Generation entries and the contribution -> generation -> wait edges."""
        tx = self.model.tma_bytes
        for ev in list(self.events):
            if ev is None or ev.gen is None:
                continue
            c = ev.step.cmd
            if ev.kind in ASYNC and not ev.delivery:
                continue                     # the completion node carries it
            if ev.kind == "wait" and ev.gen < 0:
                continue                     # the phase before init: nothing to wait for
            entry = self._gen(ev.family, ev.slot, ev.gen)
            if ev.kind in ARRIVALS:
                entry["units"] += c.units
                entry["contrib"].append(ev.node)
                self.succ[ev.node].append(entry["node"])
            elif ev.kind == "tma":
                entry["bytes"] += tx.get(c.site, 0)
                entry["contrib"].append(ev.node)
                self.succ[ev.node].append(entry["node"])
            elif ev.kind == "expect_tx":
                entry["expect"] += c.units
            if ev.kind in ("wait", "bar_wait"):
                entry["waits"].append(ev.node)
                self.succ[entry["node"]].append(ev.node)
            if ev.kind in MUTATIONS:
                entry["mutations"].append(ev.node)

    # ------------------------------------------------------------------ happens-before
    def _closure(self) -> None:
        """Reachability bitsets in reverse topological order; a cycle is kept instead when there is one."""
        if self._reach is not None or self._cycle is not None:
            return
        n = len(self.events)
        indeg = [0] * n
        for s in self.succ:
            for t in s:
                indeg[t] += 1
        queue = deque(i for i in range(n) if indeg[i] == 0)
        order = []
        while queue:
            i = queue.popleft()
            order.append(i)
            for t in self.succ[i]:
                indeg[t] -= 1
                if indeg[t] == 0:
                    queue.append(t)
        if len(order) < n:
            self._cycle = self._find_cycle({i for i in range(n) if indeg[i] > 0})
            return
        reach = [0] * n
        for i in reversed(order):
            bits = 1 << i
            for t in self.succ[i]:
                bits |= reach[t]
            reach[i] = bits
        self._reach = reach

    def _find_cycle(self, left: set) -> list:
        """One cycle among the nodes a topological sort could not place: each of them keeps a predecessor
        among them, so walking predecessors must revisit a node."""
        pred: dict = {}
        for i in left:
            for t in self.succ[i]:
                if t in left:
                    pred.setdefault(t, i)
        seen: dict = {}
        path: list[int] = []
        node = min(left)
        while node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = pred[node]
        return path[seen[node]:][::-1]

    @property
    def acyclic(self) -> bool:
        self._closure()
        return self._cycle is None

    def hb(self, a: int, b: int) -> bool:
        """a happens before b (a != b) in the intended execution."""
        self._closure()
        assert self._reach is not None, "hb() asked of a cyclic execution"
        return a != b and bool((self._reach[a] >> b) & 1)

    def path(self, a: int, b: int) -> list | None:
        """A happens-before path from a to b (generation nodes included) with the fewest barrier hops, or None:
        a 0-1 breadth-first search in which program order and completions are free."""
        dist = {a: 0}
        parent: dict[int, int | None] = {a: None}
        dq = deque([a])
        while dq:
            i = dq.popleft()
            if i == b:
                out = []
                j: int | None = i
                while j is not None:
                    out.append(j)
                    j = parent[j]
                return out[::-1]
            d = dist[i]
            for t in self.succ[i]:
                cost = 1 if self.events[t] is None else 0
                if t not in dist or d + cost < dist[t]:
                    dist[t] = d + cost
                    parent[t] = i
                    if cost:
                        dq.append(t)
                    else:
                        dq.appendleft(t)
        return None

    # ------------------------------------------------------------------ the certificate at this size
    def check(self) -> list[Failure]:
        out = list(self.problems)
        self._closure()
        if self._cycle is not None:
            fams = [self._gen_key(i)[0] for i in self._cycle if self.events[i] is None]
            out.append(Failure(fams[0] if fams else "", "P4", "the intended happens-before has a cycle (a deadlock)",
                               tuple(self._cycle)))
            return out
        waits: dict = {}              # (family, slot) -> {gen: wait nodes}, the vacuous ones at -1
        for e in self.events:
            if e is not None and e.kind == "wait" and e.gen is not None:
                waits.setdefault((e.family, e.slot), {}).setdefault(e.gen, []).append(e.node)
        for (fam, slot, g), entry in sorted(self.gens.items()):
            out += self._generation(fam, slot, g, entry, waits.get((fam, slot), {}))
        return out

    def _generation(self, fam: str, slot: int, g: int, entry: dict, waits: dict) -> list:
        out = []
        count = self.model.params[fam].count
        nxt = self.gens.get((fam, slot, g + 1))
        name = f"{fam}[{slot}]" if self.model.params[fam].size > 1 or not fam.startswith("bar") else fam
        if entry["units"] > count:
            out.append(Failure(fam, "P1", f"{name} generation {g} receives {entry['units']} arrival units, more "
                                          f"than its count {count}"))
        elif entry["units"] < count:
            out.append(Failure(fam, "P1" if nxt is not None else "P4",
                               f"{name} generation {g} receives {entry['units']} of its {count} arrival units"
                               + ("" if nxt is not None else " (a partial generation at exit)")))
        if entry["bytes"] != entry["expect"]:
            out.append(Failure(fam, "P1", f"{name} generation {g} expects {entry['expect']} tx bytes and receives "
                                          f"{entry['bytes']}"))
        if entry["waits"] and (entry["units"] != count or entry["bytes"] != entry["expect"]):
            out.append(Failure(fam, "P4", f"a wait on {name} generation {g} never passes: the generation does not "
                                          f"complete", tuple(entry["waits"][:1])))
        if fam.startswith("bar"):
            if nxt is not None:
                bad = self._unordered(entry["contrib"], nxt["contrib"])
                if bad:
                    out.append(Failure(fam, "P1", f"a contribution to {name} generation {g} does not happen before "
                                                  f"one to generation {g + 1}", bad))
            return out
        prior = waits.get(g - 1, [])
        if g >= 1 and not prior:
            out.append(Failure(fam, "P3", f"nobody waits for {name} generation {g - 1}, yet generation {g} is "
                                          f"started", tuple(entry["mutations"][:1])))
        bad = self._unordered(prior, entry["mutations"])
        if bad:
            out.append(Failure(fam, "P3", f"a wait of {name} generation {g - 1} does not happen before a mutation "
                                          f"of generation {g}", bad))
        return out

    def describe(self, node: int) -> dict:
        """An event for a report: warp, operation, barrier slot, intended generation, iteration, source line."""
        e = self.events[node]
        if e is None:
            fam, slot, g = self._gen_key(node)
            return {"generation_of": f"{fam}[{slot}]", "generation": g}
        c = e.step.cmd
        out = {"warp": e.warp, "op": c.kind + (" completion" if e.delivery else ""), "barrier": f"{e.family}[{e.slot}]",
               "generation": e.gen, "iteration": e.r}
        if c.span is not None:
            out["line"] = c.span.line
        return out

    def _gen_key(self, node: int):
        for key, entry in self.gens.items():
            if entry["node"] == node:
                return key
        return ("", 0, 0)

    def _unordered(self, before: list, after: list) -> tuple:
        for a in before:
            for b in after:
                if not self.hb(a, b):
                    return (a, b)
        return ()


class Executions:
    """Intended executions of one model, built once per size."""

    def __init__(self, model: Model):
        self.model = model
        self._by_size: dict = {}

    def __call__(self, env: dict) -> Execution:
        key = tuple(sorted(env.items()))
        ex = self._by_size.get(key)
        if ex is None:
            ex = self._by_size[key] = Execution(self.model, dict(env))
        return ex

    def all(self) -> list:
        return list(self._by_size.values())
