"""How happens-before knowledge flows through a run, event by event (docs/semantics.md#happens-before),
for Racecheck.

`Flow` holds each warp's knowledge (`clocks.WarpState`, lane columns of the warp's clock domain: its cluster,
or the whole grid when knowledge can cross clusters, docs/semantics.md#racecheck-at-grid-scale; a row that would
cross domains raises `CrossedDomains`), what barrier generations carry
(mbarrier arrive -> generation -> wait, per lane; relaxed waits take only async
completions; named-barrier contributions -> resumers), async operations forked at issue and
known after their completion is observed (a bulk store's source reads already at
wait_group.read; their forks, groups and waits: `async_ops`), warp syncs over their member
lanes, a tcgen05.alloc's address store to every lane of its warp, fence.proxy.async (bridges
per domain), fence.sc pairs whose order the run forces
(`common.fence_sc.Tracker`), release stores/atomics -> acquire loads reading from them with covering scopes, and tcgen05
operations by their own ordering (`tcgen`).  `sync(ev)` applies one event; the analysis
applies the events in seq order interleaved with the accesses that move knowledge
(`publish`, `acquire_from_memory`).

Bounded by what is in flight, not by the run: an async operation has a column from its
issue until it has retired (NumSim said it makes no more accesses) and none of its
accesses can still pair (`forget`; until then a retired one keeps its column but not its
fork's rows, `settle`), and columns are compacted away (`compact`, every row this module
holds follows); a barrier generation's payload goes once no event can name it
again (`collect`: an mbarrier wait observes the latest completed generation and an arrive
the current one, so two generations back are done; a named-barrier generation once every
waiting contributor resumed and the next one started).
"""
from __future__ import annotations

import numpy as np

from ..common import fence_sc
from ..numsim.trace import ClusterLayout
from .async_ops import DONE, AsyncOps
from .clocks import Ledger, WarpState, Warps, resize, resize_shared
from .foreign import Foreign
from .memory_edges import MemoryEdges, one_lane
from .tcgen import DEALLOC_ACTOR, TcgenOrder

_FENCE_DOMAINS = {"all": ("shared", "global"), "shared::cta": ("shared",), "shared::cluster": ("shared",),
                  "shared": ("shared",), "global": ("global",)}
_LANES = np.arange(32)
_HEADROOM = 64


# events that move no knowledge of their warp (a poll, an init, a completion noted without a barrier): `sync` only
# notes their generation, so the analysis need not hand their warp's accesses over first
INERT = frozenset(("mbarrier.poll", "mbarrier.init", "async.complete"))
# events `register` reads (the others name no async operation)
REGISTERED = frozenset(("async.issue", "tcgen05.dealloc"))


class CrossedDomains(Exception):
    """A barrier payload is about to join two clock domains (barriers are cluster-local, so this is a check, not a
    case split clocks handle; strong accesses cross through `foreign`): Racecheck runs again with the whole grid as
    one domain (racecheck.domains)."""


