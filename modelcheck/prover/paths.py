"""Happens-before between symbolic events, proved with path templates.

A condition "every X happens before every Y" (a wait of generation g before a mutation of
g + 1; a named-barrier contribution to g before one to g + 1) is one query per pair of steps
(X's, Y's): the premise says X and Y exist and are related; the goal is a disjunction of path
templates, each a chain X <=po k1 -bar-> k2 <=po ... -> Y whose key events sit at iterations
given as offsets from X's, Y's, or a loop bound.  A `bar` link is a contribution and a wait of
one generation of one slot; a `po` link two events of one warp in program order; an
asynchronous command's completion stands for its issue on the way out.

The templates come from paths with the fewest barrier hops in concrete intended executions
(`Execution.path`).
When z3 finds an instance no template covers, that instance is looked up concretely: no path
there is a counterexample; a path becomes a new template (counterexample-guided refinement).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import z3

from . import solving
from .execution import Execution, Executions
from .model import role_members
from .exprs import evaluate
from .result import fmt_sizes
from .symbolic import SymEvent, event, event_at, event_fresh, po_le, split_of

MAX_ROUNDS = 24
SIZE_CAP = 24             # counterexamples are first sought at sizes up to lo + this (cheap to look up)


@dataclass(frozen=True)
class Hop:
    warp: int              # the program: its role's representative warp
    step: int              # step index in that program
    form: tuple | None     # iteration: ("X"|"Y"|"stop"|"start", offset); None in a straight block
    delivered: bool        # leaves through the command's completion (asynchronous commands)


@dataclass(frozen=True)
class Template:
    hops: tuple            # key events strictly between X and Y
    links: tuple           # "po" | "bar", one per gap in [X, *hops, Y]

    def describe(self) -> str:
        parts = ["X"]
        for link, hop in zip(self.links, self.hops):
            form = "" if hop.form is None else f"@{hop.form[0]}{hop.form[1]:+d}"
            parts.append(f"-{link}-> w{hop.warp}.s{hop.step}{form}{'(done)' if hop.delivered else ''}")
        parts.append(f"-{self.links[-1]}-> Y")
        return " ".join(parts)


@dataclass
class Pair:
    """One condition instance family: every event of X's step happens before every related event of Y's."""

    family: str
    prop: str
    x: tuple               # (representative warp, step index)
    y: tuple
    same_warp: bool        # X and Y in one warp (else: two warps, possibly of one role)
    y_delivered: bool      # Y is the completion of an asynchronous command


class PathProver:
    """Template harvesting and the refinement loop, over one model."""

    def __init__(self, m, role: dict, executions: Executions, domain: list, stats: dict):
        self.m = m
        self.role = role
        self.members = role_members(role)
        self.execution = executions         # sizes -> Execution, shared with the certificate
        self.domain = domain
        self.stats = stats
        self.templates: dict = {}           # pair key -> list of Templates

    # ------------------------------------------------------------------ concrete side
    def harvest(self, ex: Execution, pairs: list) -> None:
        """Templates from the fewest-hop paths of every instance of each pair in one concrete execution."""
        index = _index(ex)
        for pair in pairs:
            for xn, yn in self.instances(ex, index, pair):
                path = ex.path(xn, yn)
                if path is not None:
                    self._add(pair, template_of(ex, path, self.role))

    def instances(self, ex: Execution, index: dict, pair: Pair):
        """(X node, Y node) of the pair in `ex`: X in the representative warp itself (roles are symmetric)."""
        vx, sx = pair.x
        wy, sy = pair.y
        for xn in index.get((vx, sx), ()):
            x = ex.events[xn]
            if x.gen is None:
                continue
            warps = [vx] if pair.same_warp else [w for w in self.members[wy] if w != vx]
            for w in warps:
                for yn in index.get((w, sy, pair.y_delivered), ()):
                    y = ex.events[yn]
                    if y.slot == x.slot and y.gen is not None and y.gen == x.gen + 1:
                        yield xn, yn

    def _add(self, pair: Pair, t: Template) -> bool:
        ts = self.templates.setdefault(_key(pair), [])
        if t in ts:
            return False
        ts.append(t)
        return True

    # ------------------------------------------------------------------ symbolic side
    def prove(self, pair: Pair, deadline: float) -> tuple:
        """("proved", None) | ("failed", (env, X node, Y node, execution)) | ("unknown", why)."""
        m = self.m
        x = event(m, m.proc(pair.x[0]), m.proc(pair.x[0]).steps[pair.x[1]])
        # (two events of one step -- contributions of a named barrier -- need their own iterations)
        y = (event if pair.y != pair.x else event_fresh)(m, m.proc(pair.y[0]), m.proc(pair.y[0]).steps[pair.y[1]])
        premise = [x.exists, y.exists, x.slot == y.slot, y.gen() == x.gen() + 1]
        built: dict = {}
        for _ in range(MAX_ROUNDS):
            if time.monotonic() > deadline:
                return "unknown", "the wall-clock safety net stopped it (the proof's max_seconds ran out)"
            goals = []
            for t in self.templates.get(_key(pair), []):
                if t not in built:
                    built[t] = self.valid(t, x, y)
                goals.append(built[t][0])
            extra = [s for t in self.templates.get(_key(pair), []) for s in built[t][1]]
            answer = self.counterexample(premise + [z3.Not(z3.Or(*goals))] if goals else premise,
                                         x.side + y.side + extra, split_of(m, x))
            if answer.result == z3.unsat:
                return "proved", None
            if answer.result == z3.unknown:
                return "unknown", f"z3 did not settle a happens-before query: {answer.why}"
            model = answer.model
            env = {n: model.eval(v, model_completion=True).as_long() for n, v in m.syms.items()}
            rx = None if x.r is None else model.eval(x.r, model_completion=True).as_long()
            ry = None if y.r is None else model.eval(y.r, model_completion=True).as_long()
            ex = self.execution(env)
            found = self.lookup(ex, pair, rx, ry)
            if found is None:
                return "unknown", (f"z3's instance at {fmt_sizes(env)} (iterations {rx}, {ry}) is not an event pair of "
                                   f"the concrete execution: the symbolic and concrete encodings disagree")
            xn, yn = found
            path = ex.path(xn, yn)
            if path is None:
                return "failed", (env, xn, yn, ex)
            self.stats["path_refinements"] = self.stats.get("path_refinements", 0) + 1
            if not self._add(pair, template_of(ex, path, self.role)):
                return "unknown", (f"a happens-before path at {fmt_sizes(env)} has no template the solver accepts")
        return "unknown", f"no template set covered every instance after {MAX_ROUNDS} refinements"

    def lookup(self, ex: Execution, pair: Pair, rx, ry):
        vx, sx = pair.x
        wy, sy = pair.y
        xs = [e.node for e in ex.events if e is not None and e.warp == vx and e.step.index == sx and e.r == rx
              and not e.delivery]
        warps = [vx] if pair.same_warp else [w for w in self.members[wy] if w != vx][:1]
        ys = [e.node for e in ex.events if e is not None and e.warp in warps and e.step.index == sy and e.r == ry
              and e.delivery == pair.y_delivered]
        return (xs[0], ys[0]) if xs and ys else None

    def counterexample(self, constraints: list, sides: list, split_on=None) -> solving.Answer:
        """An instance violating the goal (sat, with a model), at small sizes when there is one there (cheap to
        look up); unsat; or unknown, with why."""
        base = self.domain + constraints + sides
        t0 = time.process_time()
        answer = solving.check(self.m, base, "path", split_on)
        if answer.result == z3.sat:
            cap = [v <= self.m.ranges.get(n, (1, None))[0] + SIZE_CAP for n, v in self.m.syms.items()]
            small = solving.check(self.m, base + cap, "path", split_on)
            if small.result == z3.sat:
                answer = small
        self.stats["path_queries"] = self.stats.get("path_queries", 0) + 1
        self.stats["path_seconds"] = self.stats.get("path_seconds", 0.0) + time.process_time() - t0
        return answer

    def valid(self, t: Template, x: SymEvent, y: SymEvent) -> tuple:
        """(the template's path exists for X and Y, side constraints of its terms)."""
        m = self.m
        events = [x]
        conds = []
        for hop in t.hops:
            proc = m.proc(hop.warp)
            step = proc.steps[hop.step]
            r = None
            if hop.form is not None:
                kind, off = hop.form
                b = step.block
                base = {"X": x.r, "Y": y.r}.get(kind)
                if kind in ("X", "Y") and base is None:
                    return z3.BoolVal(False), []
                if kind == "stop":
                    base = x.state.terms.int_of(b.stop)
                elif kind == "start":
                    base = x.state.terms.int_of(b.start)
                r = base + off
            e = event_at(m, proc, step, r)
            conds.append(e.exists)
            events.append(e)
        events.append(y)
        for link, a, b in zip(t.links, events, events[1:]):
            if link == "po":
                if a.proc is not b.proc:
                    return z3.BoolVal(False), []
                conds.append(po_le(a, b))
            else:
                conds += [a.slot == b.slot, a.gen() == b.gen(), b.gen() >= 0]
        # (the side constraints last: building the terms adds the quotient definitions they rely on)
        return z3.And(*conds), [c for e in events[1:-1] for c in e.side]


# ---------------------------------------------------------------------------------- concrete paths
def _index(ex: Execution) -> dict:
    """(warp, step index) -> issue nodes, (warp, step index, delivered) -> nodes."""
    out: dict = {}
    for e in ex.events:
        if e is None:
            continue
        if not e.delivery:
            out.setdefault((e.warp, e.step.index), []).append(e.node)
        out.setdefault((e.warp, e.step.index, e.delivery), []).append(e.node)
    return out


def template_of(ex: Execution, path: list, role: dict) -> Template:
    """The key events of a concrete path, iterations as offsets from the nearest of X's, Y's or a loop bound.

    Generation nodes split the path into runs of one warp (program order, and an asynchronous command's
    completion right after its issue).  The chain is X -po-> exit(run 0) -bar-> entry(run 1) -po-> exit(run 1)
    -bar-> ... -bar-> entry(last run) -po-> Y: runs enter at a wait and leave at a contribution, and a run
    leaving through a completion is keyed by the command's issue."""
    events = ex.events
    x, y = events[path[0]], events[path[-1]]
    runs: list[list] = []
    run: list = []
    for node in path:
        if events[node] is None:
            runs.append(run)
            run = []
        else:
            run.append(node)
    runs.append(run)
    if len(runs) == 1:
        return Template((), ("po",))
    keys: list = []                      # (event, delivered), X and Y excluded
    links: list = []
    for i, run in enumerate(runs):
        if i > 0:
            links.append("bar")
            keys.append((events[run[0]], False))
        if i == len(runs) - 1:
            links.append("po")
            break
        out = (events[run[-2]], True) if events[run[-1]].delivery else (events[run[-1]], False)
        if i == 0 and out[0] is x:
            continue                     # X contributes itself
        links.append("po")
        keys.append(out)
    hops = tuple(Hop(role[e.warp], e.step.index, _form(ex, e, x, y), d) for e, d in keys)
    return Template(hops, tuple(links))


def _form(ex: Execution, e, x, y):
    if e.r is None:
        return None
    b = e.step.block
    options = []
    if x.r is not None:
        options.append(("X", e.r - x.r))
    if y.r is not None:
        options.append(("Y", e.r - y.r))
    options.append(("stop", e.r - int(evaluate(b.stop, ex.env))))
    options.append(("start", e.r - int(evaluate(b.start, ex.env))))
    return min(options, key=lambda o: abs(o[1]))


def _key(pair: Pair) -> tuple:
    return (pair.family, pair.prop, pair.x, pair.y, pair.same_warp, pair.y_delivered)

