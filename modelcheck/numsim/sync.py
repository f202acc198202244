"""Synchronization objects with hardware semantics (docs/semantics.md#mbarriers, #named-barriers).

mbarrier: a phase completes when all expected arrivals have come and the
transaction count is back to zero; `complete_tx` may land before the matching
`expect_tx` (the count goes transiently negative).  Generations are counted
without bound (`gen` = the current, incomplete phase); a parity wait is ready iff
the most recently completed phase has that parity, and after init the "completed"
parity is 1, so a parity-1 wait passes at once and consumes nothing.  Each
completed generation remembers whether some wait observed it (consumption), for
the strict rules the checkers apply.

Named barrier: a generation's thread count is fixed by its first contribution;
`bar.arrive` contributes without waiting, `bar.sync` contributes and waits.

Violations of the hardware contract (use before init, arrival overflow, tx
over-delivery, count mismatch) raise `SyncError`; the engine turns it into a
diagnostic and stops the run.
"""
from __future__ import annotations

MAX_COUNT = (1 << 20) - 1


class SyncError(Exception):
    """A synchronization contract violation: `kind` is a finding kind, `details` JSON-safe facts."""

    def __init__(self, kind: str, message: str, **details):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details


class MBarrier:
    __slots__ = ("cta", "addr", "live", "expected", "pending", "tx", "gen", "consumed", "init_gen_base",
                 "waiters", "version", "epoch", "arrivals", "tx_expected", "tx_completed")

    def __init__(self, cta: int, addr: int):
        self.cta = cta
        self.addr = addr
        self.live = False
        self.expected = 0
        self.pending = 0
        self.tx = 0
        self.gen = 0            # current (incomplete) phase, counted since the first init
        self.consumed = True    # has the last completed generation been observed by a wait?
        self.init_gen_base = 0  # generation number at the latest init
        self.waiters: list = []
        self.version = 0        # bumped on every state change (wakes waiters)
        self.epoch = 0          # number of inits
        self.arrivals = 0       # arrivals received in the current phase
        self.tx_expected = 0    # transaction bytes announced in the current phase (for messages)
        self.tx_completed = 0   # transaction bytes completed in the current phase (for messages)

    # -- lifecycle
    def init(self, count: int) -> None:
        if self.live:
            raise SyncError("mbarrier_reinit_without_inval", "mbarrier.init on a live barrier without mbarrier.inval",
                            barrier=self.addr)
        if not 1 <= count <= MAX_COUNT:
            raise SyncError("mbarrier_invalid_expected_arrivals",
                            f"mbarrier.init with expected count {count}, outside [1, {MAX_COUNT}]",
                            barrier=self.addr, count=count)
        self.live = True
        self.expected = self.pending = count
        self.tx = self.tx_expected = self.tx_completed = 0
        self.arrivals = 0
        self.consumed = True
        self.init_gen_base = self.gen
        self.epoch += 1
        self.version += 1

    def inval(self) -> None:
        self.require_live("mbarrier.inval")
        self.live = False
        self.version += 1

    def require_live(self, what: str) -> None:
        if not self.live:
            raise SyncError("mbarrier_use_before_init", f"{what} on an mbarrier that is not initialized",
                            barrier=self.addr)

    # -- generations
    @property
    def local_gen(self) -> int:
        """The current phase counted from the latest init (0 = first phase)."""
        return self.gen - self.init_gen_base

    def completed_parity(self) -> int:
        return (self.local_gen - 1) & 1

    def ready(self, parity: int) -> bool:
        return (parity & 1) == ((self.local_gen - 1) & 1)

    def observed_generation(self, parity: int) -> int | None:
        """The local generation a ready parity wait observes (None for the vacuous wait after init)."""
        g = self.local_gen - 1
        return g if g >= 0 else None

    # -- arrivals and transactions
    def arrive(self, count: int, tx: int = 0, drop: bool = False) -> bool:
        """Arrive `count` times (after `expect_tx(tx)`); True if this completed the phase."""
        self.require_live("mbarrier.arrive")
        if tx:
            self.expect_tx(tx)
        if count > self.pending:
            raise SyncError("mbarrier_arrival_overflow",
                            f"received {self.arrivals + count} arrivals, expected {self.expected}",
                            barrier=self.addr, arrivals=self.arrivals + count, expected=self.expected)
        if drop:
            self.expected -= count
            if self.expected < 1:
                raise SyncError("mbarrier_invalid_expected_arrivals", "arrive_drop left no expected arrivals",
                                barrier=self.addr)
        self.pending -= count
        self.arrivals += count
        self.version += 1
        if self.pending == 0 and self.tx < 0:
            raise self._over_delivery()
        return self._maybe_complete()

    def expect_tx(self, nbytes: int) -> None:
        self.require_live("mbarrier.expect_tx")
        self.tx += nbytes
        self.tx_expected += nbytes
        if self.tx > MAX_COUNT:
            raise SyncError("mbarrier_transaction_over_delivery", f"tx-count {self.tx} exceeds {MAX_COUNT}",
                            barrier=self.addr)
        self.version += 1

    def complete_tx(self, nbytes: int) -> bool:
        self.require_live("mbarrier.complete_tx")
        self.tx -= nbytes
        self.tx_completed += nbytes
        self.version += 1
        if self.pending == 0 and self.tx < 0:
            raise self._over_delivery()
        return self._maybe_complete()

    def _over_delivery(self) -> SyncError:
        return SyncError("mbarrier_transaction_over_delivery",
                         f"completed {self.tx_completed} transaction bytes, expected {self.tx_expected}",
                         barrier=self.addr, excess=-self.tx, completed=self.tx_completed, expected=self.tx_expected)

    def _maybe_complete(self) -> bool:
        if self.pending == 0 and self.tx == 0:
            self.gen += 1
            self.pending = self.expected
            self.arrivals = self.tx_expected = self.tx_completed = 0
            self.consumed = False
            self.version += 1
            return True
        return False

    def consume(self) -> int | None:
        """A wait succeeded: mark the latest completed generation observed; returns it (local)."""
        g = self.local_gen - 1
        if g >= 0:
            self.consumed = True
        return g if g >= 0 else None

    def describe(self) -> str:
        tx = f", transactions {self.tx_completed}/{self.tx_expected}" if self.tx_expected or self.tx_completed else ""
        return (f"generation {self.local_gen}, completed parity {self.completed_parity()}, "
                f"arrivals {self.arrivals}/{self.expected}{tx}")


