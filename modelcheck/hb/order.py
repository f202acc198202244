"""Ordering queries on the happens-before graph: is access a ordered before access b?

Assumes a `HappensBefore` from `graph.from_trace`.  A search state is (node, lane): a
lane of a warp-level node, or lane -1 at a lane-less node (generation, async operation,
completion).  Edges move states as their `lane_map` says (see `graph`); a node with a
`joins` mask (warp sync) lets any member lane continue as every member lane, a `fans` mask
(tcgen05.alloc) lets those lanes continue as every lane of the node.  An issue
edge into an async operation with `transit=False` reaches the state (op, -2): an end
point, so the issuer's history does not flow on into the operation's completion.

An access is anchored between the sync nodes of its own lane: a generic access starts
at its lane's next sync node and is reached at its lane's previous one; an async
operation's access is the operation node itself (a bulk store's source read that a
`wait_group.read` retired continues from the store's source-read milestone, which its
destination writes do not reach); a strong memory access is its own node.  Two accesses
are ordered when a state path joins the anchors — or they are the
same actor (same lane of a warp, or the same async operation) in execution order.  A
cross-proxy pair needs a *bridged* path: one passing a `fence.proxy.async` covering
the state space in one of the fence's lanes (a bulk copy's completion bridges its own
destination bytes; a tcgen05.commit carries its issuer's history, bridges included, but its
completion bridges nothing itself);
two tcgen05 operations of different warps need a path passing a
`fence::before_thread_sync` (or a commit) and then a `fence::after_thread_sync`.
Guarantees: `search` returns a fewest-edge path; `reachable` (lane masks propagated to a
fixpoint, what ordering queries use) agrees with `search` (tested).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass

from ..common.ordering import strength
from ..numsim.trace import AccessRecord
from .graph import FULL, lanes_in

_FENCE_DOMAINS = {"all": ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
                  "shared": ("shared",), "global": ("global",)}
_BULK = ("bulk", "tma", "cp.async.bulk", "clc")


@dataclass(frozen=True)
class Anchor:
    """Where an access sits in the graph: `start` states (what it precedes) and `end` states (what precedes it)."""

    record: AccessRecord
    lane: int
    start: tuple          # states from which the access's later history is reachable
    end: tuple            # states that reach the access
    actor: tuple          # ("lane", warp, lane) | ("op", op id)


@dataclass(frozen=True)
class Ordering:
    """The answer for one pair: ordered?, why, and the path (a list of (node, lane, edge kind into it))."""

    ordered: bool
    reason: str           # same_actor | strong_pair | path | gated_path | no_path | no_bridge | no_tc_fence
    path: tuple = ()
    bridge: str | None = None        # the first gate node (fence.proxy.async, tcgen05 fence) on a gated path


def anchor(hb, rec, lane: int) -> Anchor:
    """The graph position of access record `rec` for `lane` (for an async operation's access: its node)."""
    if rec.actor >= 0:
        node = hb.op_node.get(rec.actor)
        if node is None:
            return Anchor(rec, lane, (), (), ("op", rec.actor))
        # a bulk store's source read is over at its source-read milestone, when a wait_group.read retired it
        read = hb.read_node.get(rec.actor) if rec.kind == "read" else None
        return Anchor(rec, lane, ((read or node, -1),), ((node, -1), (node, -2)), ("op", rec.actor))
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
    if lane == -2:
        return          # an async operation reached by its issue: an end point
    for v, e in g.succ[node].items():
        po = e.get("po_mask", 0)
        if po and lane >= 0 and (po >> lane) & 1:
            yield from _arrive(g, v, lane, "program_order")
        if not e["orders"]:
            continue
        if e["kind"] == "issue" and g.nodes[v].get("transit", True) is False:
            if lane >= 0 and (e["src_mask"] >> lane) & 1:
                yield (v, -2), "issue"
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
    """Reaching (v, lane); at a warp sync every member lane is reached with it, at a `fans` node
    (tcgen05.alloc) every lane of the node from a fanning lane."""
    yield (v, lane), kind
    d = g.nodes[v]
    joins = d.get("joins", 0) | (d.get("mask", 0) if (d.get("fans", 0) >> lane) & 1 else 0)
    if joins and (joins >> lane) & 1:
        for m in lanes_in(joins):
            if m != lane:
                yield (v, m), "warp_sync" if d.get("joins") else "alloc_store"


def expand(g, states) -> tuple:
    """`states` plus the member lanes a warp sync among them joins (in order, without repeats)."""
    out: dict[tuple, None] = {}
    for node, lane in states:
        for st, _ in _arrive(g, node, lane, None) if lane >= 0 else (((node, lane), None),):
            out.setdefault(st, None)
    return tuple(out)


def passes(g, node, lane, gate: str) -> bool:
    """Does state (node, lane) pass `gate`: "proxy:<domain>" (a fence.proxy.async covering the domain, in one
    of its lanes), "tc_before" (tcgen05.fence::before_thread_sync, or a commit's completion, which implies
    it), "tc_after" (tcgen05.fence::after_thread_sync)?"""
    d = g.nodes[node]
    op = d.get("op")
    if gate == "tc_before" and d.get("kind") == "completion":
        return d.get("op_kind") == "tcgen05.commit"
    if lane < 0 or not (d.get("mask", FULL) >> lane) & 1:
        return False
    if gate.startswith("proxy:"):
        return op == "fence.proxy.async" and \
            gate[6:] in _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global"))
    return op == _GATE_OPS.get(gate)


_GATE_OPS = {"tc_before": "tcgen05.fence::before_thread_sync", "tc_after": "tcgen05.fence::after_thread_sync"}


def _advance(g, state, phase: int, gates) -> int:
    return phase + 1 if phase < len(gates) and passes(g, state[0], state[1], gates[phase]) else phase


def search(hb, starts, targets, gates=()):
    """Breadth-first over states from `starts`: the shortest state path to a target that passes every gate
    in order (see `passes`), and the target; or ((), None).  A start that is itself a target counts."""
    g = hb.graph
    targets = set(targets)
    frontier = deque()
    parent = {}
    for s in expand(g, starts):
        st = (s, _advance(g, s, 0, gates))
        if st not in parent:
            parent[st] = (None, None)
            frontier.append(st)
    done = len(gates)
    while frontier:
        st = frontier.popleft()
        (node, lane), phase = st
        if phase == done and (node, lane) in targets:
            return _unwind(parent, st), (node, lane)
        for nxt, kind in successors(g, (node, lane)):
            ns = (nxt, _advance(g, nxt, phase, gates))
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


_LANES = 0xFFFFFFFF
_LL = 1 << 32           # the lane-less state (lane -1)
_END = 1 << 33          # an async operation reached by its issue (lane -2)


def _bit(lane: int) -> int:
    return _LL if lane == -1 else _END if lane == -2 else 1 << lane


def reachable(hb, starts, gates=()) -> dict:
    """node -> bitmask of the states reachable from `starts` on a path that passed every gate in order (bits
    0-31 lanes, bit 32 lane -1, bit 33 lane -2).  The same rules as `successors`, propagated as lane masks
    to a fixpoint; memoized on the graph object (`hb.cache`): many pairs share a start."""
    gates = tuple(gates)
    key = (tuple(starts), gates)
    hit = hb.cache.get(key)
    if hit is not None:
        return hit
    g = hb.graph
    nphase = len(gates) + 1
    reach: dict = {}
    work: deque[tuple] = deque()

    def add(node, phase, mask):
        d = g.nodes[node]
        joins = d.get("joins", 0)
        if joins and mask & joins:
            mask |= joins
        if mask & d.get("fans", 0):
            mask |= d["mask"] & _LANES
        while True:
            have = reach.setdefault(node, [0] * nphase)
            new = mask & ~have[phase]
            if not new:
                return
            have[phase] |= new
            work.append((node, phase, new))
            if phase + 1 >= nphase:
                return
            moved = _gate_mask(d, new, gates[phase])
            if not moved:
                return
            phase, mask = phase + 1, moved

    for node, lane in starts:
        add(node, 0, _bit(lane))
    while work:
        node, phase, mask = work.popleft()
        live = mask & ~_END
        if not live:
            continue
        for v, e in g.succ[node].items():
            po = e.get("po_mask", 0) & live
            if po:
                add(v, phase, po)
            if not e["orders"]:
                continue
            src = e["src_mask"]
            if e["kind"] == "issue" and g.nodes[v].get("transit", True) is False:
                if live & src:
                    add(v, phase, _END)
                continue
            if e["lane_map"] == "same":
                out = live & src & _LANES
            else:
                trigger = (live & src) if src else (live & _LL)
                out = (e["dst_mask"] or _LL) if trigger else 0
            if out:
                add(v, phase, out)
    out = {n: masks[-1] for n, masks in reach.items() if masks[-1]}
    hb.cache[key] = out
    return out


def _gate_mask(d: dict, mask: int, gate: str) -> int:
    """The part of `mask` (states at a node with attributes `d`) that passes `gate` (see `passes`)."""
    if gate == "tc_before" and d.get("kind") == "completion":
        return mask & _LL if d.get("op_kind") == "tcgen05.commit" else 0
    op = d.get("op")
    if gate.startswith("proxy:"):
        ok = op == "fence.proxy.async" and gate[6:] in _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global"))
    else:
        ok = op == _GATE_OPS.get(gate)
    return mask & d.get("mask", FULL) & _LANES if ok else 0


def _hits(reach: dict, states) -> bool:
    return any(reach.get(n, 0) & _bit(lane) for n, lane in states)


def states_of(reach: dict):
    """The (node, lane) states of a `reachable` result."""
    for n, m in reach.items():
        for lane in lanes_in(m & _LANES):
            yield n, lane
        if m & _LL:
            yield n, -1
        if m & _END:
            yield n, -2


def order(hb, a: Anchor, b: Anchor, *, cross_proxy: bool = False, domain: str | None = None,
          own_destination: bool = False, tcgen05: bool = False, want_path: bool = True) -> Ordering:
    """Is access `a` (earlier in the run) ordered before access `b`?  `tcgen05`: both are tcgen05 operations
    of different warps, ordered only through fence::before_thread_sync -> sync -> fence::after_thread_sync."""
    ra, rb = a.record, b.record
    if a.actor == b.actor and ra.seq <= rb.seq:
        return Ordering(True, "same_actor")
    if not cross_proxy:
        need = 1 if ra.cta == rb.cta else 3
        if strength(ra) >= need and strength(rb) >= need:
            return Ordering(True, "strong_pair")
    gates: tuple[str, ...] = ()
    if cross_proxy and domain is not None and not own_destination:
        gates = (f"proxy:{domain}",)
    elif tcgen05:
        gates = ("tc_before", "tc_after")
    if not a.start or not b.end:
        return Ordering(False, "no_path")
    hit = _hits(reachable(hb, a.start), b.end)
    if not gates:
        if not hit:
            return Ordering(False, "no_path")
        return Ordering(True, "path", search(hb, a.start, b.end)[0] if want_path else ())
    if _hits(reachable(hb, a.start, gates), b.end):
        if not want_path:
            return Ordering(True, "gated_path")
        gpath, _ = search(hb, a.start, b.end, gates)
        fence = next((n for n, lane, _ in gpath if passes(hb.graph, n, lane, gates[0])), None)
        return Ordering(True, "gated_path", gpath, fence)
    if not hit:
        return Ordering(False, "no_path")
    return Ordering(False, "no_bridge" if cross_proxy else "no_tc_fence",
                    search(hb, a.start, b.end)[0] if want_path else ())


def pair_ordering(hb, ra, la: int, rb, lb: int, want_path: bool = True) -> Ordering:
    """`order` for two access records and lanes, with the proxy rule taken from the records."""
    cross = ra.proxy != rb.proxy
    domain = {"shared": "shared", "global": "global"}.get(rb.space)
    own = cross and ra.actor >= 0 and ra.kind == "write" and rb.proxy == "generic" and \
        hb.graph.nodes.get(hb.op_node.get(ra.actor), {}).get("op", "").startswith(_BULK)
    tc = ra.warp != rb.warp and _is_tcgen05(hb, ra) and _is_tcgen05(hb, rb)
    return order(hb, anchor(hb, ra, la), anchor(hb, rb, lb), cross_proxy=cross, domain=domain,
                 own_destination=own, tcgen05=tc, want_path=want_path)


def _is_tcgen05(hb, rec) -> bool:
    """A tcgen05 operation's access (or a dealloc taken as a write of its allocation, as Racecheck does)."""
    if rec.actor >= 0:
        node = hb.op_node.get(rec.actor)
        return node is not None and str(hb.graph.nodes[node].get("op", "")).startswith("tcgen05")
    sites = hb.run.sites
    return rec.site is not None and 0 <= rec.site < len(sites) and sites[rec.site].op == "tcgen05.dealloc"
