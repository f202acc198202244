"""`explain(report, finding)`: why a finding's operations are (not) ordered, or why warps hang.

Assumes a report (or checker result) that keeps its kernel and inputs (`report.result.func`
/ `.inputs`, as `SyncCheckReport` and `RaceReport` do) and one of its findings (the
object, its 1-based number in `report.findings`, or its id).  The graph is built by one
NumSim run of that kernel on those inputs.

- race (`data_race`, `tmem_lifetime_review`, `scope_mismatch`): the two accesses are found
  in the run; the answer is the shortest state path ordering them, or the statement that
  none exists and which edge would be needed (a lane-order edge, an arrive->wait edge from
  one warp to the other, a completion the reader must observe, a proxy bridge);
  (a tcgen05.dealloc counts as a write of its allocation, as Racecheck judges it);
- `deadlock`: the blocked warps, the barrier generation each awaits, who arrives on that
  barrier in the run, and the wait-for cycle among the blocked warps when there is one
  (for a phase-B deadlock, the witness schedule too);
- a generation mutated before its predecessor's consumption (`mbarrier_arrive_before_
  consumption` and the prior-generation kinds): the waits that consumed generation g - 1
  and whether a path orders any of them before the mutation;
- another finding with an operation and related operations (e.g. init not before a use):
  whether a path orders a related operation before it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

from .. import numsim
from .build import build
from .graph import FULL, lane_text
from .order import anchor, pair_ordering, reachable, search, states_of

_RACE_KINDS = ("data_race", "tmem_lifetime_review", "scope_mismatch")
_CONSUMPTION_KINDS = ("mbarrier_arrive_before_consumption", "mbarrier_prior_generation_not_consumed",
                      "mbarrier_prior_generation_consumption_not_happens_before")
_ARRIVALS = ("arrive", "bar_arrive", "complete_tx", "deferred_arrive")
_UNSEEN = ", no arrival seen: every other unfinished warp is blocked"


@dataclass(frozen=True)
class Explanation:
    finding_id: str
    kind: str
    ordered: bool | None          # races/operation pairs: is there an ordering path; deadlocks: None
    summary: str
    lines: tuple = ()
    path: tuple = ()              # node ids of the path, in order (for highlighting)
    data: dict = field(default_factory=dict)

    def format(self) -> str:
        return "\n".join([f"explain {self.finding_id}", f"  {self.summary}", *(f"  {ln}" for ln in self.lines)]) + "\n"

    def to_dict(self) -> dict:
        return {"finding": self.finding_id, "kind": self.kind, "ordered": self.ordered, "summary": self.summary,
                "lines": list(self.lines), "path": list(self.path), "data": self.data}


def select(report, finding):
    """The finding meant by `finding`: a Finding, a 1-based number, or an id (or unique id prefix)."""
    findings = list(report.findings)
    if hasattr(finding, "kind") and hasattr(finding, "details"):
        return finding
    if isinstance(finding, int) or (isinstance(finding, str) and finding.isdigit()):
        n = int(finding)
        if not 1 <= n <= len(findings):
            raise ValueError(f"finding {n} does not exist: the report has {len(findings)} finding(s), numbered from 1")
        return findings[n - 1]
    hits = [f for f in findings if f.id == finding or f.id.startswith(str(finding))]
    if len(hits) != 1:
        known = ", ".join(f.id for f in findings) or "none"
        raise ValueError(f"finding {finding!r} {'is ambiguous' if hits else 'is not in the report'}; ids: {known}")
    return hits[0]


def explain(report, finding, hb=None) -> Explanation:
    """Explain one finding of `report` (see the module docstring); `hb` reuses an already built graph."""
    f = select(report, finding)
    result = getattr(report, "result", report)
    if hb is None:
        if getattr(result, "func", None) is None or getattr(result, "inputs", None) is None:
            raise ValueError("explain needs a report that keeps its kernel and inputs (modelcheck.synccheck / "
                             "modelcheck.racecheck reports do)")
        hb = build(result.func, result.inputs)
    if f.kind in _RACE_KINDS and "prior" in f.details and "current" in f.details:
        return _race(hb, f)
    if f.kind == "deadlock":
        return _deadlock(hb, f)
    if f.kind in _CONSUMPTION_KINDS and "operation" in f.details and f.details.get("generation") is not None:
        return _consumption(hb, f)
    if "operation" in f.details and f.details.get("related_operations"):
        return _operations(hb, f)
    return Explanation(f.id, f.kind, None, f"{f.kind}: no happens-before question to answer for this finding kind "
                                          f"(it names no pair of operations and no blocked warps)")


# ---------------------------------------------------------------------------------- races
def _matches(rec, op: dict) -> bool:
    if rec.warp != op.get("warp") or rec.site != op.get("site") or list(rec.iters) != list(op.get("iters", [])):
        return False
    if op.get("access") and rec.kind != op["access"]:
        return False
    if op.get("async_op"):
        return rec.actor >= 0
    if rec.actor >= 0:
        return False
    lane = op.get("lane")
    return lane is None or rec.lanes is None or bool(rec.lanes[lane])


def _bytes(rec, lane):
    offs = rec.lane_offsets()
    off = offs.get(lane, next(iter(offs.values()), 0))
    return off, off + rec.size


def _find_pair(hb, f):
    prior_op, cur_op = f.details["prior"], f.details["current"]
    recs = hb.trace.accesses
    priors = [r for r in recs if _matches(r, prior_op)]
    currents = [r for r in recs if _matches(r, cur_op)]
    pl, cl = int(prior_op.get("lane", 0)), int(cur_op.get("lane", 0))
    if not currents and cur_op.get("op") == "tcgen05.dealloc" and priors:
        currents = _dealloc_write(hb, cur_op, priors[0])
    best = None
    for p in priors:
        for c in currents:
            if p.seq >= c.seq or p.alloc != c.alloc:
                continue
            (a0, a1), (b0, b1) = _bytes(p, pl), _bytes(c, cl)
            if a1 <= b0 or b1 <= a0:
                continue
            o = pair_ordering(hb, p, pl, c, cl)
            if not o.ordered:
                return p, c, pl, cl, o
            best = best or (p, c, pl, cl, o)
    return best


def _dealloc_write(hb, op: dict, prior) -> list:
    """A tcgen05.dealloc as Racecheck sees it: a write of the whole allocation by the deallocating warp, right
    after the dealloc (the graph has the dealloc as a sync node; the trace has no access for it)."""
    node = _op_node(hb, op, ops=("tcgen05.dealloc",))
    if node is None:
        return []
    d = hb.graph.nodes[node]
    return [numsim.AccessRecord(d["seq"] + 0.5, d["cta"], d["warp"], d.get("site"), tuple(op.get("iters", ())), None,
                                prior.space, prior.alloc, prior.alloc_name, 0, 1 << 40, "write", "async")]


def _who(hb, node, lane=None) -> str:
    d = hb.graph.nodes[node]
    lanes = f" lane {lane}" if lane is not None and lane >= 0 else ""
    where = f" at {d['span']}" if d.get("span") else ""
    return f"{d.get('label', node)}{lanes}{where}"


def _rec_text(rec, lane) -> str:
    who = f"async op #{rec.actor} (issued by warp {rec.warp})" if rec.actor >= 0 else f"warp {rec.warp} lane {lane}"
    if rec.size >= 1 << 40:
        return f"tcgen05.dealloc of {rec.alloc_name} (a write of the whole allocation) by warp {rec.warp}"
    return f"{rec.kind} of {rec.alloc_name} by {who}, seq {rec.seq}"


def _path_lines(hb, path) -> list[str]:
    out = []
    for node, lane, kind in path:
        prefix = f"--{kind}--> " if kind else ""
        out.append(f"    {prefix}{_who(hb, node, lane)}")
    return out


def _race(hb, f) -> Explanation:
    found = _find_pair(hb, f)
    if found is None:
        return Explanation(f.id, f.kind, None, "the finding's two accesses were not found in a new run of the kernel "
                                               "(did the inputs change?)")
    p, c, pl, cl, o = found
    head = f"prior: {_rec_text(p, pl)}; current: {_rec_text(c, cl)}"
    nodes = tuple(n for n, _, _ in o.path)
    data = {"prior_seq": p.seq, "current_seq": c.seq, "reason": o.reason}
    if o.ordered:
        lines = [head, f"ordered ({o.reason.replace('_', ' ')}); path:", *_path_lines(hb, o.path)]
        if o.bridge:
            lines.append(f"  {'proxy bridge' if o.reason == 'gated_path' and p.proxy != c.proxy else 'fence'}: "
                         f"{_who(hb, o.bridge)}")
        return Explanation(f.id, f.kind, True, "a happens-before path orders the two accesses", tuple(lines), nodes,
                           data)
    lines = [head]
    if o.reason == "no_tc_fence":
        need = ("a tcgen05.fence::before_thread_sync (or tcgen05.commit) after the earlier tcgen05 operation "
                f"completes and before the synchronization, and a tcgen05.fence::after_thread_sync in warp {c.warp} "
                "after it and before the later tcgen05 operation")
        lines += ["a happens-before path orders them, but tcgen05 operations of different warps are ordered only "
                  "through fence::before_thread_sync -> thread sync -> fence::after_thread_sync; the path:",
                  *_path_lines(hb, o.path)]
        data["needed"] = "tcgen05_fences"
        return Explanation(f.id, f.kind, False, f"no tcgen05 fence pair on the path: needed {need}",
                           tuple(lines + [f"needed: {need}"]), nodes, data)
    if o.reason == "no_bridge":
        lines += ["a happens-before path orders them, but it passes no fence.proxy.async covering "
                  f"{c.space} in a lane on the path:", *_path_lines(hb, o.path)]
        if c.actor >= 0:
            need = (f"a fence.proxy.async in the issuing lane of async op #{c.actor} (warp {c.warp}) after it learns "
                    f"of the prior access and before the issue")
        else:
            need = f"a fence.proxy.async in warp {c.warp} lane {cl} after it observes the prior access and before it"
        data["needed"] = "proxy_bridge"
        return Explanation(f.id, f.kind, False, f"no proxy bridge: needed {need}", tuple(lines + [f"needed: {need}"]),
                           nodes, data)
    need, more = _needed(hb, p, pl, c, cl)
    data["needed"] = need[0]
    return Explanation(f.id, f.kind, False, f"no happens-before path orders the two accesses; needed: {need[1]}",
                       tuple(lines + more + [f"needed: {need[1]}"]), (), data)


def _needed(hb, p, pl, c, cl):
    """(what kind of edge is missing, its description), plus evidence lines."""
    a, b = anchor(hb, p, pl), anchor(hb, c, cl)
    g = hb.graph
    if p.actor < 0 and c.actor < 0 and p.warp == c.warp:
        return (("lane_order", f"a lane-order edge between lanes {pl} and {cl} of warp {p.warp}: a warp_sync "
                               "(bar.warp.sync) covering both lanes, or a barrier, between the two accesses"), [])
    if p.actor >= 0:
        op = hb.op_node.get(p.actor)
        issue = next((u for u in g.predecessors(op) if g.edges[u, op]["kind"] == "issue"), None) if op else None
        if issue is not None and b.end:
            ilane = int(g.nodes[op].get("lane", -1))
            starts = tuple((issue, m) for m in ([ilane] if ilane >= 0 else range(32)))
            path, _ = search(hb, starts, b.end)
            if path:
                target = _completion_target(hb, op)
                return (("completion", f"an edge from the completion of async op #{p.actor} "
                                       f"({g.nodes[op].get('op')}) to the current access: {target} before it"),
                        ["its issue is ordered before the current access, its completion is not:",
                         *_path_lines(hb, path)])
    if c.actor >= 0:
        op = hb.op_node.get(c.actor)
        issue = next((u for u in g.predecessors(op) if g.edges[u, op]["kind"] == "issue"), None) if op else None
        if issue is not None and g.nodes[issue].get("seq", 0) < p.seq:
            # the operation was issued before the prior access and touched the bytes after it: the prior
            # access must wait for the operation's completion instead
            target = _completion_target(hb, op)
            who = f"warp {p.warp} lane {pl}" if p.actor < 0 else f"async op #{p.actor}"
            return (("completion", f"async op #{c.actor} ({g.nodes[op].get('op')}, issued by warp {c.warp} before "
                                   f"the prior access) accessed the bytes after it: {who} must observe its "
                                   f"completion ({target}) before its access"),
                    [f"async op #{c.actor} was issued at {_who(hb, issue)}, before the prior access"])
    released = _generations(hb, states_of(reachable(hb, a.start)) if a.start else ())
    acquired = _generations(hb, _reaching(hb, b.end))
    who_a = f"async op #{p.actor}" if p.actor >= 0 else f"warp {p.warp} lane {pl}"
    who_b = f"async op #{c.actor} (warp {c.warp})" if c.actor >= 0 else f"warp {c.warp} lane {cl}"
    more = [f"after the prior access, {who_a} reaches: {_list(released) or 'no barrier generation'}",
            f"before the current access, {who_b} is reached from: {_list(acquired) or 'no barrier generation'}"]
    if p.order != "weak" or c.order != "weak":
        return (("release_acquire", f"a release/acquire edge from {who_a} to {who_b} (a release write read by an "
                                    "acquire read with scopes covering both, or fence.sc on both sides)"), more)
    return (("arrive_wait", f"an arrive->wait (or barrier) edge from {who_a} after its access to {who_b} before "
                            "its access"), more)


def _completion_target(hb, op) -> str:
    """Where the operation's completion can be observed: the generation it lands on, else its group wait."""
    g = hb.graph
    found, seen, frontier = [], {op}, [op]
    while frontier:      # the completions carrying it: its own, and every later commit of its thread
        nxt = []
        for u in frontier:
            for v in g.successors(u):
                e = g.edges[u, v]
                if v in seen or not e["orders"]:
                    continue
                seen.add(v)
                d = g.nodes[v]
                if d.get("kind") == "generation":
                    found.append((d.get("epoch", 0), d["barrier"], d["generation"]))
                elif d.get("kind") == "completion":
                    nxt.append(v)
        frontier = nxt
    if found:
        return "a wait on " + " or ".join(f"{b} generation {n}" for _, b, n in found[:3])
    kind = str(g.nodes[op].get("op", ""))
    if kind.startswith("tcgen05.ld") or kind.startswith("tcgen05.st"):
        return f"tcgen05.wait::{kind[8:10]} in the issuing warp, then a synchronization"
    return "a wait_group retiring it in the issuing lane"


