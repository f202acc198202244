"""Race explanations: the shortest path that orders a finding's two accesses, or the missing edge.

Assumes a race finding (`prior` and `current` operations, as Racecheck reports them) and
the graph of a run of the same kernel and inputs.  The two accesses are looked up in that
run (a tcgen05.dealloc counts as a write of its allocation, as Racecheck judges it); the
answer is a path (`order.search`) or, when there is none, what edge would be needed: a
lane-order edge, an arrive->wait edge, a completion to observe, a proxy bridge, a pair of
tcgen05 thread-sync fences.
"""
from __future__ import annotations

from .. import numsim
from .describe import Explanation, op_node, path_lines, who
from .order import anchor, pair_ordering, reachable, search, states_of


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
    node = op_node(hb, op, ops=("tcgen05.dealloc",))
    if node is None:
        return []
    d = hb.graph.nodes[node]
    return [numsim.AccessRecord(d["seq"] + 0.5, d["cta"], d["warp"], d.get("site"), tuple(op.get("iters", ())), None,
                                prior.space, prior.alloc, prior.alloc_name, 0, 1 << 40, "write", "async")]


def _rec_text(rec, lane) -> str:
    actor = f"async op #{rec.actor} (issued by warp {rec.warp})" if rec.actor >= 0 else f"warp {rec.warp} lane {lane}"
    if rec.size >= 1 << 40:
        return f"tcgen05.dealloc of {rec.alloc_name} (a write of the whole allocation) by warp {rec.warp}"
    return f"{rec.kind} of {rec.alloc_name} by {actor}, seq {rec.seq}"


def explain_race(hb, f) -> Explanation:
    found = _find_pair(hb, f)
    if found is None:
        return Explanation(f.id, f.kind, None, "the finding's two accesses were not found in a new run of the kernel "
                                               "(did the inputs change?)")
    p, c, pl, cl, o = found
    head = f"prior: {_rec_text(p, pl)}; current: {_rec_text(c, cl)}"
    nodes = tuple(n for n, _, _ in o.path)
    data = {"prior_seq": p.seq, "current_seq": c.seq, "reason": o.reason}
    if o.ordered:
        lines = [head, f"ordered ({o.reason.replace('_', ' ')}); path:", *path_lines(hb, o.path)]
        if o.bridge:
            lines.append(f"  {'proxy bridge' if o.reason == 'gated_path' and p.proxy != c.proxy else 'fence'}: "
                         f"{who(hb, o.bridge)}")
        return Explanation(f.id, f.kind, True, "a happens-before path orders the two accesses", tuple(lines), nodes,
                           data)
    lines = [head]
    if o.reason == "no_tc_fence":
        need = ("a tcgen05.fence::before_thread_sync (or tcgen05.commit) after the earlier tcgen05 operation "
                f"completes and before the synchronization, and a tcgen05.fence::after_thread_sync in warp {c.warp} "
                "after it and before the later tcgen05 operation")
        lines += ["a happens-before path orders them, but tcgen05 operations of different warps are ordered only "
                  "through fence::before_thread_sync -> thread sync -> fence::after_thread_sync; the path:",
                  *path_lines(hb, o.path)]
        data["needed"] = "tcgen05_fences"
        return Explanation(f.id, f.kind, False, f"no tcgen05 fence pair on the path: needed {need}",
                           tuple(lines + [f"needed: {need}"]), nodes, data)
    if o.reason == "no_bridge":
        lines += ["a happens-before path orders them, but it passes no fence.proxy.async covering "
                  f"{c.space} in a lane on the path:", *path_lines(hb, o.path)]
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
                         *path_lines(hb, path)])
    if c.actor >= 0:
        op = hb.op_node.get(c.actor)
        issue = next((u for u in g.predecessors(op) if g.edges[u, op]["kind"] == "issue"), None) if op else None
        if issue is not None and g.nodes[issue].get("seq", 0) < p.seq:
            # the operation was issued before the prior access and touched the bytes after it: the prior
            # access must wait for the operation's completion instead
            target = _completion_target(hb, op)
            actor = f"warp {p.warp} lane {pl}" if p.actor < 0 else f"async op #{p.actor}"
            return (("completion", f"async op #{c.actor} ({g.nodes[op].get('op')}, issued by warp {c.warp} before "
                                   f"the prior access) accessed the bytes after it: {actor} must observe its "
                                   f"completion ({target}) before its access"),
                    [f"async op #{c.actor} was issued at {who(hb, issue)}, before the prior access"])
    released = _generations(hb, states_of(reachable(hb, a.start)) if a.start else ())
    acquired = _generations(hb, _reaching(hb, b.end))
    who_a = f"async op #{p.actor}" if p.actor >= 0 else f"warp {p.warp} lane {pl}"
    who_b = f"async op #{c.actor} (warp {c.warp})" if c.actor >= 0 else f"warp {c.warp} lane {cl}"
    more = [f"after the prior access, {who_a} reaches: {_list(released) or 'no barrier generation'}",
            f"before the current access, {who_b} is reached from: {_list(acquired) or 'no barrier generation'}"]
    if p.order != "weak" or c.order != "weak":
        return (("release_acquire", f"a release/acquire edge from {who_a} to {who_b} (a release write read by an "
                                    "acquire read with scopes covering both, or fence.sc on both sides in an order the "
                                    "run forces)"), more)
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
        fans = g.nodes[node].get("fans", 0)
        if fans and lane >= 0 and (g.nodes[node].get("mask", 0) >> lane) & 1:
            here += [(node, m) for m in range(32) if (fans >> m) & 1 and (node, m) not in here]
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
