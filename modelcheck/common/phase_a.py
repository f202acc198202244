"""Phase A: NumSim observers that judge the synchronization protocol as it runs.

`StrictProtocol` applies the schedule-dependent strict rule of docs/semantics.md#mbarriers: an arrive
or expect_tx on generation g+1 before some wait observed generation g.

`Causality` keeps one vector clock per warp and applies the schedule-independent
rules: init must happen-before every use, and the wait that observed generation g
must happen-before every mutation of generation g+1.  Being first in the simulated
run never counts as ordering — only synchronization edges do: a release arrive
puts the arriving warp's clock into its generation, an acquire wait joins the
generation into the waiter, an async completion carries its issuer's clock at issue
(a relaxed wait takes only those), named-barrier contributions release and `bar.sync`
waiters acquire.  The tracker also records every sync operation's clocks before and
after it, which phase B uses to keep cross-resource order in its projections.

Every one of these edges stays inside a thread-block cluster (a CTA's barriers are used by its
cluster's warps only; a CTA is its own cluster without one), so a clock has one component per warp
of its warp's cluster (`numsim.ClusterLayout`), not per warp of the grid: what a warp knows of
another cluster's warps is always zero.  A 16,384-warp launch keeps 16 components per warp, not
16,384.  The recorded clocks (`ClockView`) are read by global warp number, zero outside the cluster.

Both raise `numsim.Halt("finding", Finding)` at the first violation: phase A stops at
the first protocol error.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..numsim import Halt, Observer
from ..numsim.trace import ClusterLayout, SyncEvent
from ..numsim.values import nnz
from . import findings as F


class ClockView:
    """A recorded clock read by global warp number (explorer: `clock[w]`): the warp's component when it is in
    the clock's cluster, else zero (nothing orders a warp after another cluster's)."""

    __slots__ = ("values", "cluster", "layout")

    def __init__(self, values: np.ndarray, cluster: int, layout: ClusterLayout):
        self.values, self.cluster, self.layout = values, cluster, layout

    def __getitem__(self, w: int) -> int:
        if self.layout.domain[w] != self.cluster:
            return 0
        return int(self.values[self.layout.local[w]])


class _Sites:
    def __init__(self):
        self.sites = ()
        self.name_of = lambda addr: f"{addr:#x}"

    def start(self, run):
        self.sites = run.sites
        self.name_of = run.name_of

    def barrier_name(self, ev) -> str:
        b = ev.barrier
        if b is None:
            return "?"
        if b[0] == "named":
            return f"named barrier {b[2]}"
        return self.name_of(b[2])


class StrictProtocol(Observer):
    wants_accesses = False

    def __init__(self, checker: str):
        self.checker = checker
        self.ctx = _Sites()

    def on_start(self, run):
        self.ctx.start(run)

    def on_sync(self, ev):
        # async transaction completions may land on the next phase early (they are buffered); deferred
        # arrivals (cp.async.mbarrier.arrive) are arrivals and obey the rule when they land
        if ev.kind not in ("mbarrier.arrive", "mbarrier.expect_tx") or (
                ev.details.get("async") and ev.kind != "mbarrier.arrive"):
            return
        if ev.details.get("prior_consumed", True):
            return
        g = ev.generation
        name = self.ctx.barrier_name(ev)
        if ev.details.get("async"):
            what = f"{ev.details.get('kind', 'deferred')} arrival on {name} landed"
        else:
            what = f"{'mbarrier.arrive' if ev.kind == 'mbarrier.arrive' else 'mbarrier.expect_tx'} on {name} started"
        finding = F.make(self.checker, "mbarrier_arrive_before_consumption",
                         f"{what} before generation {g - 1} was consumed",
                         {"operation": F.event_operation(self.ctx.sites, ev), "barrier": name,
                          "generation": g, "previous_generation": g - 1})
        raise Halt("finding", finding)


class _Barrier:
    __slots__ = ("init_clock", "init_op", "epoch", "release", "completion", "waits", "tokens", "init_seen")

    def __init__(self):
        self.init_clock = None
        self.init_op = None
        # warps whose clock was found after init_clock: a warp's clock only grows, so it stays after it
        self.init_seen: set[int] = set()
        self.epoch = 0
        self.release: dict[int, np.ndarray] = {}       # generation -> joined clocks of release arrives
        self.completion: dict[int, np.ndarray] = {}    # generation -> joined issuer clocks of async completions
        self.waits: dict[int, list] = {}               # generation -> [(clock, operation)] of observing waits


class Causality(Observer):
    """Vector clocks, one component per warp of the warp's cluster (see the module docstring)."""

    wants_accesses = False

    def __init__(self, checker: str):
        self.checker = checker
        self.ctx = _Sites()
        self.clocks: list[np.ndarray] = []
        self.barriers: dict[tuple, _Barrier] = {}
        self.named: dict[tuple, np.ndarray] = {}        # (cta, id, generation) -> joined contribution clocks
        self.tokens: dict[int, np.ndarray] = {}         # async op id -> issuer clock at issue
        self.event_clocks: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # event seq -> (before, after)
        self.record_clocks = True
        # which events' clocks to keep (None: all): Synccheck keeps its programs' commands' only
        # (explorer.is_command), a warp's per-lane cp.async issues are millions of events no command comes from
        self.clocks_of: Callable[[SyncEvent], bool] | None = None
        self.clusters = ClusterOrder(self)
        self.layout = ClusterLayout.whole(0)
        self.local: list[int] = []
        self.after: list = []          # warp -> the ClockView recorded after its latest event (or None)

    def on_start(self, run):
        self.ctx.start(run)
        self.layout = run.cluster_layout()
        self.local = self.layout.local.tolist()
        self.clocks = [np.zeros(self.layout.size, dtype=np.int64) for _ in range(run.warps)]
        self.after = [None] * run.warps

    # -- helpers
    def _tick(self, w: int) -> np.ndarray:
        c = self.clocks[w]
        c[self.local[w]] += 1
        return c

    def own(self, w: int, clock: np.ndarray) -> int:
        """Warp w's component of a clock of its cluster."""
        return int(clock[self.local[w]])

    def _view(self, w: int, clock: np.ndarray) -> ClockView:
        return ClockView(clock, int(self.layout.domain[w]), self.layout)

    def _fail(self, kind: str, message: str, ev, **details):
        details["operation"] = F.event_operation(self.ctx.sites, ev)
        raise Halt("finding", F.make(self.checker, kind, message, details))

    @staticmethod
    def _leq(a: np.ndarray, b: np.ndarray) -> bool:
        # (integer clocks: no component above b's; a count, without ndarray.all's Python wrapper)
        return not nnz(a > b)

    def _check_init(self, bar: _Barrier, use: np.ndarray, ev, op: str, name: str):
        """`use` is warp ev.warp's current clock."""
        if bar.init_clock is None:
            return      # NumSim reports use before init
        if ev.warp in bar.init_seen:
            return
        if self._leq(bar.init_clock, use):
            bar.init_seen.add(ev.warp)
            return
        if ev.barrier is not None and ev.barrier[1] != ev.cta:
            self._fail("cluster_barrier_init_not_visible",
                       f"{op} from CTA {ev.cta} on CTA {ev.barrier[1]}'s {name} (generation {ev.generation}) is not "
                       f"ordered after its mbarrier.init: the init is not made visible to the cluster", ev,
                       barrier=name, generation=ev.generation, barrier_cta=ev.barrier[1],
                       related_operations=[bar.init_op])
        self._fail("mbarrier_init_not_happens_before_use",
                   f"mbarrier.init does not happen before {op} on {name} generation {ev.generation}", ev,
                   barrier=name, generation=ev.generation, related_operations=[bar.init_op])

    def _check_prior(self, bar: _Barrier, use: np.ndarray, ev, op: str, name: str):
        g = ev.generation
        if g is None or g < 1:
            return
        waits = bar.waits.get(g - 1, [])
        if any(self._leq(clock, use) for clock, _ in waits):
            return
        if not waits:
            self._fail("mbarrier_prior_generation_not_consumed",
                       f"generation {g - 1} of {name} was not consumed by any wait before {op} on generation {g}",
                       ev, barrier=name, generation=g)
        self._fail("mbarrier_prior_generation_consumption_not_happens_before",
                   f"generation {g - 1} consumption does not happen before {op} on {name} generation {g}", ev,
                   barrier=name, generation=g, related_operations=[op_ for _, op_ in waits[:3]])

    # -- events
    def on_sync(self, ev):
        kind = ev.kind
        d = ev.details
        if d.get("async"):
            self._async(ev)
            return
        w = ev.warp
        record = self.record_clocks and (self.clocks_of is None or self.clocks_of(ev))
        if not record and kind == "async.issue" and ev.barrier is None:
            # an operation no barrier tracks (a lane's cp.async, a bulk store): its issue only ticks the clock
            # (no completion reads its token back: `_async`), as the branches below do
            self._tick(w)
            if self.record_clocks:
                self.after[w] = None
            return
        if record:
            # a warp's clock moves only in its own events: its view after its previous event is its view now
            before = self.after[w]
            if before is None:
                before = self._view(w, self.clocks[w].copy())
        if kind.startswith("mbarrier."):
            self._mbarrier(ev, w)
        elif kind in ("bar.sync", "bar.arrive", "bar.red"):
            c = self._tick(w)
            key = (ev.cta, ev.barrier[2], ev.generation)
            old = self.named.get(key)
            self.named[key] = c.copy() if old is None else np.maximum(old, c)
        elif kind == "bar.wait":
            payload = self.named.get((ev.cta, ev.barrier[2], ev.generation))
            c = self.clocks[w]
            if payload is not None:
                np.maximum(c, payload, out=c)
            self._tick(w)
        elif kind in ClusterOrder.KINDS:
            self.clusters.on_sync(ev, w)
        elif kind == "async.issue":
            c = self._tick(w)
            op_id = d.get("op")
            if op_id is not None and ev.barrier is not None:
                # read back only by a completion on an mbarrier (`_async`), which comes from an issue naming it
                self.tokens[op_id] = c.copy()
            if ev.barrier is not None and ev.barrier[0] == "mbarrier":
                bar = self.barriers.get((ev.barrier[1], ev.barrier[2]))
                if bar is not None:
                    self._check_init(bar, c, ev, "mbarrier completion issue", self.ctx.barrier_name(ev))
                if ev.barrier[1] != ev.cta:
                    self.clusters.remote(ev, w, ev.barrier[1])
        else:
            self._tick(w)
        if record:
            after = self.after[w] = self._view(w, self.clocks[w].copy())
            self.event_clocks[ev.seq] = (before, after)
        elif self.record_clocks:
            self.after[w] = None        # the next recorded event's `before` is the clock then

    def _mbarrier(self, ev, w: int):
        kind = ev.kind
        key = (ev.barrier[1], ev.barrier[2])
        bar = self.barriers.get(key)
        if bar is None:
            bar = self.barriers[key] = _Barrier()
        name = self.ctx.barrier_name(ev)
        if kind == "mbarrier.init":
            c = self._tick(w)
            bar.init_clock = c.copy()
            bar.init_seen = set()
            bar.init_op = F.event_operation(self.ctx.sites, ev)
            bar.epoch += 1
            bar.release, bar.completion, bar.waits = {}, {}, {}
            return
        if kind == "mbarrier.poll":
            return
        c = self._tick(w)
        if ev.barrier[1] != ev.cta:
            self.clusters.remote(ev, w, ev.barrier[1])
        if kind == "mbarrier.arrive":
            self._check_init(bar, c, ev, "mbarrier.arrive", name)
            self._check_prior(bar, c, ev, "mbarrier.arrive", name)
            if ev.details.get("order", "release") != "relaxed":
                g = ev.generation
                old = bar.release.get(g)
                bar.release[g] = c.copy() if old is None else np.maximum(old, c)
        elif kind == "mbarrier.expect_tx":
            self._check_init(bar, c, ev, "mbarrier.expect_tx", name)
            self._check_prior(bar, c, ev, "mbarrier.expect_tx", name)
        elif kind == "mbarrier.complete_tx":
            self._check_init(bar, c, ev, "mbarrier.complete_tx", name)
        elif kind == "mbarrier.wait":
            self._check_init(bar, c, ev, "mbarrier.wait", name)
            g = ev.generation
            if g is None:
                return      # the vacuous parity-1 wait after init observes nothing
            clock = self.clocks[w]
            if ev.details.get("order", "acquire") != "relaxed" and g in bar.release:
                np.maximum(clock, bar.release[g], out=clock)
            if g in bar.completion:
                np.maximum(clock, bar.completion[g], out=clock)
            bar.waits.setdefault(g, []).append((clock.copy(), F.event_operation(self.ctx.sites, ev)))

    def _async(self, ev):
        """A completion delivered by the async engine: carries the issuer's clock at issue."""
        if ev.barrier is None or ev.barrier[0] != "mbarrier":
            return
        bar = self.barriers.get((ev.barrier[1], ev.barrier[2]))
        if bar is None:
            return
        issuer = self.tokens.get(ev.details.get("op"))
        if issuer is None:
            issuer = self.clocks[ev.warp].copy()
        g = ev.generation
        if ev.kind == "mbarrier.arrive":
            # a deferred arrival mutates generation g when it lands: the consumption of g - 1 must
            # happen before its issue (nothing else orders the landing)
            self._check_prior(bar, issuer, ev, f"{ev.details.get('kind', 'deferred')} arrival",
                              self.ctx.barrier_name(ev))
        old = bar.completion.get(g)
        bar.completion[g] = issuer.copy() if old is None else np.maximum(old, issuer)


