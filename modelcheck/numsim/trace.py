"""What NumSim tells observers: sync events and memory access records (docs/architecture.md#pipeline).

NumSim knows nothing of the checkers; it calls `on_sync(event)` on every registered
observer, in execution order, and `on_end(result)` when the run stops.  An observer may
raise `Halt` to stop the run (phase-A protocol checks do).

Access records come in one of two forms, as the observer asks:
- columns (`wants_columns = True`): NumSim appends each record to `AccessColumns` (one
  tuple per memory instruction, one *bulk* record per TMA box, MMA operand or TMEM row
  block: its byte runs as arrays, not one call per run) and hands observers an
  `AccessChunk` of numpy columns every `CHUNK_ROWS` records and once at the end of the
  run.  A chunk's records all come after every sync event delivered before it and before
  every sync event delivered after it.  Racecheck streams these; `Trace` keeps them.
- objects (`on_access(record)`): one `AccessRecord` per record, as it happens (forced
  schedules and replay's observers, which act on each access at once).
A record is one memory instruction of one warp, or one contiguous byte run of an async
operation (a bulk record holds several, with consecutive `seq`s); `None` lanes means all
32 lanes of the warp.  Both forms carry the same records (`AccessChunk.records()`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .columns import AccessChunk


class Halt(Exception):
    """Raised by an observer to stop the run; `reason` is recorded as the termination."""

    def __init__(self, reason: str, payload=None):
        super().__init__(reason)
        self.reason = reason
        self.payload = payload


@dataclass(frozen=True, slots=True)
class Site:
    """A static operation: a modeled op call or a buffer access in the source."""

    id: int
    op: str          # op name (e.g. "mbarrier.arrive", "st.shared", "element store")
    span: object     # ir.Span
    text: str        # source line text


class SyncEvent:
    """One executed synchronization operation of one warp."""

    __slots__ = ("seq", "kind", "cta", "warp", "site", "lanes", "iters", "barrier", "count", "tx", "parity",
                 "generation", "completed", "details")

    def __init__(self, seq, kind, cta, warp, site, lanes, iters, barrier=None, count=0, tx=0, parity=None,
                 generation=None, completed=False, details=None):
        self.seq = seq                  # global execution order
        self.kind = kind                # e.g. "mbarrier.arrive", "mbarrier.wait", "bar.sync"
        self.cta = cta
        self.warp = warp                # global warp id
        self.site = site                # static op id
        self.lanes = lanes              # bool lane mask (np.ndarray) or None = whole warp
        self.iters = iters              # loop-iteration vector (tuple)
        self.barrier = barrier          # ("mbarrier", cta, addr) | ("named", cta, id) | None
        self.count = count
        self.tx = tx
        self.parity = parity
        self.generation = generation    # generation assigned / observed (counted from the latest init)
        self.completed = completed      # this event completed a phase
        self.details = details or {}

    def lane_list(self) -> list[int]:
        return list(range(32)) if self.lanes is None else [int(i) for i in np.flatnonzero(self.lanes)]

    def __repr__(self) -> str:
        return (f"SyncEvent({self.seq} {self.kind} cta={self.cta} warp={self.warp} site={self.site} "
                f"barrier={self.barrier} gen={self.generation} parity={self.parity} count={self.count} "
                f"tx={self.tx} completed={self.completed} iters={self.iters})")


class AccessRecord:
    """One memory instruction of one warp (or one async operation)."""

    __slots__ = ("seq", "cta", "warp", "site", "iters", "lanes", "space", "alloc", "alloc_name", "offsets",
                 "size", "kind", "proxy", "order", "scope", "actor")

    def __init__(self, seq, cta, warp, site, iters, lanes, space, alloc, alloc_name, offsets, size, kind,
                 proxy="generic", order="weak", scope="cta", actor=-1):
        self.seq = seq
        self.cta = cta
        self.warp = warp
        self.site = site
        self.iters = iters
        self.lanes = lanes              # bool mask or None (all lanes)
        self.space = space              # "global" | "shared" | "tmem"
        self.alloc = alloc              # allocation id
        self.alloc_name = alloc_name
        self.offsets = offsets          # byte offset in the allocation: int (all lanes) or int64[32]
        self.size = size                # bytes per lane
        self.kind = kind                # "read" | "write" | "rmw"
        self.proxy = proxy              # "generic" | "async"
        self.order = order              # weak | relaxed | acquire | release | acq_rel | volatile | atomic
        self.scope = scope
        self.actor = actor              # -1: the lanes themselves; else the async operation's id

    def lane_offsets(self) -> dict[int, int]:
        lanes = range(32) if self.lanes is None else np.flatnonzero(self.lanes)
        if isinstance(self.offsets, np.ndarray):
            return {int(i): int(self.offsets[i]) for i in lanes}
        return {int(i): int(self.offsets) for i in lanes}

    def __repr__(self) -> str:
        return (f"AccessRecord({self.seq} {self.kind} {self.space}:{self.alloc_name} warp={self.warp} "
                f"site={self.site} size={self.size} proxy={self.proxy} order={self.order})")


@dataclass(frozen=True)
class RunInfo:
    """What observers learn when a run starts."""

    func: object                 # the ir.PrimFunc
    sites: tuple                 # static op sites (Site), indexed by SyncEvent.site / AccessRecord.site
    warps: int                   # warps in the launch
    warps_per_cta: int
    ctas: int
    block: tuple
    grid: tuple
    name_of: object              # callable(addr) -> "buf[i]" for a shared address (static layout)
    cluster: tuple = (1, 1, 1)   # the launch's cluster shape
    # ids of the global allocations no instruction of the run can write: inputs the kernel never stores to are
    # bound read-only (`inputs.buffer_array`), so a write to one raises and ends the run incomplete
    unwritten: frozenset = frozenset()

    def cluster_layout(self) -> "ClusterLayout":
        """Each warp's cluster and place in it (see `ClusterLayout`)."""
        return ClusterLayout.of(self.grid, self.cluster, self.warps_per_cta)


