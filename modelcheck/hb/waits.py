"""Explanations of waits: deadlocks, generations re-armed before their consumption, and
operations that should happen before one another.

Assumes a Synccheck/Racecheck finding and the graph of a run of the same kernel and inputs
(for a deadlock that NumSim hit, the graph has the blocked waits and the generations they
await; for a phase-B deadlock, the run completed and the finding carries the witness).
"""
from __future__ import annotations

import re

import networkx as nx

from .describe import Explanation, op_node, path_lines, ranges, warps_text, who
from .graph import FULL, lane_text
from .order import search

_ARRIVALS = ("arrive", "bar_arrive", "complete_tx", "deferred_arrive")
_UNSEEN = ", no arrival seen: every other unfinished warp is blocked"


def explain_deadlock(hb, f) -> Explanation:
    g = hb.graph
    blocked = f.details.get("blocked", [])
    blocked_warps = {b["warp"] for b in blocked}
    # a phase-B deadlock happens in another schedule of a completed run: every warp not listed has finished there
    schedule = f.details.get("verification") == "fixed_sync"
    where = "in the witness schedule" if schedule else "when the run stopped"
    finished = set(range(hb.run.warps)) - blocked_warps if schedule else _finished(hb)
    waits_for, items = nx.DiGraph(), []
    groups: dict[tuple[str, ...], list[int]] = {}
    for b in blocked:
        warp = b["warp"]
        waits_for.add_node(warp)
        gen, name, number = _awaited_generation(hb, b)
        if name is None:
            groups.setdefault((f"{b.get('awaits', 'is blocked')} (its barrier is not in the graph)",), []).append(warp)
            items.append({"warp": warp, "awaits": b.get("awaits")})
            continue
        gd = g.nodes[gen] if gen is not None else {"barrier": name, "cta": b.get("cta", 0)}
        arrived = sorted({_arriver(hb, u) for u in g.predecessors(gen) if g.edges[u, gen]["kind"] in _ARRIVALS}) \
            if gen is not None and not schedule else []
        family = _arrivers_of_barrier(hb, gd)
        missing = sorted(w for w in family if w not in arrived and w not in (warp, -1))
        notes = []
        seen = _observed_in_run(hb, b)
        if schedule and seen is not None and seen != number:
            notes.append(f"in the run this wait observed generation {seen}: in this schedule it was overtaken")
        if schedule:
            notes.append(f"warps that arrive on {name} in the run: {warps_text(sorted(family)) or 'none'}"
                         + ("" if gen is not None else f"; the run never reached generation {number}"))
        else:
            notes.append(f"arrived on that generation: {warps_text(arrived) or 'nobody'}; warps that arrive on "
                         f"{name} in this run: {warps_text(sorted(family)) or 'none'}")
        short = re.search(r"arrivals (\d+)/(\d+)", b.get("state") or "")
        if not missing and family and short and int(short.group(1)) < int(short.group(2)):
            notes.append(f"every warp that arrives on {name} has arrived; the generation still needs "
                         f"{int(short.group(2)) - int(short.group(1))} more arrival(s) than the kernel makes")
        for w in missing:
            state = "blocked" if w in blocked_warps else ("finished" if w in finished else "not blocked")
            notes.append(f"would arrive: warp {w} ({state} {where})")
            if w in blocked_warps:
                waits_for.add_edge(warp, w, barrier=name, generation=number, seen=True)
        if not family and not schedule:
            # nobody arrived on this barrier before the run stopped: only a warp that has not finished can
            # still arrive, and every unfinished warp is blocked
            others = sorted(blocked_warps - {warp})
            notes.append(f"no arrival on {name} was seen before the run stopped; only an unfinished warp can "
                         f"arrive: {warps_text(others) or 'none'} (all blocked)")
            for w in others:
                waits_for.add_edge(warp, w, barrier=name, generation=number, seen=False)
        tx = re.search(r"transactions (\d+)/(\d+)", b.get("state") or "")
        if tx and int(tx.group(1)) < int(tx.group(2)):
            notes.append(f"its arrivals are complete but {int(tx.group(2)) - int(tx.group(1))} expected transaction "
                         f"byte(s) never land: expect_tx exceeds the bytes the async copies deliver")
        head = f"{name} generation {number}" + (f" (barrier state: {b['state']})" if b.get("state") else "")
        groups.setdefault((head, *notes), []).append(warp)
        items.append({"warp": warp, "barrier": name, "generation": number, "arrived": arrived,
                      "would_arrive": missing})
    lines = []
    for (head, *notes), ws in groups.items():
        verb = "" if head.startswith(("is blocked", "await ")) else ("awaits " if len(ws) == 1 else "await ")
        lines.append(f"{'warp' if len(ws) == 1 else 'warps'} {ranges(ws)} {verb}{head}")
        lines.extend(f"    {n}" for n in notes)
    cycle = []
    try:
        cycle = [u for u, _ in nx.find_cycle(waits_for)]
    except nx.NetworkXNoCycle:
        pass
    if cycle:
        hops = [f"warp {u} waits for warp {v} ({waits_for.edges[u, v]['barrier']} generation "
                f"{waits_for.edges[u, v]['generation']}"
                f"{'' if waits_for.edges[u, v]['seen'] else _UNSEEN})"
                for u, v in zip(cycle, cycle[1:] + cycle[:1])]
        summary = "wait-for cycle: " + "; ".join(hops)
    else:
        summary = (f"blocked warps {ranges(sorted(blocked_warps))}; no wait-for cycle among them: each awaits a "
                   "generation that no unfinished warp will complete")
    data = {"blocked": items, "cycle": cycle}
    path = tuple(n for n, d in g.nodes(data=True) if d.get("kind") == "blocked")
    if f.details.get("witness"):
        lines.append(f"witness schedule ({len(f.details['witness'])} steps):")
        lines.extend(f"    {_step(s)}" for s in f.details["witness"][:40])
        # the run's operations in the witness order, then the operations the blocked warps are stuck at
        stuck = [op_node(hb, {"warp": b["warp"], "site": b.get("site"), "iters": b.get("iters", [])},
                          ops=_STEP_OPS.get(b.get("kind"))) for b in blocked]
        data["witness_nodes"] = _witness_nodes(hb, f.details["witness"]) + [n for n in stuck if n is not None]
        path = tuple(n for n in stuck if n is not None)
    return Explanation(f.id, f.kind, None, summary, tuple(lines), path, data)


