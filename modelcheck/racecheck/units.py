"""Access records as Racecheck keeps them: one row per record, columns of numpy arrays.

A `Units` table holds records of a stretch of the run (a chunk of NumSim's `AccessChunk`
rows plus Racecheck's synthetic ones, or the live records carried between chunks) with
what the analysis derives per record once (write, strength, proxy domain, ...) and what it
stamps along the way (`epoch_at`).  `index` numbers records over the whole run in seq
order, synthetic ones included, so a race names its records by position as a list of
`AccessRecord`s would.  Allocations are keyed by (space, allocation id) in `Allocs`.
Assumes: chunks arrive in seq order.  Guarantees: `take`/`concat` keep every column aligned.
"""
from __future__ import annotations

import numpy as np

from ..common.ordering import ACQUIRING_ORDERS, RELEASING_ORDERS, SCOPE_LEVEL
from ..numsim.columns import KINDS, ORDERS, PROXIES, SCOPES, AllocName
from ..numsim.trace import AccessRecord

READ, WRITE, RMW = 0, 1, 2
DOMAIN_NONE, DOMAIN_SHARED, DOMAIN_GLOBAL = 0, 1, 2
DOMAIN_NAMES = {DOMAIN_SHARED: "shared", DOMAIN_GLOBAL: "global"}
_DOMAIN_OF_SPACE = {"shared": DOMAIN_SHARED, "global": DOMAIN_GLOBAL}
# per-record columns (the CSR lane columns `lane_start`, `lane`, `offset` exist only on a fresh chunk's table)
COLUMNS = ("index", "seq", "cta", "warp", "site", "key", "kind", "proxy", "order", "scope", "actor", "size", "bits",
           "all_lanes", "write", "strength", "domain", "acquiring", "releasing", "bulk_write", "stamp", "tc",
           "epoch_at")


class Allocs:
    """Allocation keys: (space, allocation id) -> a small int, with the space and name of each."""

    def __init__(self):
        self.key: dict[tuple, int] = {}
        self.space: list[str] = []
        self.name: list[str] = []
        self.id: list[int] = []
        self._chunk_table: dict[int, int] = {}     # id(AccessChunk.allocs entry) -> key
        self._seen = 0                              # entries of the engine's allocation table keyed so far
        self._held: list[int] = []                  # its entries not yet seen released
        self.domain = np.zeros(0, dtype=np.int8)

    def of(self, space: str, alloc_id: int, name: str) -> int:
        k = self.key.get((space, alloc_id))
        if k is None:
            k = self.key[(space, alloc_id)] = len(self.space)
            self.space.append(space)
            self.name.append(name)
            self.id.append(alloc_id)
            self.domain = np.append(self.domain, np.int8(_DOMAIN_OF_SPACE.get(space, DOMAIN_NONE)))
        return k

    def table(self, allocs: list) -> np.ndarray:
        """Keys of an AccessChunk allocation table (append-only over a run)."""
        for a in allocs[self._seen:]:
            self._held.append(len(self._chunk_table))
            self._chunk_table[len(self._chunk_table)] = self.of(a.space, a.id, a.name)
        self._seen = len(allocs)
        return np.array([self._chunk_table[i] for i in range(len(allocs))], dtype=np.int64)

    def released(self, allocs: list) -> list[int]:
        """Keys of the table's allocations released since the last call: NumSim replaces a released entry (a
        CTA's shared memory after its exit) by a bare name (numsim.columns.AllocName) after handing over every
        access to it.  Allocation ids are unique over the launch, so nothing accesses such a key again."""
        if len(allocs) < len(self._chunk_table):    # (the empty table of the last, empty chunk)
            return []
        gone = [i for i in self._held if isinstance(allocs[i], AllocName)]
        if gone:
            done = set(gone)
            self._held = [i for i in self._held if i not in done]
        return [self._chunk_table[i] for i in gone]


