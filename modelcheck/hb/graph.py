"""Build the happens-before graph of one NumSim run (docs/architecture.md#happens-before-graph-and-replay).

Assumes: a trace recorded in execution order (sync events, and access records when
they were recorded) and the run's `RunInfo`.  Guarantees: a `networkx.DiGraph` whose
nodes are the run's synchronization operations, barrier generations, async operations
and their completions (plus the strong memory accesses that synchronize through
memory, and the blocked waits of a deadlocked run), and whose edges carry a `kind`
from `EDGE_KINDS`, whether they `orders` (carry happens-before, docs/semantics.md#happens-before), and how
lanes travel along them:

- `lane_map == "same"` (program order): lane l at the source continues as lane l, for
  the lanes in `src_mask`;
- `lane_map == "any"`: any lane in `src_mask` (or the lane-less source, mask 0) reaches
  every lane in `dst_mask` (or the lane-less target, mask 0);
- `po_mask` (on an edge of another kind between two consecutive nodes of a warp): the
  program order of those lanes, carried as with `"same"`.

Lanes matter because there is no implicit order between the lanes of a warp: an
elected lane's arrive releases only that lane's history, and a wait acquires only
for the lanes that executed it.  A node with a `joins` mask (a warp sync) orders its
member lanes with each other; one with `fans` (a tcgen05.alloc) orders those lanes before
all of its lanes.  An async copy is not a transit node (`transit=False`):
its issue orders the issuer's history before the copy's accesses, and its completion
publishes the copy's own accesses, but not the issuer's history (checker-semantics §5.4
rule 6); a `tcgen05.commit` does publish its issuer's history at the commit, and so does
`st.async`, whose complete-tx is a release at cluster scope (PTX ISA 9.7.9.12).  The
tcgen05 operations of one thread that the PTX pipelines (mma->mma, cp->mma, shift->mma,
shift->cp, mma->shift) are ordered in issue order (`tc_pipeline` edges).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ..common import fence_sc
from ..common.ordering import ACQUIRING_ORDERS, GROUP_FAMILY, PIPELINED_AFTER, RELEASING_ORDERS, strength
from ..numsim import Trace
from ..common.ranges import id_ranges

# async operations whose completion publishes the issuing lane's history (not only their own accesses)
_TRANSIT = ("tcgen05.commit", "st.async")

FULL = 0xFFFFFFFF

# edge kind -> (carries happens-before by default, meaning)
EDGE_KINDS = {
    "program_order": (True, "the next synchronization operation of the same lanes of a warp"),
    "arrive": (True, "an mbarrier arrive (release) puts the arriving lanes' history into its generation"),
    "expect_tx": (False, "an expect_tx raises the generation's transaction count (no release)"),
    "complete_tx": (True, "an async copy's completion lands its bytes on the generation"),
    "deferred_arrive": (True, "a tcgen05.commit / cp.async.mbarrier.arrive arrival lands on the generation"),
    "observe": (True, "a wait observed the completed generation (acquire: the waiting lanes only)"),
    "observe_completion": (True, "a relaxed wait observes only the async completions of the generation"),
    "init": (False, "mbarrier.init starts generation 0 of a new epoch"),
    "inval": (False, "mbarrier.inval ends the barrier's current epoch"),
    "next_generation": (False, "generation g completed; g + 1 begins"),
    "bar_arrive": (True, "a named-barrier contribution (bar.sync / bar.arrive / bar.red) releases into its generation"),
    "bar_release": (True, "the completed named-barrier generation releases every bar.sync participant"),
    "issue": (True, "the issuing lane's history happens before the async operation's accesses"),
    "complete": (True, "the async operation completed"),
    "covers": (True, "a commit / cp.async.mbarrier.arrive completes this earlier async operation too"),
    "group_wait": (True, "the issuing lane's wait_group / tcgen05.wait retired the async operation (wait_group.read: "
                         "a bulk store's source reads only)"),
    "source_read": (True, "a bulk store finished reading its source before it completed"),
    "tc_pipeline": (True, "pipelined tcgen05 operations of one thread execute in issue order"),
    "reads_from": (True, "a strong read read a release (or fenced relaxed) write: release/acquire through memory"),
    "sc_order": (True, "a fence.sc synchronizes with a later one when the run forces their order (a morally "
                       "strong access after the first communicates with one before the second)"),
    "awaits": (False, "a blocked wait awaits this generation (deadlocked run)"),
}
NODE_KINDS = ("sync", "generation", "async_op", "completion", "memory", "blocked")


def mask_of(lanes) -> int:
    """A 32-lane bool mask (None = all lanes) as an int bitmask."""
    if lanes is None:
        return FULL
    return int(np.packbits(np.asarray(lanes, dtype=np.uint8)[:32], bitorder="little").view("<u4")[0])


def lanes_in(mask: int) -> list[int]:
    return [k for k in range(32) if (mask >> k) & 1]


def lane_text(mask: int) -> str:
    """"0-31", "0", "0,4-7": the lanes of a mask, compactly."""
    return id_ranges(lanes_in(mask))


class Recorder(Trace):
    """A Trace that also keeps the run's `RunInfo` (sites, barrier names)."""

    def __init__(self, accesses: bool = True):
        super().__init__()
        self.wants_accesses = accesses
        self.run = None

    def on_start(self, run) -> None:
        self.run = run