class NamedBarrier:
    """One of the 16 named barriers of a CTA."""

    __slots__ = ("cta", "id", "count", "arrived", "gen", "contributors", "version", "sites", "red")

    def __init__(self, cta: int, bid: int):
        self.cta = cta
        self.id = bid
        self.count: int | None = None
        self.arrived = 0
        self.gen = 0
        self.contributors: list[tuple[int, str, int]] = []   # (warp, flavor, lane bits) of the current generation
        self.version = 0
        self.sites: dict[int, tuple[int, bool]] = {}   # warp -> (static op id, aligned) of blocking syncs
        self.red: dict[int, list] = {}                 # generation -> predicate vectors (bar.red)

    def contribute(self, warp: int, threads: int, count: int, flavor: str, site: int, aligned: bool,
                   lanes: int = 0xFFFFFFFF) -> int:
        """Add a warp's threads (`lanes`: their bits; the divergent paths of one warp contribute their own
        lanes); returns the generation it contributes to.  Completes when all arrived."""
        if count <= 0 or count % 32:
            raise SyncError("named_barrier_contract_mismatch",
                            f"barrier {self.id}: thread count {count} is not a positive multiple of 32",
                            barrier=self.id, count=count)
        if self.count is None:
            self.count = count
        elif self.count != count:
            raise SyncError("named_barrier_contract_mismatch",
                            f"barrier {self.id} generation {self.gen}: thread count {count} differs from "
                            f"{self.count} given by the first contribution", barrier=self.id, count=count,
                            expected=self.count, generation=self.gen)
        if any(w == warp and f == flavor and bits & lanes for w, f, bits in self.contributors):
            raise SyncError("named_barrier_arrival_overflow",
                            f"warp {warp} contributes twice to barrier {self.id} generation {self.gen}",
                            barrier=self.id, warp=warp, generation=self.gen)
        if flavor == "sync":
            prior = [(s, a) for w, (s, a) in self.sites.items() if w != warp]
            if aligned and any(not a for _, a in prior) or (not aligned and any(a for _, a in prior)):
                raise SyncError("aligned_sync_contract_mismatch",
                                f"barrier {self.id} generation {self.gen} mixes aligned and unaligned syncs",
                                barrier=self.id, generation=self.gen)
            self.sites[warp] = (site, aligned)
        self.contributors.append((warp, flavor, lanes))
        self.arrived += threads
        gen = self.gen
        if self.arrived > self.count:
            raise SyncError("named_barrier_arrival_overflow",
                            f"barrier {self.id} generation {gen}: {self.arrived} threads arrived, expected "
                            f"{self.count}", barrier=self.id, arrived=self.arrived, expected=self.count,
                            generation=gen)
        if self.arrived == self.count:
            self.gen += 1
            self.count = None
            self.arrived = 0
            self.contributors = []
            self.sites = {}
        self.version += 1
        return gen

    def describe(self) -> str:
        return f"generation {self.gen}, {self.arrived}/{self.count if self.count is not None else '?'} threads"