class Units:
    """Records as columns (see the module docstring)."""

    __slots__ = COLUMNS + ("iters", "lane_start", "lane", "offset", "n")

    # the slots' types, for type checkers (annotations alone create no class attributes)
    index: np.ndarray
    seq: np.ndarray
    cta: np.ndarray
    warp: np.ndarray
    site: np.ndarray
    key: np.ndarray
    kind: np.ndarray
    proxy: np.ndarray
    order: np.ndarray
    scope: np.ndarray
    actor: np.ndarray
    size: np.ndarray
    bits: np.ndarray
    all_lanes: np.ndarray
    write: np.ndarray
    strength: np.ndarray
    domain: np.ndarray
    acquiring: np.ndarray
    releasing: np.ndarray
    bulk_write: np.ndarray
    stamp: np.ndarray
    tc: np.ndarray
    epoch_at: np.ndarray
    iters: np.ndarray                       # (object array: rows are taken and joined without a Python loop)
    lane_start: np.ndarray | None           # the CSR lane columns: None after `take` (see COLUMNS)
    lane: np.ndarray | None
    offset: np.ndarray | None
    n: int

    def __len__(self) -> int:
        return self.n

    @classmethod
    def empty(cls) -> "Units":
        u = cls()
        u.n = 0
        for name in COLUMNS:
            setattr(u, name, np.zeros(0, dtype=np.float64 if name == "seq" else np.int64))
        for name in ("all_lanes", "write", "acquiring", "releasing", "bulk_write"):
            setattr(u, name, np.zeros(0, dtype=np.bool_))
        u.iters = np.zeros(0, dtype=object)
        u.lane_start = np.zeros(1, dtype=np.int64)
        u.lane = u.offset = np.zeros(0, dtype=np.int64)
        return u

    def take(self, sel: np.ndarray) -> "Units":
        """The rows `sel` (indices, ascending, or a mask of the rows: faster where most rows are taken), without the
        lane columns."""
        u = Units()
        u.n = int(np.count_nonzero(sel)) if sel.dtype == np.bool_ else int(sel.size)
        for name in COLUMNS:
            setattr(u, name, getattr(self, name)[sel])
        u.iters = self.iters[sel]
        u.lane_start = u.lane = u.offset = None
        return u

    def concat(self, other: "Units") -> "Units":
        """These rows, then `other`'s (whose lane columns the result keeps, offset by nothing: they index
        `other`'s rows only, see `lane_rows`)."""
        u = Units()
        u.n = self.n + other.n
        for name in COLUMNS:
            setattr(u, name, np.concatenate([getattr(self, name), getattr(other, name)]))
        u.iters = np.concatenate([self.iters, other.iters])
        u.lane_start, u.lane, u.offset = other.lane_start, other.lane, other.offset
        return u

    def merge(self, other: "Units") -> "Units":
        """These rows and `other`'s (neither with lane columns) in record order."""
        if not other.n:
            return self
        both = self.concat(other)
        return both.take(np.argsort(both.index, kind="stable"))

    def record(self, i: int, allocs: Allocs, with_offsets: bool = False) -> AccessRecord:
        """Row `i` as an AccessRecord (offsets only where the lane columns are there: pass `with_offsets`)."""
        bits = int(self.bits[i])
        lanes = None if self.all_lanes[i] else ((bits >> np.arange(32)) & 1).astype(np.bool_)
        k = int(self.key[i])
        seq = float(self.seq[i])
        return AccessRecord(int(seq) if seq.is_integer() else seq, int(self.cta[i]), int(self.warp[i]),
                            int(self.site[i]), self.iters[i], lanes, allocs.space[k], allocs.id[k], allocs.name[k],
                            None, int(self.size[i]), KINDS[int(self.kind[i])], PROXIES[int(self.proxy[i])],
                            ORDERS[int(self.order[i])], SCOPES[int(self.scope[i])], int(self.actor[i]))


def _lookup(names: list, wanted, default=0) -> np.ndarray:
    return np.array([wanted(n) for n in names] or [default])


def from_chunk(chunk, allocs: Allocs, first_index: int, op_kind: dict, extra=()) -> Units:
    """The chunk's records (plus `extra` synthetic AccessRecords, merged by seq) as a Units table; derived columns
    use `op_kind` (async op id -> kind) for bulk writes, source-read stamps and tcgen05 codes."""
    u = Units()
    n = chunk.n
    keys = allocs.table(chunk.allocs)
    u.seq = chunk.seq.astype(np.float64)
    u.cta, u.warp, u.site = chunk.cta, chunk.warp, chunk.site
    u.key = keys[chunk.alloc] if n else np.zeros(0, dtype=np.int64)
    u.kind, u.proxy, u.order, u.scope = chunk.kind, chunk.proxy, chunk.order, chunk.scope
    u.actor, u.size, u.all_lanes = chunk.actor, chunk.size, chunk.all_lanes
    u.iters = np.fromiter(chunk.iters, dtype=object, count=n)
    u.lane_start, u.lane, u.offset = chunk.lane_start, chunk.lane.astype(np.int64), chunk.offset
    counts = np.diff(u.lane_start)
    # lanes of one record are distinct: their bits sum to the mask (exact in float64 below 2**53)
    u.bits = np.bincount(np.repeat(np.arange(n), counts), weights=np.left_shift(1, u.lane).astype(np.float64),
                         minlength=n).astype(np.int64)
    u.n = n
    if extra:
        u = _with_extra(u, list(extra), allocs)
    _derive(u, allocs, op_kind)
    u.index = first_index + np.arange(u.n, dtype=np.int64)
    u.epoch_at = np.ones(u.n, dtype=np.int64)
    return u