# explorer command kind -> the run's sync operations it stands for
_STEP_OPS = {"init": ("mbarrier.init",), "inval": ("mbarrier.inval",), "arrive": ("mbarrier.arrive",),
             "expect_tx": ("mbarrier.expect_tx",), "complete_tx": ("mbarrier.complete_tx",),
             "wait": ("mbarrier.wait",), "issue_tx": ("async.issue",), "issue_arrive": ("async.issue",),
             "contribute": ("bar.sync", "bar.arrive", "bar.red"), "resume": ("bar.wait",)}


def _witness_nodes(hb, witness) -> list:
    """The graph nodes of a witness schedule's steps, in its order (a landing: the next unused completion
    on that barrier)."""
    g = hb.graph
    landings: dict[str, list] = {}
    for n, d in sorted(g.nodes(data=True), key=lambda x: x[1].get("seq", 0)):
        if d.get("kind") == "completion" and d.get("barrier"):
            landings.setdefault(d["barrier"], []).append(n)
    out = []
    for step in witness:
        if step.get("transition") == "issue":
            node = op_node(hb, step, ops=_STEP_OPS.get(step.get("kind")))
        else:
            queue = landings.get(step.get("barrier"), [])
            node = queue.pop(0) if queue else None
        if node is not None:
            out.append(node)
    return out