def _generations(hb, states) -> list[str]:
    g = hb.graph
    return sorted({g.nodes[n]["label"] for n, _ in states if g.nodes[n].get("kind") == "generation"})


def _list(items, k: int = 6) -> str:
    return ", ".join(items[:k]) + (f", ... ({len(items)} in all)" if len(items) > k else "")


def _reaching(hb, ends) -> set:
    """States from which some state in `ends` is reachable (reverse search, the same lane rules)."""
    g = hb.graph
    seen = set(ends)
    stack = list(ends)
    while stack:
        node, lane = stack.pop()
        here = [(node, lane)]
        joins = g.nodes[node].get("joins", 0)
        if joins and lane >= 0 and (joins >> lane) & 1:
            here = [(node, m) for m in range(32) if (joins >> m) & 1]
        for v, m in here:
            if (v, m) not in seen:
                seen.add((v, m))
            for u in g.predecessors(v):
                e = g.edges[u, v]
                po = e.get("po_mask", 0)
                if po and m >= 0 and (po >> m) & 1 and (u, m) not in seen:
                    seen.add((u, m))
                    stack.append((u, m))
                if not e["orders"]:
                    continue
                if e["kind"] == "issue" and g.nodes[v].get("transit", True) is False:
                    # (op, -2) is reached only by its issue; (op, -1) never by it
                    prev = [(u, k) for k in range(32) if (e["src_mask"] >> k) & 1] if m == -2 else []
                elif m == -2:
                    continue
                elif e["lane_map"] == "same":
                    prev = [(u, m)] if m >= 0 and (e["src_mask"] >> m) & 1 else []
                else:
                    dst = e["dst_mask"]
                    if not ((dst == 0 and m < 0) or (m >= 0 and (dst >> m) & 1)):
                        continue
                    src = e["src_mask"]
                    prev = [(u, -1)] if src == 0 else [(u, k) for k in range(32) if (src >> k) & 1]
                for s in prev:
                    if s not in seen:
                        seen.add(s)
                        stack.append(s)
    return seen