def _with_extra(u: Units, extra: list, allocs: Allocs) -> Units:
    """`u` with synthetic records (one lane each, scalar offset) merged in by seq."""
    m = len(extra)
    assert u.lane_start is not None             # called on a fresh chunk's table, which has its lane columns
    e = Units()
    e.n = m
    e.seq = np.array([r.seq for r in extra], dtype=np.float64)
    e.cta = np.array([r.cta for r in extra], dtype=np.int64)
    e.warp = np.array([r.warp for r in extra], dtype=np.int64)
    e.site = np.array([r.site for r in extra], dtype=np.int64)
    e.key = np.array([allocs.of(r.space, r.alloc, r.alloc_name) for r in extra], dtype=np.int64)
    e.kind = np.array([KINDS.index(r.kind) for r in extra], dtype=np.int8)
    e.proxy = np.array([PROXIES.index(r.proxy) for r in extra], dtype=np.int8)
    e.order = np.array([ORDERS.index(r.order) for r in extra], dtype=np.int8)
    e.scope = np.array([SCOPES.index(r.scope) for r in extra], dtype=np.int8)
    e.actor = np.array([r.actor for r in extra], dtype=np.int64)
    e.size = np.array([r.size for r in extra], dtype=np.int64)
    e.all_lanes = np.zeros(m, dtype=np.bool_)
    lanes = [int(np.flatnonzero(r.lanes)[0]) for r in extra]
    e.bits = np.left_shift(1, np.array(lanes, dtype=np.int64))
    e.iters = np.fromiter((r.iters for r in extra), dtype=object, count=m)
    order = np.argsort(np.concatenate([u.seq, e.seq]), kind="stable")
    out = Units()
    out.n = u.n + m
    for name in ("seq", "cta", "warp", "site", "key", "kind", "proxy", "order", "scope", "actor", "size", "all_lanes",
                 "bits"):
        setattr(out, name, np.concatenate([getattr(u, name), getattr(e, name)])[order])
    out.iters = np.concatenate([u.iters, e.iters])[order]
    counts = np.concatenate([np.diff(u.lane_start), np.ones(m, dtype=np.int64)])
    lane = np.concatenate([u.lane, np.array(lanes, dtype=np.int64)])
    offset = np.concatenate([u.offset, np.array([int(r.offsets) for r in extra], dtype=np.int64)])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    perm = np.argsort(rank[np.repeat(np.arange(counts.size), counts)], kind="stable")
    out.lane_start = np.zeros(out.n + 1, dtype=np.int64)
    np.cumsum(counts[order], out=out.lane_start[1:])
    out.lane, out.offset = lane[perm], offset[perm]
    return out


def _derive(u: Units, allocs: Allocs, op_kind: dict) -> None:
    """Per-record facts the analysis uses, as `strength`, ACQUIRING_ORDERS etc. define them per record."""
    from .tcgen import CODE as TC_CODE
    kind, order, actor = u.kind, u.order, u.actor
    ordinary = actor < 0
    u.write = kind != READ
    weak = _lookup(ORDERS, lambda o: o == "weak").astype(np.bool_)[order]
    volatile = _lookup(ORDERS, lambda o: o == "volatile").astype(np.bool_)[order]
    level = _lookup(SCOPES, lambda s: SCOPE_LEVEL.get(s, 3), 3)[u.scope]
    # an async op's accesses are weak, except the individually relaxed.gpu element reductions of
    # cp.reduce.async.bulk (its `rmw` records; see common.ordering.strength)
    u.strength = np.where(weak | (~ordinary & (kind != RMW)), 0,
                          np.where(volatile, SCOPE_LEVEL["sys"], level)).astype(np.int8)
    u.domain = allocs.domain[u.key] if u.n else np.zeros(0, dtype=np.int8)
    acq = _lookup(ORDERS, lambda o: o in ACQUIRING_ORDERS).astype(np.bool_)[order]
    rel = _lookup(ORDERS, lambda o: o in RELEASING_ORDERS).astype(np.bool_)[order]
    u.acquiring = ordinary & (kind != WRITE) & acq
    u.releasing = ordinary & u.write & rel
    u.bulk_write = np.zeros(u.n, dtype=np.bool_)
    u.stamp = np.full(u.n, 2, dtype=np.int64)          # analysis.DONE
    u.tc = np.zeros(u.n, dtype=np.int8)
    asy = np.flatnonzero(~ordinary)
    if asy.size:
        ops, inv = np.unique(actor[asy], return_inverse=True)
        kinds = [op_kind.get(o, "") for o in ops.tolist()]
        bulk = np.array([o.startswith(("bulk", "tma", "cp.async.bulk", "clc")) for o in kinds], dtype=np.bool_)[inv]
        s2g = np.array([o in ("bulk.s2g", "tma.s2g") for o in kinds], dtype=np.bool_)[inv]
        k = kind[asy]
        u.bulk_write[asy] = (k != READ) & bulk
        u.stamp[asy] = np.where((k == READ) & s2g, 1, 2)
        u.tc[asy] = np.array([TC_CODE.get(o, 0) for o in kinds], dtype=np.int8)[inv]