def _step(s: dict) -> str:
    if s.get("transition") == "issue":
        return f"warp {s.get('warp')}: {s.get('command', s.get('kind'))} on {s.get('barrier')}"
    return f"{s.get('completion', 'completion')} lands on {s.get('barrier')}"


def _finished(hb) -> set:
    res = hb.result
    blocked = set()
    for d in (res.diagnostics if res is not None else ()):
        if d.kind == "deadlock":
            blocked |= {b["warp"] for b in d.details.get("blocked", [])}
    if res is None or res.termination not in ("completed", "error"):
        return set()
    return set(range(hb.run.warps)) - blocked


def _arriver(hb, node) -> int:
    return int(hb.graph.nodes[node].get("warp", -1))


def _arrivers_of_barrier(hb, gen_data) -> set:
    g = hb.graph
    out = set()
    for n, d in g.nodes(data=True):
        if d.get("kind") == "generation" and d["barrier"] == gen_data["barrier"] and d["cta"] == gen_data["cta"] \
                and gen_data.get("epoch") in (None, d.get("epoch")):
            out |= {_arriver(hb, u) for u in g.predecessors(n) if g.edges[u, n]["kind"] in _ARRIVALS}
    return out


def _awaited_generation(hb, b: dict):
    """(generation node or None, barrier name, generation number) a blocked warp needs: the graph's own awaits
    edge (an execution deadlock), else from the explorer's description of the wait and the barrier state."""
    g = hb.graph
    node = f"blocked:w{b['warp']}"
    if node in g:
        for v in g.successors(node):
            if g.edges[node, v]["kind"] == "awaits":
                return v, g.nodes[v]["barrier"], g.nodes[v]["generation"]
    name = b.get("barrier")
    awaits, state = b.get("awaits", ""), b.get("state") or ""
    gens = [n for n, d in g.nodes(data=True) if d.get("kind") == "generation" and d["barrier"] == name]
    if not gens:
        return None, None, None
    m = re.search(r"generation (\d+)", state) or re.search(r"generation (\d+)", awaits)
    current = int(m.group(1)) if m else max(g.nodes[n]["generation"] for n in gens)
    p = re.search(r"phase (\d)", awaits)
    needed = current if p is None or (current & 1) == int(p.group(1)) else current + 1
    exact = [n for n in gens if g.nodes[n]["generation"] == needed]
    return (max(exact, key=lambda n: g.nodes[n].get("epoch", 0)) if exact else None), name, needed


def _observed_in_run(hb, b: dict):
    """The generation the blocked operation observed (or contributed to) in the run, when it ran there."""
    node = op_node(hb, {"warp": b["warp"], "site": b.get("site"), "iters": b.get("iters", [])},
                    ops=("mbarrier.wait", "bar.wait"))
    return hb.graph.nodes[node].get("generation") if node is not None else None


