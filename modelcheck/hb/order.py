"""Ordering queries on the happens-before graph: is access a ordered before access b?

Assumes a `HappensBefore` from `graph.from_trace`.  A search state is (node, lane): a
lane of a warp-level node, or lane -1 at a lane-less node (generation, async operation,
completion).  Edges move states as their `lane_map` says (see `graph`); a node with a
`joins` mask (warp sync) lets any member lane continue as every member lane; an async
operation node is never passed through (`transit=False`).

An access is anchored between the sync nodes of its own lane: a generic access starts
at its lane's next sync node and is reached at its lane's previous one; an async
operation's access is the operation node itself; a strong memory access is its own
node.  Two accesses are ordered when a state path joins the anchors — or they are the
same actor (same lane of a warp, or the same async operation) in execution order.  A
cross-proxy pair needs a *bridged* path: one passing a `fence.proxy.async` covering
the state space in one of the fence's lanes (a bulk copy's completion bridges its own
destination bytes).  Guarantees: `shortest_path` returns the fewest-edge path.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass

from .graph import FULL, lanes_in, strength

_FENCE_DOMAINS = {"all": ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
                  "shared": ("shared",), "global": ("global",)}
_BULK = ("bulk", "tma", "cp.async.bulk")


@dataclass(frozen=True)
class Anchor:
    """Where an access sits in the graph: `start` states (what it precedes) and `end` states (what precedes it)."""

    record: object
    lane: int
    start: tuple          # states from which the access's later history is reachable
    end: tuple            # states that reach the access
    actor: tuple          # ("lane", warp, lane) | ("op", op id)


@dataclass(frozen=True)
class Ordering:
    """The answer for one pair: ordered?, why, and the path (a list of (node, lane, edge kind into it))."""

    ordered: bool
    reason: str           # same_actor | path | bridged_path | strong_pair | no_path | no_bridge
    path: tuple = ()
    bridge: str | None = None        # the fence.proxy.async node on a bridged path


def anchor(hb, rec, lane: int) -> Anchor:
    """The graph position of access record `rec` for `lane` (for an async operation's access: its node)."""
    if rec.actor >= 0:
        node = hb.op_node.get(rec.actor)
        states = ((node, -1),) if node is not None else ()
        return Anchor(rec, lane, states, states, ("op", rec.actor))
    node = hb.access_node.get(rec.seq)
    if node is not None:
        return Anchor(rec, lane, ((node, lane),), ((node, lane),), ("lane", rec.warp, lane))
    seq_nodes = hb.lane_nodes.get((rec.warp, lane), [])
    seqs = [s for s, _ in seq_nodes]
    after = bisect_right(seqs, rec.seq)
    before = bisect_left(seqs, rec.seq) - 1
    start = ((seq_nodes[after][1], lane),) if after < len(seq_nodes) else ()
    end = ((seq_nodes[before][1], lane),) if before >= 0 else ()
    return Anchor(rec, lane, start, end, ("lane", rec.warp, lane))


def successors(g, state):
    node, lane = state
    for v, e in g.succ[node].items():
        if not e["orders"]:
            continue
        if e["lane_map"] == "same":
            if lane >= 0 and (e["src_mask"] >> lane) & 1:
                yield from _arrive(g, v, lane, e["kind"])
            continue
        src = e["src_mask"]
        if (src == 0 and lane < 0) or (lane >= 0 and (src >> lane) & 1):
            dst = e["dst_mask"]
            if dst == 0:
                yield (v, -1), e["kind"]
            else:
                for m in lanes_in(dst):
                    yield from _arrive(g, v, m, e["kind"])


def _arrive(g, v, lane, kind):
    """Reaching (v, lane); at a warp sync every member lane is reached with it."""
    yield (v, lane), kind
    joins = g.nodes[v].get("joins", 0)
    if joins and (joins >> lane) & 1:
        for m in lanes_in(joins):
            if m != lane:
                yield (v, m), "warp_sync"


def expand(g, states) -> tuple:
    """`states` plus the member lanes a warp sync among them joins (in order, without repeats)."""
    out = {}
    for node, lane in states:
        for st, _ in _arrive(g, node, lane, None) if lane >= 0 else (((node, lane), None),):
            out.setdefault(st, None)
    return tuple(out)


def _is_bridge(g, node, lane, domain) -> bool:
    d = g.nodes[node]
    if d.get("op") != "fence.proxy.async" or lane < 0 or not (d.get("mask", FULL) >> lane) & 1:
        return False
    return domain in _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global"))


def search(hb, starts, targets, bridge_domain: str | None = None):
    """Breadth-first over states from `starts`; the first target reached (bridged when a domain is given)
    and the state path to it, or (None, ()).  A start that is itself a target counts (empty path)."""
    g = hb.graph
    targets = set(targets)
    frontier = deque()
    parent = {}
    for s in expand(g, starts):
        phase = 1 if bridge_domain is None or _is_bridge(g, s[0], s[1], bridge_domain) else 0
        st = (s, phase)
        if st not in parent:
            parent[st] = (None, None)
            frontier.append(st)
    while frontier:
        st = frontier.popleft()
        (node, lane), phase = st
        if phase == 1 and (node, lane) in targets:
            return _unwind(parent, st), (node, lane)
        if parent[st][0] is not None and g.nodes[node].get("transit", True) is False:
            continue        # an async operation is an end point, never a relay
        for nxt, kind in successors(g, (node, lane)):
            p = phase
            if p == 0 and _is_bridge(g, nxt[0], nxt[1], bridge_domain):
                p = 1
            ns = (nxt, p)
            if ns not in parent:
                parent[ns] = (st, kind)
                frontier.append(ns)
    return (), None


def _unwind(parent, st) -> tuple:
    out = []
    while st is not None:
        prev, kind = parent[st]
        out.append((st[0][0], st[0][1], kind))
        st = prev
    return tuple(reversed(out))


def reachable(hb, starts, bridge_domain: str | None = None) -> set:
    """Every state reachable from `starts` (forward); with a domain, only the states reached after a bridge.
    Memoized on the graph object (`hb.cache`): many pairs share a start."""
    key = (tuple(starts), bridge_domain)
    hit = hb.cache.get(key)
    if hit is not None:
        return hit
    g = hb.graph
    first = expand(g, starts)
    seen = {(s, 1 if bridge_domain is None or _is_bridge(g, s[0], s[1], bridge_domain) else 0) for s in first}
    frontier = deque(seen)
    while frontier:
        st, phase = frontier.popleft()
        if st not in first and g.nodes[st[0]].get("transit", True) is False:
            continue
        for nxt, _ in successors(g, st):
            p = 1 if phase or _is_bridge(g, nxt[0], nxt[1], bridge_domain) else 0
            if (nxt, p) not in seen:
                seen.add((nxt, p))
                frontier.append((nxt, p))
    out = {st for st, phase in seen if phase}
    hb.cache[key] = out
    return out


def order(hb, a: Anchor, b: Anchor, *, cross_proxy: bool = False, domain: str | None = None,
          own_destination: bool = False, want_path: bool = True) -> Ordering:
    """Is access `a` (earlier in the run) ordered before access `b`?"""
    ra, rb = a.record, b.record
    if a.actor == b.actor and ra.seq <= rb.seq:
        return Ordering(True, "same_actor")
    if not cross_proxy:
        need = 1 if ra.cta == rb.cta else 3
        if strength(ra) >= need and strength(rb) >= need:
            return Ordering(True, "strong_pair")
    bridged = cross_proxy and domain is not None and not own_destination
    if not a.start or not b.end:
        return Ordering(False, "no_path")
    hit = any(e in reachable(hb, a.start) for e in b.end)
    if not bridged:
        if not hit:
            return Ordering(False, "no_path")
        return Ordering(True, "path", search(hb, a.start, b.end)[0] if want_path else ())
    if any(e in reachable(hb, a.start, domain) for e in b.end):
        if not want_path:
            return Ordering(True, "bridged_path")
        bpath, _ = search(hb, a.start, b.end, bridge_domain=domain)
        fence = next((n for n, lane, _ in bpath if _is_bridge(hb.graph, n, lane, domain)), None)
        return Ordering(True, "bridged_path", bpath, fence)
    if not hit:
        return Ordering(False, "no_path")
    return Ordering(False, "no_bridge", search(hb, a.start, b.end)[0] if want_path else ())


def pair_ordering(hb, ra, la: int, rb, lb: int, want_path: bool = True) -> Ordering:
    """`order` for two access records and lanes, with the proxy rule taken from the records."""
    cross = ra.proxy != rb.proxy
    domain = {"shared": "shared", "global": "global"}.get(rb.space)
    own = cross and ra.actor >= 0 and ra.kind == "write" and rb.proxy == "generic" and \
        hb.graph.nodes.get(hb.op_node.get(ra.actor), {}).get("op", "").startswith(_BULK)
    return order(hb, anchor(hb, ra, la), anchor(hb, rb, lb), cross_proxy=cross, domain=domain,
                 own_destination=own, want_path=want_path)