class ClusterBarrier:
    """The `barrier.cluster` of one cluster (PTX ISA 9.7.13.3): every non-exited thread of every CTA of the
    cluster arrives once per phase; a thread's wait returns when the phase it arrived in completes (a wait
    without an arrival waits for its own arrival: a hang).  The phase completes when every thread that has
    not exited has arrived; the barrier then starts the next phase by itself."""

    __slots__ = ("cluster", "members", "gen", "arrived", "version", "arrived_gen")

    def __init__(self, cluster: int, members: list):
        self.cluster = cluster
        self.members = members            # the cluster's CTARuntimes, by rank
        self.gen = 0
        self.arrived: dict[int, int] = {}       # global warp id -> lane bits arrived in the current phase
        self.arrived_gen: dict[int, int] = {}   # global warp id -> the phase of its latest arrival
        self.version = 0

    def arrive(self, warp, lanes: int) -> int:
        """A warp's lanes arrive; returns the phase they arrive in."""
        have = self.arrived.get(warp.gid, 0)
        if have & lanes:
            raise SyncError("cluster_barrier_early_arrival",
                            f"warp {warp.gid} arrives twice on the cluster barrier in phase {self.gen} (a thread "
                            f"must wait before arriving again)", warp=warp.gid, generation=self.gen)
        self.arrived[warp.gid] = have | lanes
        self.arrived_gen[warp.gid] = self.gen
        gen = self.gen
        self.try_complete()
        self.version += 1
        return gen

    def try_complete(self) -> bool:
        """Complete the phase if every non-exited thread has arrived."""
        for rt in self.members:
            for w in rt.warps:
                if w.status == 2:       # runtime.DONE: an exited warp is not awaited
                    continue
                full = (1 << w.nthreads) - 1
                if self.arrived.get(w.gid, 0) & full != full:
                    return False
        self.gen += 1
        self.arrived = {}
        self.version += 1
        return True

    def passed(self, gen: int) -> bool:
        return self.gen > gen

    def missing(self) -> list[int]:
        """Global ids of the warps the current phase still awaits."""
        out = []
        for rt in self.members:
            for w in rt.warps:
                full = (1 << w.nthreads) - 1
                if w.status != 2 and self.arrived.get(w.gid, 0) & full != full:
                    out.append(w.gid)
        return out

    def describe(self) -> str:
        return f"cluster {self.cluster} phase {self.gen}, awaiting warps {self.missing()}"