@dataclass(frozen=True)
class ClusterLayout:
    """Warps grouped by thread-block cluster (a CTA is its own cluster in a launch without clusters), as
    `engine.form_clusters` groups the CTAs: `domain[w]` the cluster of warp w, `local[w]` its place among the
    cluster's warps (rank * warps_per_cta + warp in CTA), `size` the warps of a cluster.  Synchronization that
    stays inside a cluster can be followed with clocks of `size` columns instead of one per warp of the grid.
    `whole(n)`: one domain of every warp (local = global), what the checkers use when something may order
    warps of different clusters."""

    domain: np.ndarray
    local: np.ndarray
    size: int

    @staticmethod
    def of(grid: tuple, cluster: tuple, warps_per_cta: int) -> "ClusterLayout":
        gx, gy, gz = (tuple(grid) + (1, 1, 1))[:3]
        cx, cy, cz = (tuple(cluster or (1, 1, 1)) + (1, 1, 1))[:3]
        bx, by, bz = np.meshgrid(np.arange(gx), np.arange(gy), np.arange(gz), indexing="ij")
        # CTA linear index = bx + by * gx + bz * gx * gy (engine order): flatten z, y, x
        bx, by, bz = (a.transpose(2, 1, 0).ravel() for a in (bx, by, bz))
        cid = bx // cx + (by // cy) * (gx // cx) + (bz // cz) * (gx // cx) * (gy // cy)
        rank = bx % cx + (by % cy) * cx + (bz % cz) * cx * cy
        k = np.arange(warps_per_cta)
        domain = np.repeat(cid, warps_per_cta).astype(np.int64)
        local = (rank[:, None] * warps_per_cta + k[None, :]).ravel().astype(np.int64)
        return ClusterLayout(domain, local, cx * cy * cz * warps_per_cta)

    @staticmethod
    def whole(nwarps: int) -> "ClusterLayout":
        return ClusterLayout(np.zeros(nwarps, dtype=np.int64), np.arange(nwarps, dtype=np.int64), nwarps)

    @property
    def split(self) -> bool:
        """More than one domain."""
        return self.domain.size > 0 and self.size < self.domain.size


class Observer:
    """Base class; override what you need.  `wants_accesses = False`: no access records at all;
    `wants_columns = True`: access records as `AccessChunk`s (`on_access_chunk`) instead of objects."""

    wants_accesses = True
    wants_columns = False

    def on_start(self, run: RunInfo) -> None:
        pass

    def on_sync(self, event: SyncEvent) -> None:
        pass

    def on_access(self, record: AccessRecord) -> None:
        pass

    def on_access_chunk(self, chunk: "AccessChunk") -> None:
        pass

    def on_end(self, result) -> None:
        pass




class Trace(Observer):
    """Records every event and access record of a run (access records as columns, objects on demand)."""

    wants_columns = True

    def __init__(self):
        self.sync: list = []
        self.chunks: list = []           # AccessChunk, in order
        self._records: list = []         # records handed over one at a time (`on_access`)
        self._materialized = None

    def on_sync(self, event: SyncEvent) -> None:
        self.sync.append(event)

    def on_access(self, record: AccessRecord) -> None:
        self._records.append(record)
        self._materialized = None

    def on_access_chunk(self, chunk) -> None:
        self.chunks.append(chunk)
        self._materialized = None

    @property
    def accesses(self) -> list:
        """Every access record as an `AccessRecord`, in execution order (built once, on first use)."""
        if self._materialized is None:
            out = [r for c in self.chunks for r in c.records()]
            if self._records:
                out = sorted(out + self._records, key=lambda r: r.seq) if out else list(self._records)
            self._materialized = out
        return self._materialized

    def lane_accesses(self) -> int:
        return (sum(int(c.lane.size) for c in self.chunks)
                + sum(32 if r.lanes is None else int(np.count_nonzero(r.lanes)) for r in self._records))