def explain_consumption(hb, f) -> Explanation:
    """An arrive (or expect_tx) on generation g before / not ordered after the wait that consumed g - 1."""
    g = hb.graph
    op = f.details["operation"]
    node = op_node(hb, op, ops=("mbarrier.arrive", "mbarrier.expect_tx", "async.issue"))
    if node is None:
        return Explanation(f.id, f.kind, None, "the finding's operation was not found in a new run of the kernel")
    gen = _mutated_generation(hb, node)
    prev = next((u for u in g.predecessors(gen) if g.edges[u, gen]["kind"] == "next_generation"), None) \
        if gen is not None else None
    d = g.nodes[node]
    name, number = f.details.get("barrier", d.get("barrier")), f.details["generation"]
    lines = [f"{name} generation {number} is mutated by {who(hb, node)}"]
    if prev is None:
        return Explanation(f.id, f.kind, None, f"{name} generation {number - 1} is not in the graph", tuple(lines))
    waits = sorted((v for v in g.successors(prev) if g.edges[prev, v]["kind"] == "observe"),
                   key=lambda v: g.nodes[v]["seq"])
    mask = d.get("mask", FULL)
    ends = tuple((node, k) for k in range(32) if (mask >> k) & 1)
    path = ()
    if not waits:
        consumers = sorted({g.nodes[v]["warp"] for n, nd in g.nodes(data=True)
                            if nd.get("kind") == "generation" and nd["barrier"] == name and nd["cta"] == d["cta"]
                            for v in g.successors(n) if g.edges[n, v]["kind"] == "observe"})
        stuck = sorted(nd["warp"] for _, nd in g.nodes(data=True) if nd.get("kind") == "blocked"
                       and nd.get("barrier") == name)
        lines.append(f"no wait observes {name} generation {number - 1} in the run (the mutations overtook it); "
                     f"warps whose waits on {name} passed: {warps_text(consumers) or 'none'}"
                     + (f"; blocked on it when the run stopped: warp {warps_text(stuck)}" if stuck else ""))
    for w in waits:
        wd = g.nodes[w]
        when = "before" if wd["seq"] < d["seq"] else "after"
        wm = wd.get("mask", FULL)
        found, _ = search(hb, tuple((w, k) for k in range(32) if (wm >> k) & 1), ends)
        lines.append(f"generation {number - 1} is observed by {who(hb, w)} ({when} the mutation in the run): "
                     + ("a happens-before path orders it before the mutation" if found else
                        "no happens-before path orders it before the mutation"))
        if found and not path:
            path = tuple(n for n, _, _ in found)
            lines.extend(path_lines(hb, found))
    if path:
        return Explanation(f.id, f.kind, True, f"{name} generation {number} is mutated after a consumption of "
                           f"generation {number - 1} that happens before it", tuple(lines), path)
    need = (f"back-pressure: warp {d['warp']} waits, before it mutates {name} again, on a barrier the consumer of "
            f"generation {number - 1} arrives on after its wait")
    return Explanation(f.id, f.kind, False, f"{name} generation {number} is mutated by warp {d['warp']} with no "
                       f"consumption of generation {number - 1} ordered before it; needed: {need}",
                       tuple(lines + [f"needed: {need}"]), (node, prev, *waits))


def _mutated_generation(hb, node):
    """The generation an arrive / expect_tx mutates, or (an async issue) the one its completion lands on."""
    g = hb.graph
    frontier = [node]
    for _ in range(3):
        nxt = []
        for u in frontier:
            for v in g.successors(u):
                kind = g.edges[u, v]["kind"]
                if g.nodes[v].get("kind") == "generation" and kind in ("arrive", "expect_tx", "complete_tx",
                                                                        "deferred_arrive"):
                    return v
                if kind in ("issue", "complete"):
                    nxt.append(v)
        frontier = nxt
    return None


def explain_operations(hb, f) -> Explanation:
    target = op_node(hb, f.details["operation"])
    lines = []
    for rel in f.details["related_operations"]:
        src = op_node(hb, rel)
        if src is None or target is None:
            lines.append("an operation of the finding was not found in a new run (the run stopped earlier?)")
            continue
        sm, tm = hb.graph.nodes[src].get("mask", FULL), hb.graph.nodes[target].get("mask", FULL)
        starts = tuple((src, k) for k in range(32) if (sm >> k) & 1)
        ends = tuple((target, k) for k in range(32) if (tm >> k) & 1)
        path, _ = search(hb, starts, ends)
        if path:
            return Explanation(f.id, f.kind, True, f"{who(hb, src)} happens before {who(hb, target)}",
                               tuple(["path:", *path_lines(hb, path)]), tuple(n for n, _, _ in path))
        lines.append(f"no happens-before path from {who(hb, src)} (lanes {lane_text(sm)}) to {who(hb, target)}")
    return Explanation(f.id, f.kind, False, "no happens-before path orders the related operation before the "
                       "operation: needed an edge from the related operation's warp (e.g. an arrive it makes after "
                       "it, that the operation's warp waits on before it)", tuple(lines))