@dataclass
class HappensBefore:
    """The graph plus what explanations need: where each lane's accesses sit between its sync nodes."""

    graph: nx.DiGraph
    run: object                                     # numsim RunInfo
    trace: Trace
    result: object = None                           # NumSimResult, when built from a run
    lane_nodes: dict = field(default_factory=dict)  # (warp, lane) -> [(seq, node)] in execution order
    access_node: dict = field(default_factory=dict)  # access record seq -> node (strong memory accesses)
    op_node: dict = field(default_factory=dict)     # async op id -> node
    read_node: dict = field(default_factory=dict)   # bulk store id -> its source-read milestone (wait_group.read)
    cache: dict = field(default_factory=dict, repr=False)   # memoized reachability (modelcheck.hb.order)

    @property
    def func(self):
        return self.run.func if self.run is not None else None


def from_trace(trace: Trace, run=None, result=None) -> HappensBefore:
    """The graph of a finished trace (`run`: its RunInfo; a `Recorder` keeps it itself)."""
    run = run if run is not None else getattr(trace, "run", None)
    if run is None:
        raise ValueError("from_trace needs the run's RunInfo: record with modelcheck.hb.Recorder or pass run=")
    return _Builder(trace, run, result).build()


class _Builder:
    def __init__(self, trace, run, result):
        self.trace = trace
        self.run = run
        self.result = result
        self.g = nx.DiGraph(kernel=run.func.name, warps=run.warps, ctas=run.ctas)
        self.hb = HappensBefore(self.g, run, trace, result)
        self.cluster_launch = int(np.prod(getattr(run, "cluster", (1, 1, 1)))) > 1
        self.last: dict[tuple, str] = {}            # (warp, lane) -> last node
        self.epoch: dict[tuple, int] = {}           # (cta, addr) -> current epoch
        self.gens: dict[tuple, str] = {}            # generation key -> node
        self.completions: dict[tuple, list] = {}    # mbarrier generation key -> completion nodes
        self.relaxed_waits: list = []               # (generation key, wait node)
        self.groups: dict[tuple, dict] = {}         # (warp, lane, family) -> {"open": [ops], "committed": [[ops]]}
        self.last_fence: dict[tuple, str] = {}      # (warp, lane) -> last fence.acq_rel / fence.sc node
        self.pending_acquire: dict[tuple, list] = {}  # (warp, lane) -> [(release node, release lane)]
        self.sc_candidates = fence_sc.candidates(trace.sync, trace.accesses)   # fence.sc pairs the run may force
        self.last_commit: dict[tuple, str] = {}     # (warp, lane) -> its latest tcgen05.commit completion
        self.tc_latest: dict[tuple, dict] = {}      # (warp, lane) -> tcgen05 op kind -> its latest op node

    # ------------------------------------------------------------------ nodes and edges
    def _cta(self, cta: int) -> str:
        return f"cta{cta} " if self.run.ctas > 1 else ""

    def _site_attrs(self, site) -> dict:
        if site is None or site < 0 or site >= len(self.run.sites):
            return {}
        s = self.run.sites[site]
        out = {"site": int(site), "op_name": s.op, "source": s.text.strip()}
        if s.span is not None:
            out["span"] = f"{s.span.file}:{s.span.line}:{s.span.col}"
        return out

    def node(self, key: str, kind: str, **attrs) -> str:
        clean = {k: v for k, v in attrs.items() if v is not None}
        self.g.add_node(key, kind=kind, **clean)
        return key

    def edge(self, u: str, v: str, kind: str, *, lane_map: str = "any", src: int = 0, dst: int = 0,
             orders: bool | None = None, **attrs) -> None:
        if orders is None:
            orders = EDGE_KINDS[kind][0]
        data = self.g.get_edge_data(u, v)
        if data is not None:
            # one edge per node pair: program order between the same two nodes rides along as `po_mask`
            if kind == "program_order" and data["kind"] != kind:
                data["po_mask"] = data.get("po_mask", 0) | src
                return
            if data["kind"] == "program_order" and kind != "program_order":
                attrs["po_mask"] = data["src_mask"] | data.get("po_mask", 0)
            else:
                data["src_mask"] |= src
                data["dst_mask"] |= dst
                data["orders"] = data["orders"] or bool(orders)
                return
        self.g.add_edge(u, v, kind=kind, orders=bool(orders), lane_map=lane_map, src_mask=int(src),
                        dst_mask=int(dst), **attrs)

    def program_order(self, node: str, warp: int, mask: int, seq: int) -> None:
        """Lane-accurate program order: each lane of `mask` continues from its own last node."""
        by_prev: dict[str, int] = {}
        for lane in lanes_in(mask):
            prev = self.last.get((warp, lane))
            if prev is not None:
                by_prev[prev] = by_prev.get(prev, 0) | (1 << lane)
            self.last[(warp, lane)] = node
            self.hb.lane_nodes.setdefault((warp, lane), []).append((seq, node))
        for prev, m in by_prev.items():
            self.edge(prev, node, "program_order", lane_map="same", src=m, dst=m)

    def generation(self, barrier, cta: int, generation: int) -> str:
        kind, _, ident = barrier
        if kind == "mbarrier":
            epoch = self.epoch.get((cta, ident), 0)
            key = ("mbarrier", cta, ident, epoch, generation)
            name = self.run.name_of(ident)
        elif kind == "cluster":     # the cluster barrier of cluster `cta` (its id)
            epoch = 0
            key = ("cluster", cta, ident, 0, generation)
            name = f"cluster {cta} barrier"
        else:
            epoch = 0
            key = ("named", cta, ident, 0, generation)
            name = f"named barrier {ident}"
        node = self.gens.get(key)
        if node is None:
            node = f"gen:{kind}:{cta}:{ident:#x}:{epoch}:{generation}" if kind == "mbarrier" else \
                f"gen:{kind}:{cta}:{ident}:{generation}"
            self.gens[key] = self.node(node, "generation", barrier_kind=kind, barrier=name, cta=cta,
                                       address=int(ident), epoch=epoch, generation=int(generation),
                                       label=f"{self._cta(cta)}{name} gen {generation}")
            prev = self.gens.get(key[:4] + (generation - 1,))
            if prev is not None:
                self.edge(prev, node, "next_generation")
        return node

    # ------------------------------------------------------------------ the trace
    def build(self) -> HappensBefore:
        records = self.trace.accesses
        strong = self._strong_accesses(records)
        sync = self.trace.sync
        i = j = 0
        while i < len(sync) or j < len(strong):
            if j >= len(strong) or (i < len(sync) and sync[i].seq < strong[j][1].seq):
                self._event(sync[i])
                i += 1
            else:
                self._memory(*strong[j])
                j += 1
        for key, wait in self.relaxed_waits:
            for c in self.completions.get(key, ()):
                self.edge(c, wait, "observe_completion", dst=self.g.nodes[wait]["mask"])
        self._sc_order()
        self._blocked()
        return self.hb

    def _sc_order(self) -> None:
        """fence.sc -> fence.sc edges for the pairs the run forces (`common.fence_sc`), in the later fence's
        execution order: a candidate's happens-before condition is asked of the graph with the earlier
        fence.sc edges in (as Racecheck's knowledge at that write has them; a later edge cannot reach it)."""
        if not self.sc_candidates:
            return
        from .order import pair_ordering      # order builds on this module: imported when first needed
        records = self.trace.accesses
        for (seq, lane), cands in sorted(self.sc_candidates.items()):
            for c in cands:
                if c.needs is not None:
                    (wr, wl), (br, bl) = c.needs
                    if not pair_ordering(self.hb, records[wr], wl, records[br], bl, want_path=False).ordered:
                        continue
                self.edge(f"ev{c.f1[0]}", f"ev{seq}", "sc_order", src=1 << c.f1[1], dst=1 << lane)
                self.hb.cache.clear()           # memoized reachability predates the edge

    def _event(self, ev) -> None:
        d = ev.details
        kind = ev.kind
        if kind == "mbarrier.poll":
            return          # a poll that found nothing orders nothing
        if kind == "warp.exit" and not self.cluster_launch:
            return          # an exit orders something only for a peer CTA's shared memory (cluster launches)
        if d.get("async") or kind == "async.complete":
            self._completion(ev)
            return
        mask = mask_of(ev.lanes)
        if kind == "mbarrier.arrive" and d.get("lanes") is not None:
            mask = sum(1 << k for k in d["lanes"])
        elif kind in ("async.issue", "mbarrier.init") and d.get("lane") is not None:
            mask = 1 << int(d["lane"])
        key = f"ev{ev.seq}"
        attrs = dict(self._site_attrs(ev.site), op=kind, warp=ev.warp, cta=ev.cta, mask=mask,
                     lanes=lane_text(mask), iters=",".join(map(str, ev.iters)), seq=ev.seq)
        if ev.barrier is not None:
            kind0 = ev.barrier[0]
            attrs["barrier"] = self.run.name_of(ev.barrier[2]) if kind0 == "mbarrier" else \
                f"cluster {ev.barrier[1]} barrier" if kind0 == "cluster" else f"named barrier {ev.barrier[2]}"
        if ev.generation is not None:
            attrs["generation"] = int(ev.generation)
        if ev.parity is not None:
            attrs["parity"] = int(ev.parity)
        for extra in ("space", "scope", "order"):
            if isinstance(d.get(extra), str):
                attrs[extra] = d[extra]
        if kind == "warp_sync":
            attrs["joins"] = int(d.get("membermask", FULL)) & mask
        elif kind == "tcgen05.alloc":
            attrs["fans"] = 1 & mask     # lane 0's address store reaches every lane of the warp (racecheck/flow.py)
        if kind == "mbarrier.init":
            self.epoch[(ev.barrier[1], ev.barrier[2])] = int(d.get("epoch", 0))
        attrs["label"] = self._label(kind, ev, attrs)
        self.node(key, "sync", **attrs)
        self.program_order(key, ev.warp, mask, ev.seq)
        self._sync_edges(ev, key, mask)

    @staticmethod
    def _label(kind, ev, attrs) -> str:
        text = f"w{ev.warp} {kind}"
        if "barrier" in attrs:
            text += f" {attrs['barrier']}"
        if "generation" in attrs:
            text += f" g{attrs['generation']}"
        if attrs["mask"] != FULL:
            text += f" [lanes {attrs['lanes']}]"
        return text

    def _sync_edges(self, ev, key: str, mask: int) -> None:
        kind, d, b = ev.kind, ev.details, ev.barrier
        if kind == "mbarrier.init":
            self.edge(key, self.generation(b, b[1], 0), "init", src=mask)
        elif kind == "mbarrier.inval":
            self.edge(key, self.generation(b, b[1], ev.generation or 0), "inval", src=mask)
        elif kind == "mbarrier.arrive":
            self.edge(key, self.generation(b, b[1], ev.generation), "arrive", src=mask,
                      orders=d.get("order", "release") != "relaxed")
        elif kind in ("mbarrier.expect_tx", "mbarrier.complete_tx"):
            self.edge(key, self.generation(b, b[1], ev.generation), "expect_tx" if kind.endswith("expect_tx")
                      else "complete_tx", src=mask, orders=False)
        elif kind == "mbarrier.wait":
            if ev.generation is None:
                return      # the vacuous parity-1 wait after init observes nothing
            gen = self.generation(b, b[1], ev.generation)
            if d.get("order", "acquire") == "relaxed":
                self.edge(gen, key, "observe", dst=mask, orders=False)
                self.relaxed_waits.append((self._gen_key(b, b[1], ev.generation), key))
            else:
                self.edge(gen, key, "observe", dst=mask)
        elif kind in ("bar.sync", "bar.arrive", "bar.red"):
            self.edge(key, self.generation(b, b[1], ev.generation), "bar_arrive", src=mask)
        elif kind == "bar.wait":
            self.edge(self.generation(b, b[1], ev.generation), key, "bar_release", dst=mask)
        elif kind == "cluster.arrive":
            # a relaxed arrive orders no memory (Racecheck: only fenced tcgen05 work)
            self.edge(key, self.generation(b, b[1], ev.generation), "bar_arrive", src=mask,
                      orders=d.get("order", "release") != "relaxed")
        elif kind == "cluster.wait":
            self.edge(self.generation(b, b[1], ev.generation), key, "bar_release", dst=mask,
                      orders=d.get("order", "acquire") != "relaxed")
        elif kind == "async.issue" and d.get("op") is not None:
            self._issue(ev, key, mask)
        elif kind in ("bulk.commit_group", "cp.async.commit_group"):
            fam = kind.split(".commit")[0]
            for lane in lanes_in(mask):
                st = self._groups(ev.warp, lane, fam)
                st["committed"].append(st["open"])
                st["open"] = []
        elif kind in ("bulk.wait_group", "cp.async.wait_group"):
            self._wait_group(ev, key, mask, kind.split(".wait")[0])
        elif kind == "wgmma.wait_group":
            for op in d.get("ops", ()):
                src = self.hb.op_node.get(op)
                if src is not None:
                    self.edge(self.g.nodes[src].get("completion", src), key, "group_wait", dst=mask)
        elif kind.startswith("tcgen05.wait::"):
            for op in d.get("ops", ()):
                src = self.hb.op_node.get(op)
                if src is not None:
                    self.edge(src, key, "group_wait", dst=mask)
        elif kind in ("fence.acq_rel", "fence.sc"):
            for lane in lanes_in(mask):
                for rel, rel_lane in self.pending_acquire.pop((ev.warp, lane), []):
                    self.edge(rel, key, "reads_from", src=1 << rel_lane if rel_lane >= 0 else 0, dst=1 << lane)
                self.last_fence[(ev.warp, lane)] = key

    def _gen_key(self, barrier, cta, generation):
        return ("mbarrier", cta, barrier[2], self.epoch.get((cta, barrier[2]), 0), generation)

    def _groups(self, warp, lane, fam) -> dict:
        return self.groups.setdefault((warp, lane, fam), {"open": [], "committed": []})

    def _issue(self, ev, key: str, mask: int) -> None:
        d = ev.details
        op = int(d["op"])
        opkind = d.get("kind", "async")
        lane = int(d["lane"]) if d.get("lane") is not None else -1
        node = self.node(f"op{op}", "async_op", op=opkind, op_id=op, warp=ev.warp, cta=ev.cta,
                         lane=lane, iters=",".join(map(str, ev.iters)), transit=opkind in _TRANSIT,
                         label=f"w{ev.warp} {opkind} #{op}" + (f" lane {lane}" if lane >= 0 else ""),
                         **self._site_attrs(ev.site))
        if ev.barrier is not None:
            self.g.nodes[node]["barrier"] = self.run.name_of(ev.barrier[2])
        if ev.generation is not None:
            self.g.nodes[node]["generation"] = int(ev.generation)
        self.hb.op_node[op] = node
        self.edge(key, node, "issue", src=mask)
        fam = GROUP_FAMILY.get(opkind)
        if fam is not None and lane >= 0:
            self._groups(ev.warp, lane, fam)["open"].append(op)
        if opkind in PIPELINED_AFTER:
            latest = self.tc_latest.setdefault((ev.warp, lane), {})
            for before in PIPELINED_AFTER[opkind]:
                if before in latest:
                    self.edge(latest[before], node, "tc_pipeline")
            latest[opkind] = node

    def _wait_group(self, ev, key: str, mask: int, fam: str) -> None:
        keep = int(ev.count or 0)
        # wait_group.read retires only a bulk store's reads of its source: its groups stay for a full wait, and the
        # edge leaves the store's source-read milestone, which its destination writes do not reach
        read_only = fam == "bulk" and bool((ev.details or {}).get("read"))
        for lane in lanes_in(mask):
            st = self._groups(ev.warp, lane, fam)
            groups = st["committed"]
            if fam == "cp.async" and keep == 0 and st["open"]:
                groups = groups + [st["open"]]          # wait_all commits first
                st["open"] = []
            retire, rest = (groups[:-keep], groups[-keep:]) if keep else (groups, [])
            if not read_only:
                st["committed"] = rest
            for group in retire:
                for op in group:
                    src = self._source_read(op, ev) if read_only else \
                        self.g.nodes[self.hb.op_node[op]].get("completion", self.hb.op_node[op])
                    self.edge(src, key, "group_wait", dst=1 << lane)

    def _source_read(self, op: int, ev) -> str:
        """The milestone "bulk store `op` has read its source" (made at the first wait_group.read retiring it): the
        store's source reads are anchored to it (hb.order.anchor), and it precedes the store's completion."""
        node = self.hb.read_node.get(op)
        if node is None:
            opn = self.hb.op_node[op]
            d = self.g.nodes[opn]
            node = self.node(f"{opn}.read", "completion", op="bulk.source_read", op_kind=d.get("op", ""),
                             warp=d.get("warp"), cta=d.get("cta"), seq=ev.seq, iters=d.get("iters"),
                             label=f"{d.get('op', 'bulk')} #{op} read its source",
                             **{k: d[k] for k in ("site", "op_name", "source", "span") if k in d})
            self.hb.read_node[op] = node
            done = d.get("completion")
            if done is not None:
                self.edge(node, done, "source_read")
        return node

    def _completion(self, ev) -> None:
        d = ev.details
        op = d.get("op")
        key = f"ev{ev.seq}"
        kind = ev.kind
        self.node(key, "completion", op=kind, op_kind=d.get("kind", ""), warp=ev.warp, cta=ev.cta, seq=ev.seq,
                  iters=",".join(map(str, ev.iters)), generation=ev.generation,
                  label=f"{d.get('kind') or kind} #{op} completes", **self._site_attrs(ev.site))
        src = self.hb.op_node.get(op) if op is not None else None
        if src is not None:
            self.edge(src, key, "complete")
            self.g.nodes[src]["completion"] = key
            if op in self.hb.read_node:
                self.edge(self.hb.read_node[op], key, "source_read")
        if ev.barrier is None or ev.barrier[0] != "mbarrier":
            return
        gen = self.generation(ev.barrier, ev.barrier[1], ev.generation)
        self.g.nodes[key]["barrier"] = self.run.name_of(ev.barrier[2])
        self.edge(key, gen, "complete_tx" if kind == "mbarrier.complete_tx" else "deferred_arrive")
        self.completions.setdefault(self._gen_key(ev.barrier, ev.barrier[1], ev.generation), []).append(key)
        if d.get("kind") == "tcgen05.commit":
            # a commit tracks every earlier mma/cp/shift of its thread: the ones since the previous commit
            # (`ops`) directly, the older ones through the previous commit's completion
            for covered in d.get("ops", ()) or ():
                if covered in self.hb.op_node:
                    self.edge(self.hb.op_node[covered], key, "covers")
            lane_key = (ev.warp, int(d.get("lane", 0)))
            prev = self.last_commit.get(lane_key)
            if prev is not None:
                self.edge(prev, key, "covers")
            self.last_commit[lane_key] = key
        if d.get("kind") == "cp.async.mbarrier.arrive" and op is not None:
            lane = int(d.get("lane", 0))
            st = self._groups(ev.warp, lane, "cp.async")
            for o in st["open"] + [o for g in st["committed"] for o in g]:
                if o < op:
                    self.edge(self.hb.op_node[o], key, "covers")

    # ------------------------------------------------------------------ memory synchronization
    def _strong_accesses(self, records) -> list:
        """(index, record) of the generic accesses that synchronize through memory, with reads-from found."""
        self.reads_from: dict[int, list] = {}
        interest: dict[tuple, None] = {}
        out = []
        for i, r in enumerate(records):
            if r.actor >= 0 or r.order == "weak":
                continue
            acquiring = r.kind in ("read", "rmw") and r.order in ACQUIRING_ORDERS
            releasing = r.kind in ("write", "rmw") and r.order in RELEASING_ORDERS
            if acquiring or releasing:
                out.append((i, r))
            if acquiring:
                for off in r.lane_offsets().values():
                    for b in range(off, off + r.size):
                        interest[(r.alloc, b)] = None
        if not interest:
            return out
        last_writer: dict[tuple, tuple] = {}
        for i, r in enumerate(records):
            acquiring = r.actor < 0 and r.kind in ("read", "rmw") and r.order in ACQUIRING_ORDERS
            if acquiring:
                got: list[tuple] = []
                for lane, off in r.lane_offsets().items():
                    seen = {last_writer[(r.alloc, b)] for b in range(off, off + r.size) if (r.alloc, b) in last_writer}
                    got.extend((t, wl, lane) for t, wl in sorted(seen))
                self.reads_from[i] = got
            if r.kind in ("write", "rmw"):
                for lane, off in r.lane_offsets().items():
                    for b in range(off, off + r.size):
                        if (r.alloc, b) in interest:
                            last_writer[(r.alloc, b)] = (i, lane)
        return out

    def _memory(self, i: int, rec) -> None:
        mask = mask_of(rec.lanes)
        key = f"acc{rec.seq}"
        self.node(key, "memory", op=f"{rec.kind}.{rec.order}", warp=rec.warp, cta=rec.cta, mask=mask,
                  lanes=lane_text(mask), iters=",".join(map(str, rec.iters)), seq=rec.seq, scope=rec.scope,
                  allocation=rec.alloc_name, label=f"w{rec.warp} {rec.kind}.{rec.order}.{rec.scope} {rec.alloc_name}",
                  **self._site_attrs(rec.site))
        self.hb.access_node[rec.seq] = key
        self.program_order(key, rec.warp, mask, rec.seq)
        records = self.trace.accesses
        for t, wl, lane in self.reads_from.get(i, ()):
            w = records[t]
            need = 1 if w.cta == rec.cta else 3
            if strength(w) < need or strength(rec) < need:
                continue            # scopes do not cover both actors: no edge (Racecheck: scope_mismatch)
            if w.order in ("release", "acq_rel"):
                src, src_lane = self.hb.access_node.get(w.seq), wl
            elif w.order in ("relaxed", "volatile"):
                src, src_lane = self._fence_before(w.warp, wl, w.seq), wl
            else:
                src = None
            if src is None:
                continue
            if rec.order in ("acquire", "acq_rel"):
                self.edge(src, key, "reads_from", src=1 << src_lane, dst=1 << lane)
            else:   # relaxed read: acquires at the lane's next fence.acq_rel / fence.sc
                self.pending_acquire.setdefault((rec.warp, lane), []).append((src, src_lane))

    def _fence_before(self, warp: int, lane: int, seq: int) -> str | None:
        best = None
        for s, node in self.hb.lane_nodes.get((warp, lane), ()):
            if s >= seq:
                break
            if self.g.nodes[node].get("op") in ("fence.acq_rel", "fence.sc"):
                best = node
        return best

    # ------------------------------------------------------------------ a deadlocked run
    def _blocked(self) -> None:
        res = self.result
        if res is None:
            return
        for diag in res.diagnostics:
            if diag.kind != "deadlock":
                continue
            for b in diag.details.get("blocked", []):
                warp = b["warp"]
                key = f"blocked:w{warp}"
                self.node(key, "blocked", op="blocked", warp=warp, cta=b.get("cta", 0), awaits=b.get("awaits", "?"),
                          state=b.get("state"), iters=",".join(map(str, b.get("iters", ()))), mask=FULL,
                          lanes=lane_text(FULL), label=f"w{warp} BLOCKED: {b.get('awaits', '?')}",
                          **self._site_attrs(b.get("site")))
                self.program_order(key, warp, FULL, 1 << 62)
                gen = self._awaited(b)
                if gen is not None:
                    self.edge(key, gen, "awaits")
                    self.g.nodes[key]["barrier"] = self.g.nodes[gen]["barrier"]
                    self.g.nodes[key]["generation"] = self.g.nodes[gen]["generation"]

    def _awaited(self, blocked: dict) -> str | None:
        """The generation a blocked wait needs, from NumSim's description of the wait and the barrier state."""
        awaits, state = blocked.get("awaits", ""), blocked.get("state") or ""
        m = re.search(r"on (\S+); phase (\d)", awaits)
        if m:
            name, parity = m.group(1), int(m.group(2))
            keys = [k for k, n in self.gens.items() if k[0] == "mbarrier" and self.g.nodes[n]["barrier"] == name
                    and k[1] == blocked.get("cta", k[1])]
            if not keys:
                return None
            cta, addr = keys[0][1], keys[0][2]
            g = re.search(r"generation (\d+)", state)
            current = int(g.group(1)) if g else max(k[4] for k in keys)
            needed = current if (current & 1) == parity else current + 1
            return self.generation(("mbarrier", cta, addr), cta, needed)
        m = re.search(r"await bar\.\w+ (\d+); generation (\d+)", awaits)
        if m:
            return self.generation(("named", blocked.get("cta", 0), int(m.group(1))), blocked.get("cta", 0),
                                   int(m.group(2)))
        return None