# ---------------------------------------------------------------------------------- deadlocks
def _deadlock(hb, f) -> Explanation:
    g = hb.graph
    blocked = f.details.get("blocked", [])
    blocked_warps = {b["warp"] for b in blocked}
    # a phase-B deadlock happens in another schedule of a completed run: every warp not listed has finished there
    schedule = f.details.get("verification") == "fixed_sync"
    where = "in the witness schedule" if schedule else "when the run stopped"
    finished = set(range(hb.run.warps)) - blocked_warps if schedule else _finished(hb)
    waits_for, items, groups = nx.DiGraph(), [], {}
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
            notes.append(f"warps that arrive on {name} in the run: {_warps(sorted(family)) or 'none'}"
                         + ("" if gen is not None else f"; the run never reached generation {number}"))
        else:
            notes.append(f"arrived on that generation: {_warps(arrived) or 'nobody'}; warps that arrive on "
                         f"{name} in this run: {_warps(sorted(family)) or 'none'}")
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
                         f"arrive: {_warps(others) or 'none'} (all blocked)")
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
        lines.append(f"{'warp' if len(ws) == 1 else 'warps'} {_ranges(ws)} {verb}{head}")
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
        summary = (f"blocked warps {_ranges(sorted(blocked_warps))}; no wait-for cycle among them: each awaits a "
                   "generation that no unfinished warp will complete")
    data = {"blocked": items, "cycle": cycle}
    path = tuple(n for n, d in g.nodes(data=True) if d.get("kind") == "blocked")
    if f.details.get("witness"):
        lines.append(f"witness schedule ({len(f.details['witness'])} steps):")
        lines.extend(f"    {_step(s)}" for s in f.details["witness"][:40])
        # the run's operations in the witness order, then the operations the blocked warps are stuck at
        stuck = [_op_node(hb, {"warp": b["warp"], "site": b.get("site"), "iters": b.get("iters", [])},
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
            node = _op_node(hb, step, ops=_STEP_OPS.get(step.get("kind")))
        else:
            queue = landings.get(step.get("barrier"), [])
            node = queue.pop(0) if queue else None
        if node is not None:
            out.append(node)
    return out


def _ranges(ws) -> str:
    ws = sorted(set(ws))
    out, k = [], 0
    while k < len(ws):
        j = k
        while j + 1 < len(ws) and ws[j + 1] == ws[j] + 1:
            j += 1
        out.append(str(ws[k]) if j == k else f"{ws[k]}-{ws[j]}")
        k = j + 1
    return ", ".join(out)


def _step(s: dict) -> str:
    if s.get("transition") == "issue":
        return f"warp {s.get('warp')}: {s.get('command', s.get('kind'))} on {s.get('barrier')}"
    return f"{s.get('completion', 'completion')} lands on {s.get('barrier')}"


def _warps(ws) -> str:
    return ", ".join(str(w) for w in ws)


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
    node = _op_node(hb, {"warp": b["warp"], "site": b.get("site"), "iters": b.get("iters", [])},
                    ops=("mbarrier.wait", "bar.wait"))
    return hb.graph.nodes[node].get("generation") if node is not None else None


# ---------------------------------------------------------------------------------- re-arming a generation
def _consumption(hb, f) -> Explanation:
    """An arrive (or expect_tx) on generation g before / not ordered after the wait that consumed g - 1."""
    g = hb.graph
    op = f.details["operation"]
    node = _op_node(hb, op, ops=("mbarrier.arrive", "mbarrier.expect_tx", "async.issue"))
    if node is None:
        return Explanation(f.id, f.kind, None, "the finding's operation was not found in a new run of the kernel")
    gen = _mutated_generation(hb, node)
    prev = next((u for u in g.predecessors(gen) if g.edges[u, gen]["kind"] == "next_generation"), None) \
        if gen is not None else None
    d = g.nodes[node]
    name, number = f.details.get("barrier", d.get("barrier")), f.details["generation"]
    lines = [f"{name} generation {number} is mutated by {_who(hb, node)}"]
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
                     f"warps whose waits on {name} passed: {_warps(consumers) or 'none'}"
                     + (f"; blocked on it when the run stopped: warp {_warps(stuck)}" if stuck else ""))
    for w in waits:
        wd = g.nodes[w]
        when = "before" if wd["seq"] < d["seq"] else "after"
        wm = wd.get("mask", FULL)
        found, _ = search(hb, tuple((w, k) for k in range(32) if (wm >> k) & 1), ends)
        lines.append(f"generation {number - 1} is observed by {_who(hb, w)} ({when} the mutation in the run): "
                     + ("a happens-before path orders it before the mutation" if found else
                        "no happens-before path orders it before the mutation"))
        if found and not path:
            path = tuple(n for n, _, _ in found)
            lines.extend(_path_lines(hb, found))
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


# ---------------------------------------------------------------------------------- operation pairs
def _op_node(hb, op: dict, ops=None):
    g = hb.graph
    for n, d in g.nodes(data=True):
        if d.get("kind") == "sync" and d.get("warp") == op.get("warp") and d.get("site") == op.get("site") \
                and d.get("iters", "") == ",".join(map(str, op.get("iters", []))) and (ops is None or d["op"] in ops):
            return n
    return None


def _operations(hb, f) -> Explanation:
    target = _op_node(hb, f.details["operation"])
    lines = []
    for rel in f.details["related_operations"]:
        src = _op_node(hb, rel)
        if src is None or target is None:
            lines.append("an operation of the finding was not found in a new run (the run stopped earlier?)")
            continue
        sm, tm = hb.graph.nodes[src].get("mask", FULL), hb.graph.nodes[target].get("mask", FULL)
        starts = tuple((src, k) for k in range(32) if (sm >> k) & 1)
        ends = tuple((target, k) for k in range(32) if (tm >> k) & 1)
        path, _ = search(hb, starts, ends)
        if path:
            return Explanation(f.id, f.kind, True, f"{_who(hb, src)} happens before {_who(hb, target)}",
                               tuple(["path:", *_path_lines(hb, path)]), tuple(n for n, _, _ in path))
        lines.append(f"no happens-before path from {_who(hb, src)} (lanes {lane_text(sm)}) to {_who(hb, target)}")
    return Explanation(f.id, f.kind, False, "no happens-before path orders the related operation before the "
                       "operation: needed an edge from the related operation's warp (e.g. an arrive it makes after "
                       "it, that the operation's warp waits on before it)", tuple(lines))