class Flow(AsyncOps, MemoryEdges):
    def __init__(self, run_warps: int, warps_per_cta: int, layout: ClusterLayout | None = None):
        self.nw = run_warps
        # lane columns: one per lane of a clock domain (the whole grid, or one cluster: see `domains`); a warp's
        # lanes are columns col0 .. col0 + 31 of its domain, async columns follow, unique over the run
        self.layout = layout if layout is not None else ClusterLayout.whole(run_warps)
        self.split = self.layout.split
        self.nlanes = self.layout.size * 32
        self.width = self.nlanes + _HEADROOM
        self.meter = None                           # numsim.budget.Budget: widenings are charged to it
        # async columns are numbered per clock domain (a row only knows its own domain's operations, and others'
        # through foreign columns): each domain's next free column, never below `floor` (above every foreign
        # column); `top`: one past the highest column given anywhere
        self.next_in: dict[int, int] = {}
        self.floor = self.top = self.nlanes
        self.col0 = self.layout.local * 32          # warp -> its lane 0's column in its domain
        self.domain = self.layout.domain
        self.domain_of: list = self.domain.tolist()  # (the same, for one warp at a time)
        self.cta_domain = self.domain[::max(warps_per_cta, 1)].tolist() if self.split else []
        self.async_col: dict[int, int] = {}         # op -> its column (in its domain's numbering)
        self.op_dom: dict[int, int] = {}            # op -> its clock domain (its issuing warp's)
        self.dom_ops: dict[int, dict] = {}          # domain -> {op: column} (what `foreign.translate` maps)
        self.op_kind: dict[int, str] = {}
        self.retired: set = set()                   # ops that make no more accesses (NumSim says so)
        col0 = self.col0.tolist()
        # rows nobody wrote are one shared zero row (clocks.zero_row): a warp costs a row once it learns something,
        # and its state is made when something first names it (clocks.Warps)
        self.ledger = Ledger(self.width)
        self.warps = Warps(run_warps, warps_per_cta, col0, self.ledger)
        self.tc: TcgenOrder | None = None
        # async op -> (ordinary row, {domain: bridged row}, (warp, lane, epoch)); the ordinary row is the issuing
        # lane's read-only row, shared while the warp learns nothing new, its own column not set (`fork_row`); the
        # rows are None once the operation retired and its last chunk was judged (`settle`)
        self.fork: dict[int, tuple] = {}
        self.fork_seq: dict[int, float] = {}       # async op -> seq of the event that forked it
        self.async_info: dict[int, dict] = {}
        # async op -> (issuing warp, lane, seq of the issue): classifies lifetime races (per operation, since
        # columns of different domains alias)
        self.issuer: dict[int, tuple] = {}
        # split clocks: columns for other clusters' lanes, given where knowledge crosses clusters (`foreign`)
        self.foreign = Foreign(self) if self.split else None
        self.mb: dict[tuple, dict] = {}            # (cta, addr, gen) -> {"release", "bridged", "cols", "tc"}
        self.named: dict[tuple, dict] = {}
        self.mb_latest: dict[tuple, int] = {}      # (cta, addr) -> latest generation an event named
        self.named_latest: dict[tuple, int] = {}
        self.named_waiting: dict[tuple, int] = {}  # (cta, id, gen) -> contributors that will resume from it
        self._zero_bridged = {"shared": np.zeros(self.width, dtype=np.int32)}
        self._zero_bridged["global"] = self._zero_bridged["shared"]
        self._members: dict[int, np.ndarray] = {}
        self.release_rows: dict[tuple, tuple] = {}  # (record index, lane) -> (row, scope level, cta)
        self.owned_release: set = set()             # its keys whose rows are their own (charged to the ledger)
        self.tc_rows: dict[tuple, np.ndarray] = {}  # (record index, lane) -> fenced tcgen05 knowledge it publishes
        # fence.sc: the Fence-SC orders the run forces, found as it goes; each fence.sc instance's knowledge
        self.sc = fence_sc.Tracker()
        self.sc_rows: dict[tuple, np.ndarray] = {}
        self.sc_domain: dict[tuple, int] = {}      # fence.sc instance -> its warp's clock domain (split clocks)
        self.sc_fences: dict[tuple, list] = {}     # (warp, lane) -> seqs of its fence.sc (for the race hint)
        self.sc_order: dict[tuple, dict] = {}      # strong write (record, lane) -> {(write, lane): ordered before it}
        self.write_thread: dict[tuple, tuple] = {}  # (record, lane) of a strong access or a write it read -> (warp,
        #                                             actor)

    # ------------------------------------------------------------------ columns
    def column(self, op: int, warp: int = 0) -> int:
        """The column of async operation `op` (issued by `warp`: its domain numbers it), given one if it has none
        (rows widen as needed)."""
        col = self.async_col.get(op)
        if col is None:
            dom = int(self.domain[warp]) if self.split and 0 <= warp < self.nw else 0
            col = max(self.next_in.get(dom, self.nlanes), self.floor)
            self.next_in[dom] = col + 1
            self._reach(col)
            self.async_col[op] = col
            self.op_dom[op] = dom
            self.dom_ops.setdefault(dom, {})[op] = col
        return col

    def new_column(self) -> int:
        """A fresh column no domain uses (a foreign lane's or operation's, `foreign`); rows widen as needed, keeping
        every column's number."""
        col = self.top
        self._reach(col)
        self.floor = self.top           # (above it: no domain gives it to an operation)
        return col

    def _reach(self, col: int) -> None:
        """Column `col` is given: the rows widen to hold it."""
        if col >= self.width:
            used = col - self.nlanes
            self._resize(np.arange(self.width), self.nlanes + 2 * used + _HEADROOM,
                         np.arange(self.width, dtype=np.int64))
        if col >= self.top:
            self.top = col + 1

    def register(self, ev) -> None:
        """Before a chunk's events are applied: what their async operations are, and their columns."""
        if ev.kind == "async.issue" and ev.details.get("op") is not None:
            op = ev.details["op"]
            self.op_kind[op] = ev.details.get("kind", "")
            self.column(op, ev.warp)
            if self.op_kind[op].startswith("tcgen05"):
                self.start_tcgen()
        elif ev.kind == "tcgen05.dealloc":
            self.op_kind[DEALLOC_ACTOR + ev.seq] = "tcgen05.dealloc"
            self.start_tcgen()

    def start_tcgen(self) -> None:
        """tcgen05 knowledge from the first tcgen05 operation on (all of it is zero before one is issued)."""
        if self.tc is None:
            self.tc = TcgenOrder(self.width, self.async_col)
            self.warps.tc = True
            for w in self.warps:
                w.tc_start(self.width)

    def forget(self, ops) -> None:
        """Async operations nothing can ask about any more: their columns, forks and bookkeeping go."""
        ops = list(ops)
        for op in ops:
            if self.async_col.pop(op, None) is not None:
                dom = self.op_dom.pop(op)
                self.dom_ops[dom].pop(op, None)
            self.issuer.pop(op, None)
            self.fork.pop(op, None)
            self.fork_seq.pop(op, None)
            self.op_kind.pop(op, None)
            self.async_info.pop(op, None)
            self.retired.discard(op)
        if self.tc is not None:
            self.tc.forget(ops)
        if self.foreign is not None:
            self.foreign.forget(ops)

    def compact(self) -> None:
        """Drop the columns of forgotten operations when they are a good part of the width."""
        live = np.unique(np.fromiter(self.async_col.values(), dtype=np.int64, count=len(self.async_col)))
        if self.foreign is not None and len(self.foreign):
            live = np.sort(np.concatenate([live, self.foreign.columns()]))
        used = self.top - self.nlanes
        if used - live.size <= max(4 * _HEADROOM, 2 * live.size):
            return
        keep = np.concatenate([np.arange(self.nlanes, dtype=np.int64), live])
        new_col = np.full(self.width, -1, dtype=np.int64)
        new_col[keep] = np.arange(keep.size)
        self._resize(keep, self.nlanes + 2 * live.size + _HEADROOM, new_col)
        self.async_col = {op: int(new_col[c]) for op, c in self.async_col.items()}
        self.dom_ops = {d: {op: int(new_col[c]) for op, c in ops.items()} for d, ops in self.dom_ops.items()}
        if self.tc is not None:
            self.tc.async_col = self.async_col
        if self.foreign is not None:
            self.foreign.renumber(new_col)
        # every domain starts again above what is kept: a kept column may hold another domain's operation, and
        # rows of this domain its own forgotten one's stale values (fresh columns are zero in every row)
        self.next_in = {}
        self.floor = self.top = keep.size

    def _held_rows(self) -> int:
        """Rows of the flow's width held beside the warps' (forks count once per distinct shared row; a barrier
        payload only the rows it has: a generation that only carries completions holds none)."""
        seen = {id(f[0]) for f in self.fork.values() if f[0] is not None}
        seen.update(id(x) for f in self.fork.values() if f[1] is not None for x in f[1].values())
        if self.tc is not None:
            seen.update(id(x) for f in self.tc.fork.values() for x in f)
        seen.update(id(x) for x in self.tc_rows.values())      # (lanes of one write share theirs: `publish`)
        n = len(seen) + len(self.release_rows) + len(self.sc_rows)
        for table in (self.mb, self.named):
            for p in table.values():
                n += (p["release"] is not None) + (p["tc"] is not None) + len(p["bridged"])
        return n

    def _resize(self, keep: np.ndarray, width: int, new_col: np.ndarray) -> None:
        """Every row keeps columns `keep` (old column c becomes new_col[c]) and gets width `width`."""
        if self.meter is not None and width > self.width:
            # the new rows are made while the old ones live: refused before, not an out-of-memory kill after
            rows = sum(w.row_count() for w in self.warps) + self._held_rows()
            self.meter.headroom(rows * width * 4, f"Racecheck's vector clocks ({rows:,} rows) widening to "
                                                  f"{width:,} columns for the async operations in flight")
        memo: dict = {}          # rows warps and forks share (clocks.Knowledge.frozen) are resized once, still shared

        def r(row):
            if row is None:
                return None
            return resize(row, keep, width) if row.flags.writeable else resize_shared(memo, row, keep, width)
        for w in self.warps:
            w.resize(keep, width, memo)
        zero = self._zero_bridged
        new_zero = {"shared": np.zeros(width, dtype=np.int32)}
        new_zero["global"] = new_zero["shared"]
        self.fork = {op: (None, None, info) if row is None else
                     (resize_shared(memo, row, keep, width), new_zero if b is zero else {d: r(x) for d, x in b.items()},
                      info)
                     for op, (row, b, info) in self.fork.items()}
        self._zero_bridged = new_zero
        for table in (self.mb, self.named):
            for p in table.values():
                p["release"], p["tc"] = r(p["release"]), r(p["tc"])
                p["bridged"] = {d: r(x) for d, x in p["bridged"].items()}
                p["cols"] = {int(new_col[c]) for c in p["cols"] if new_col[c] >= 0}
        self.release_rows = {k: (r(row), level, cta) for k, (row, level, cta) in self.release_rows.items()}
        self.tc_rows = {k: r(row) for k, row in self.tc_rows.items()}
        self.sc_rows = {k: r(row) for k, row in self.sc_rows.items()}
        if self.tc is not None:
            self.tc.resize(keep, width, new_col, memo)
        self.width = self.ledger.width = self.warps.width = width

    def collect(self) -> None:
        """Drop barrier payloads no event can name again (see the module docstring)."""
        latest = self.mb_latest
        self.mb = {k: p for k, p in self.mb.items() if k[2] is None or k[2] > latest.get((k[0], k[1]), 0) - 2}
        nl, waiting = self.named_latest, self.named_waiting
        for k in [k for k in self.named if k[2] is not None and k[2] < nl.get((k[0], k[1]), 0) and not waiting.get(k)]:
            del self.named[k]
            waiting.pop(k, None)

    def keep_records(self, alive) -> None:
        """Release rows of records no access can read from any more go (`alive(index)`)."""
        self.release_rows = {k: v for k, v in self.release_rows.items() if alive(k[0])}
        self.tc_rows = {k: v for k, v in self.tc_rows.items() if alive(k[0])}
        if self.owned_release:
            # (the others share a fence's row or another write's: charged there, or by the warp)
            gone = {k for k in self.owned_release if k not in self.release_rows}
            if gone:
                self.owned_release -= gone
                self.ledger.made(-len(gone))

    # ------------------------------------------------------------------ sync events
    def _payload(self, table, key):
        p = table.get(key)
        if p is None:
            p = table[key] = {"release": None, "bridged": {}, "cols": set(), "tc": None, "dom": None}
        return p

    def _claim(self, p, warp: int) -> None:
        """Split clocks: a payload's rows come from, and go to, one clock domain (barriers are cluster-local, so
        this always holds; checked, since aliased columns would order what nothing orders)."""
        self._claim_domain(p, self.domain_of[warp])

    @staticmethod
    def _claim_domain(p, d: int) -> None:
        if p["dom"] is None:
            p["dom"] = d
        elif p["dom"] != d:
            raise CrossedDomains

    def _release_into(self, p, w: WarpState, mask) -> None:
        if self.split:
            d = self.domain_of[w.id]        # (`_claim`, inline: one per arrive)
            if p["dom"] is None:
                p["dom"] = d
            elif p["dom"] != d:
                raise CrossedDomains
        row = w.release(mask)
        if p["release"] is None:
            p["release"] = row
        elif p["release"].flags.writeable:      # (its own: no warp shares it yet, `clocks.Knowledge.merge`)
            np.maximum(p["release"], row, out=p["release"])
        else:
            p["release"] = np.maximum(p["release"], row)
        if w.has_bridged:
            for d in ("shared", "global"):
                b = w.release_bridged(mask, d)
                p["bridged"][d] = b if d not in p["bridged"] else np.maximum(p["bridged"][d], b)
        if w.tc is not None:
            self._tc_release_into(p, w.tc_release(mask))

    @staticmethod
    def _tc_release_into(p, row) -> None:
        p["tc"] = row if p["tc"] is None else np.maximum(p["tc"], row)

    def _acquire(self, p, w: WarpState, mask, ordinary: bool = True) -> None:
        if self.split and p["dom"] is not None:
            self._claim(p, w.id)
        if ordinary and p["release"] is not None:
            w.acquire(mask, p["release"], p["bridged"])
        if p["cols"]:
            w.k.learn_columns(mask, np.fromiter(p["cols"], dtype=np.int64, count=len(p["cols"])), DONE)
        if w.tc is not None and p["tc"] is not None:
            # takes effect for tcgen05 operations only at the next fence::after_thread_sync
            w.tc_pending.merge(mask, p["tc"])

    def _note_generation(self, ev) -> None:
        bar = ev.barrier
        if bar is None or ev.generation is None:
            return
        key = (bar[1], bar[2])
        if bar[0] == "mbarrier":
            if ev.kind == "mbarrier.init":
                self.mb_latest[key] = ev.generation
            elif ev.generation > self.mb_latest.get(key, -1):
                self.mb_latest[key] = ev.generation
        elif bar[0] == "named":
            if ev.generation > self.named_latest.get(key, -1):
                self.named_latest[key] = ev.generation
            g = key + (ev.generation,)
            if ev.kind in ("bar.sync", "bar.red"):
                self.named_waiting[g] = self.named_waiting.get(g, 0) + 1
            elif ev.kind == "bar.wait" and g in self.named_waiting:
                self.named_waiting[g] -= 1

    def sync(self, ev) -> None:
        kind, d = ev.kind, ev.details
        self._note_generation(ev)
        if d.get("async"):
            self._completion(ev)
            return
        if kind in INERT or ev.warp < 0 or ev.warp >= self.nw:
            return
        if kind == "warp.exit":
            w = self.warps.made.get(ev.warp)
            if w is not None:
                w.retire()
            return
        w = self.warps.made.get(ev.warp) or self.warps[ev.warp]
        mask = ev.lanes
        if kind == "mbarrier.arrive":
            lanes = d.get("lanes")
            if lanes is not None:
                mask = np.zeros(32, dtype=np.bool_)
                mask[lanes] = True
            if d.get("order", "release") != "relaxed":
                self._release_into(self._payload(self.mb, (ev.barrier[1], ev.barrier[2], ev.generation)), w, mask)
            elif w.tc is not None:       # a relaxed arrive still orders fenced tcgen05 work (PTX §9.7.16.6.3)
                p = self._payload(self.mb, (ev.barrier[1], ev.barrier[2], ev.generation))
                if self.split:
                    self._claim(p, w.id)
                self._tc_release_into(p, w.tc_release(mask))
        elif kind == "mbarrier.wait":
            if ev.generation is not None:
                p = self.mb.get((ev.barrier[1], ev.barrier[2], ev.generation))
                if p is not None:
                    self._acquire(p, w, mask, ordinary=d.get("order", "acquire") != "relaxed")
        elif kind in ("bar.sync", "bar.arrive", "bar.red"):
            self._release_into(self._payload(self.named, (ev.cta, ev.barrier[2], ev.generation)), w, mask)
        elif kind == "bar.wait":
            p = self.named.get((ev.cta, ev.barrier[2], ev.generation))
            if p is not None:
                self._acquire(p, w, mask)
        elif kind == "cluster.arrive":
            # barrier.cluster: an arrive releases (a .relaxed one only fenced tcgen05 work), the wait acquires
            p = self._payload(self.named, ev.barrier[:2] + (ev.generation,))
            if d.get("order", "release") != "relaxed":
                self._release_into(p, w, mask)
            elif w.tc is not None:
                if self.split:
                    self._claim(p, w.id)
                self._tc_release_into(p, w.tc_release(mask))
        elif kind == "cluster.wait":
            p = self.named.get(ev.barrier[:2] + (ev.generation,))
            if p is not None:
                self._acquire(p, w, mask, ordinary=d.get("order", "acquire") != "relaxed")
        elif kind == "warp_sync":
            self._warp_sync(w, mask, d.get("membermask", 0xFFFFFFFF))
        elif kind == "tcgen05.alloc":
            # the address store (lane 0's write) is seen by every lane of the allocating warp once the
            # .sync.aligned instruction returns: PTX ISA 9.7.16.7.1's own example reads it with a plain
            # ld.shared in that warp.  Lane 0's column up to this epoch (the store, and any access since
            # the warp's last sync) reaches the other lanes; their own accesses are not joined.
            w.k.learn_columns(mask, np.array([w.col0]), w.epoch)
            w.epoch += 1
        elif kind == "fence.proxy.async":
            w.fence_proxy(mask, _FENCE_DOMAINS.get(d.get("space", "all"), ("shared", "global")))
        elif kind == "fence.sc":
            self._fence_sc(ev, w, mask)
        elif kind == "fence.acq_rel":
            self._fence_acq_rel(w, mask)
        elif kind == "async.issue":
            self._issue(ev, w, d)
        elif kind in ("bulk.commit_group", "cp.async.commit_group"):
            self._commit_group(w, mask, kind.split(".commit")[0])
        elif kind in ("bulk.wait_group", "cp.async.wait_group"):
            self._wait_group(ev, w, mask, kind.split(".wait")[0])
        elif kind == "tcgen05.fence::before_thread_sync":
            if w.tc is not None and self.tc is not None:
                self.tc.fence_before(ev, w, mask)
        elif kind == "tcgen05.fence::after_thread_sync":
            if w.tc is not None:
                w.tc.absorb(mask, w.tc_pending)
        elif kind == "wgmma.wait_group":
            self._wait_ops(w, mask, d.get("ops", ()), tcgen=False)
        elif kind in ("tcgen05.wait::ld", "tcgen05.wait::st"):
            self._wait_ops(w, mask, d.get("ops", ()), tcgen=True)
        elif kind == "tcgen05.dealloc":
            actor = DEALLOC_ACTOR + ev.seq
            if actor in self.async_col:
                self.fork[actor] = (w.fork_row(0), self._zero_bridged, (ev.warp, 0, w.epoch))
                self.fork_seq[actor] = ev.seq
                self.issuer[actor] = (ev.warp, 0, ev.seq)
                self.async_info[actor] = {"kind": "tcgen05.dealloc", "warp": ev.warp, "lane": 0, "site": ev.site,
                                          "iters": ev.iters}
                if w.tc is not None and self.tc is not None:
                    self.tc.dealloc(actor, w, mask)
                w.epoch += 1

    def _warp_sync(self, w: WarpState, mask, mm: int) -> None:
        if w.tc is not None:
            m = mask if mm == 0xFFFFFFFF else (((mm >> _LANES) & 1).astype(np.bool_) &
                                               (True if mask is None else mask))
            w.tc_pending.merge(m, w.tc_release(m))
        if mask is None and mm == 0xFFFFFFFF and w.k.rows is None and not w.has_bridged:
            # the common case: a converged warp's lanes learn each other's current epoch
            w.k.own()[w.col0:w.col0 + 32] = w.epoch
            w.epoch += 1
            return
        members = self._members.get(mm)
        if members is None:
            members = self._members[mm] = ((mm >> _LANES) & 1).astype(np.bool_)
        m = members if mask is None else (members & mask)
        row = w.release(m)
        w.k.set_all(m, row)
        if w.has_bridged:
            for dom in ("shared", "global"):
                w.bridged[dom].set_all(m, w.release_bridged(m, dom))

    def _fork_bridged_into(self, p, op: int) -> None:
        """A completion that publishes its issuer's history (a commit, st.async) publishes what that history had
        bridged with it: a proxy fence anywhere on the causality path orders the two proxies (PTX ISA 8.9.5,
        proxy-preserved base causality order).  The operation's own accesses gain no bridge (its column is not in
        its issuer's bridged rows): a commit's completion still bridges none of the shared memory its mma/cp read."""
        bridged = self.fork[op][1]
        if bridged is self._zero_bridged:
            return
        for d, b in bridged.items():
            p["bridged"][d] = b.copy() if d not in p["bridged"] else np.maximum(p["bridged"][d], b)

    def _fence_sc(self, ev, w: WarpState, mask) -> None:
        """A fence.sc lane acquires what the earlier fence.sc instances the run forces before it knew at theirs
        (PTX §8.9.4 item 1; never the execution order alone), then acts as fence.acq_rel; its knowledge there is
        what later forced fences acquire."""
        self.sc.fence(ev)
        lanes = range(32) if mask is None else np.flatnonzero(mask).tolist()
        for lane in lanes:
            self.sc_fences.setdefault((ev.warp, lane), []).append(ev.seq)
            for cand in self.sc.at(ev.seq, lane):
                row = self.sc_rows.get(cand.f1)
                if row is not None and (cand.needs is None or self._write_before(*cand.needs)):
                    if self.foreign is not None:
                        row = self.foreign.translate(row, self.sc_domain[cand.f1], int(self.domain[w.id]))
                    w.k.merge(one_lane(lane), row)
        self._fence_acq_rel(w, mask)
        for lane in lanes:
            self.sc_rows[(ev.seq, lane)] = w.fence_row[lane]
            if self.split:
                self.sc_domain[(ev.seq, lane)] = int(self.domain[w.id])

    def _write_before(self, w_id: tuple, b_id: tuple) -> bool:
        """Did write (record, lane) `w_id` happen before write `b_id`, as `b`'s lane knew at `b` (the knowledge
        gathered for their candidate pair; one lane's accesses are ordered by program order)?"""
        w, b = self.write_thread.get(w_id), self.write_thread.get(b_id)
        if w is not None and b is not None and w[1] < 0 and (w[0], w_id[1]) == (b[0], b_id[1]):
            return True
        return self.sc_order.get(b_id, {}).get(w_id, False)

    def _fence_acq_rel(self, w: WarpState, mask) -> None:
        for lane in (range(32) if mask is None else np.flatnonzero(mask)):
            lane = int(lane)
            for row in w.pending_acquire.pop(lane, []):
                w.k.merge(one_lane(lane), row)
            if lane not in w.fence_row:
                self.ledger.made(1)           # (a full-width snapshot: charged while the warp holds it)
            w.fence_row[lane] = w.snapshot(lane)
        w.epoch += 1

    def _completion(self, ev) -> None:
        """An async completion landed on an mbarrier: its generation now carries the operation."""
        if ev.barrier is None or ev.barrier[0] != "mbarrier":
            return
        op = ev.details.get("op")
        p = self._payload(self.mb, (ev.barrier[1], ev.barrier[2], ev.generation))
        if op is not None and op in self.async_col:
            if self.split:
                self._claim_domain(p, self.op_dom[op])
            p["cols"].add(self.async_col[op])
        commit = self.tc.commit_payload(op) if ev.details.get("kind") == "tcgen05.commit" and self.tc else None
        if commit is not None:
            # the waiter learns the commit's tcgen05 operations complete, and the issuer's knowledge at commit;
            # for tcgen05 operations also their causal predecessors (never work the issuer only imported)
            cols, row = commit
            p["cols"].update(cols.tolist())
            fork = self.fork_row(op) if op in self.fork else None
            if self.split and (fork is not None or row is not None):
                self._claim(p, self.async_info.get(op, {}).get("warp", ev.warp))
            if fork is not None:
                p["release"] = fork if p["release"] is None else np.maximum(p["release"], fork)
                self._fork_bridged_into(p, op)
            if row is not None:
                self._tc_release_into(p, row)
        if ev.details.get("kind") == "st.async" and op in self.fork:
            # PTX ISA 9.7.9.12: st.async's complete-tx has .release semantics at .cluster scope, so the phase also
            # publishes what the issuing lane knew at the store's issue (not only the store itself)
            if self.split:
                self._claim(p, self.async_info.get(op, {}).get("warp", ev.warp))
            row = self.fork_row(op)
            p["release"] = row if p["release"] is None else np.maximum(p["release"], row)
            self._fork_bridged_into(p, op)
        if ev.details.get("kind") == "cp.async.mbarrier.arrive":
            # the arrive covers the lane's earlier cp.async operations
            info = self.async_info.get(op, {})
            w = self.warps[info.get("warp", ev.warp)]
            lane = info.get("lane", 0)
            for fam_ops in (w.async_uncommitted["cp.async"].get(lane, []),
                            *w.async_groups["cp.async"].get(lane, [])):
                for o in fam_ops:
                    if self.fork.get(o) and self.fork[o][2][2] <= self.fork[op][2][2]:
                        p["cols"].add(self.async_col[o])