class ClusterOrder:
    """What `Causality` adds for thread-block clusters (docs/semantics.md#clusters).

    - `barrier.cluster`: an arrive releases the warp's clock into its phase (a `.relaxed` arrive only what the
      warp's last `fence.mbarrier_init` published: the inits before it), the wait acquires the phase.
    - Lifetime: an access to a peer CTA's shared memory (a remote ld/st/atom, an mbarrier operation on its
      barrier, an async copy or commit landing there) must happen before the peer CTA exits, i.e. before the
      exit of one of its warps (`cluster_exit_while_peer_access`).  For the exit the cluster barrier counts as
      an execution barrier whatever its semantics: every arrival of a phase precedes every wait of it.
    """

    KINDS = ("cluster.arrive", "cluster.wait", "fence.mbarrier_init", "cluster.remote", "warp.exit")

    def __init__(self, causality: "Causality"):
        self.c = causality
        self.release: dict[tuple, np.ndarray] = {}      # (cluster, phase) -> joined release clocks
        self.arrived: dict[tuple, np.ndarray] = {}      # (cluster, phase) -> joined clocks of every arrival
        self.init_fence: dict[int, np.ndarray] = {}     # warp -> its clock at its latest fence.mbarrier_init
        self.executed: dict[int, np.ndarray] = {}       # warp -> what cluster-barrier waits ordered before it
        self.remote_use: dict[tuple, tuple] = {}        # (target CTA, warp) -> (own tick, sync event) latest use
        self.exit_clock: dict[int, np.ndarray] = {}     # CTA -> joined final clocks of its exited warps

    def on_sync(self, ev, w: int) -> None:
        c = self.c._tick(w)
        kind = ev.kind
        if kind == "fence.mbarrier_init":
            self.init_fence[w] = c.copy()
        elif kind == "cluster.arrive":
            key = (ev.barrier[1], ev.generation)
            payload = c if ev.details.get("order", "release") != "relaxed" else self.init_fence.get(w)
            if payload is not None:
                old = self.release.get(key)
                self.release[key] = payload.copy() if old is None else np.maximum(old, payload)
            old = self.arrived.get(key)
            self.arrived[key] = c.copy() if old is None else np.maximum(old, c)
        elif kind == "cluster.wait":
            key = (ev.barrier[1], ev.generation)
            if ev.details.get("order", "acquire") != "relaxed" and key in self.release:
                np.maximum(c, self.release[key], out=c)
            if key in self.arrived:
                old = self.executed.get(w)
                self.executed[w] = self.arrived[key].copy() if old is None else np.maximum(old, self.arrived[key])
        elif kind == "cluster.remote":
            self.remote(ev, w, ev.details["target_cta"])
        elif kind == "warp.exit":
            final = c if w not in self.executed else np.maximum(c, self.executed[w])
            old = self.exit_clock.get(ev.cta)
            self.exit_clock[ev.cta] = final.copy() if old is None else np.maximum(old, final)
            if ev.details.get("cta_exited"):
                self._check_exit(ev.cta)

    def remote(self, ev, w: int, target: int) -> None:
        self.remote_use[(target, w)] = (self.c.own(w, self.c.clocks[w]), ev)

    def _check_exit(self, cta: int) -> None:
        final = self.exit_clock[cta]
        for (target, w), (tick, ev) in sorted(self.remote_use.items(), key=lambda kv: kv[1][1].seq):
            if target != cta or self.c.own(w, final) >= tick:
                continue
            sites = self.c.ctx.sites
            op = sites[ev.site].op if ev.site is not None and ev.site < len(sites) else ev.kind
            self.c._fail("cluster_exit_while_peer_access",
                         f"CTA {cta} may exit while warp {w} of CTA {ev.cta} still accesses its shared memory "
                         f"({op}): nothing orders that access before CTA {cta}'s exit", ev,
                         exiting_cta=cta, accessing_cta=ev.cta, access=ev.kind)
