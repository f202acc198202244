"""Access records as columns: what NumSim appends while it runs, and the chunks observers get.

`AccessColumns` is the engine's buffer.  A memory instruction appends one tuple
(`ROW_FIELDS`; no object, no numpy call); an async operation's footprint (a TMA box, an
MMA operand, a block of TMEM rows) appends one bulk record, its byte runs as arrays
(`bulk`).  Every `CHUNK_ROWS` records, and at the end of the run, the buffer becomes an
`AccessChunk`: numpy arrays per field, one row per record (a bulk record's runs are
consecutive rows with consecutive `seq`s, exactly the records the per-run form had), and
the active lanes with their byte offsets flattened (`lane_start` .. : CSR by row).
Chunks go to the observers that asked for columns (`Observer.wants_columns`), in order.

Also carried: the async operations that will make no more accesses (`retire`), so a
consumer may forget them.  Assumes seqs increase along the buffer; guarantees a chunk's
rows are in seq order.
"""
from __future__ import annotations

from itertools import chain, repeat

import numpy as np

from .trace import AccessRecord

CHUNK_ROWS = 32_768
KINDS = ("read", "write", "rmw")
PROXIES = ("generic", "async")
ORDERS = ["weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "atomic"]
SCOPES = ["cta", "cluster", "gpu", "sys"]
_KIND = {k: i for i, k in enumerate(KINDS)}
_PROXY = {p: i for i, p in enumerate(PROXIES)}
_ORDER = {o: i for i, o in enumerate(ORDERS)}
_SCOPE = {s: i for i, s in enumerate(SCOPES)}
ROW_FIELDS = ("seq", "cta", "warp", "site", "iters", "lanes", "alloc", "offsets", "size", "kind", "proxy", "order",
              "scope", "actor")
_LANE8 = np.arange(32, dtype=np.int8)
_FLAGS: dict = {}                   # (kind, proxy, order, scope) -> code, and the codes of each
_FLAG_TABLE: list = []


def _code(table: dict, names: list, value: str) -> int:
    """The code of an order or scope name (names outside the usual ones get the next code)."""
    code = table.get(value)
    if code is None:
        code = table[value] = len(names)
        names.append(value)
    return code


def _flag(f: tuple) -> int:
    code = _FLAGS.get(f)
    if code is not None:
        return code
    code = _FLAGS[f] = len(_FLAG_TABLE)
    kind, proxy, order, scope = f
    _FLAG_TABLE.append((_KIND[kind], _PROXY[proxy], _code(_ORDER, ORDERS, order), _code(_SCOPE, SCOPES, scope)))
    return code


class AccessChunk:
    """Consecutive access records of one run, as columns (see the module docstring)."""

    __slots__ = ("n", "seq", "cta", "warp", "site", "iters", "alloc", "kind", "proxy", "order", "scope", "actor",
                 "size", "all_lanes", "scalar", "offset0", "lane_start", "lane", "offset", "allocs", "retired")

    # the slots' types, for type checkers (annotations alone create no class attributes)
    n: int
    seq: np.ndarray
    cta: np.ndarray
    warp: np.ndarray
    site: np.ndarray
    iters: list
    alloc: np.ndarray
    kind: np.ndarray
    proxy: np.ndarray
    order: np.ndarray
    scope: np.ndarray
    actor: np.ndarray
    size: np.ndarray
    all_lanes: np.ndarray
    scalar: np.ndarray
    offset0: np.ndarray
    lane_start: np.ndarray
    lane: np.ndarray
    offset: np.ndarray
    allocs: list
    retired: tuple

    def records(self) -> list[AccessRecord]:
        """The records as objects (what per-record observers get)."""
        out = []
        allocs, ls, lane, offset = self.allocs, self.lane_start.tolist(), self.lane, self.offset
        cols = (self.seq.tolist(), self.cta.tolist(), self.warp.tolist(), self.site.tolist(), self.alloc.tolist(),
                self.size.tolist(), self.kind.tolist(), self.proxy.tolist(), self.order.tolist(), self.scope.tolist(),
                self.actor.tolist(), self.all_lanes.tolist(), self.scalar.tolist(), self.offset0.tolist())
        for i, (seq, cta, warp, site, a, size, kind, proxy, order, scope, actor, all_lanes, scalar, off0) in \
                enumerate(zip(*cols)):
            s, e = ls[i], ls[i + 1]
            if all_lanes:
                lanes = None
            else:
                lanes = np.zeros(32, dtype=np.bool_)
                lanes[lane[s:e]] = True
            if scalar:
                offs = off0
            else:
                offs = np.zeros(32, dtype=np.int64)
                offs[lane[s:e]] = offset[s:e]
            alloc = allocs[a]
            out.append(AccessRecord(seq, cta, warp, site, self.iters[i], lanes, alloc.space, alloc.id, alloc.name, offs,
                                    size, KINDS[kind], PROXIES[proxy], ORDERS[order], SCOPES[scope], actor))
        return out


class AllocName:
    """A released allocation's entry in the allocation table: what observers read of it."""

    __slots__ = ("space", "id", "name")

    def __init__(self, space: str, id_: int, name: str):
        self.space, self.id, self.name = space, id_, name


class AccessColumns:
    """The engine's access buffer; `rows` takes one `ROW_FIELDS` tuple per memory instruction."""

    __slots__ = ("sinks", "stats", "limit", "rows", "bulks", "bulk_rows", "allocs", "alloc_index", "retired")

    def __init__(self, sinks, stats: dict, limit: int | None = None):
        self.sinks = sinks                 # callables taking an AccessChunk
        self.stats = stats                 # the run's stats: accesses and lane accesses are counted per chunk
        self.limit = limit or CHUNK_ROWS
        self.rows: list = []
        # (seq0, cta, warp, site, iters, lane, alloc, starts, sizes, kind, proxy, actor)
        self.bulks: list = []
        self.bulk_rows = 0
        self.allocs: list = []             # allocation objects in order of first use (kept alive: indexed by id())
        self.alloc_index: dict[int, int] = {}
        self.retired: list = []

    def full(self) -> bool:
        return len(self.rows) + self.bulk_rows >= self.limit

    def bulk(self, seq0: int, cta: int, warp: int, site: int, iters, lane: int, alloc, starts: np.ndarray, sizes,
             kind: str, proxy: str, actor: int) -> None:
        """One async operation's byte runs [starts[i], starts[i] + sizes[i]) of `alloc` (records seq0, seq0 + 1, ..)."""
        starts = np.asarray(starts, dtype=np.int64).reshape(-1)
        if not starts.size:
            return
        # (a size shared by every run stays one int: `_bulk_part` repeats it)
        if not isinstance(sizes, (int, np.integer)):
            sizes = np.broadcast_to(np.asarray(sizes, dtype=np.int64), starts.shape)
        self.bulks.append((seq0, cta, warp, site, iters, lane, alloc, starts, sizes, kind, proxy, actor))
        self.bulk_rows += starts.size
        if self.full():
            self.flush()

    def retire(self, op_id: int) -> None:
        """Async operation `op_id` will make no more accesses."""
        self.retired.append(op_id)

    def pending(self) -> bool:
        return bool(self.rows or self.bulks or self.retired)

    def release(self, allocs) -> None:
        """Allocations whose memory is gone (a CTA exited under residency; flush first): their table entries
        become bare names, so the table no longer keeps their bytes alive.  Observers read only a table
        entry's space, id and name, and the table stays append-only."""
        for a in allocs:
            k = self.alloc_index.pop(id(a), None)
            if k is not None:
                self.allocs[k] = AllocName(a.space, a.id, a.name)

    def flush(self) -> None:
        """Hand what is buffered to the observers as one chunk."""
        if not self.pending():
            return
        chunk = self._chunk()
        self.rows, self.bulks, self.bulk_rows, self.retired = [], [], 0, []
        self.stats["accesses"] += chunk.n
        self.stats["lane_accesses"] += int(chunk.lane.size)
        for sink in self.sinks:
            sink(chunk)

    # ------------------------------------------------------------------ building a chunk
    def _alloc_codes(self, allocs) -> np.ndarray:
        index, table = self.alloc_index, self.allocs
        out = []
        for a in allocs:
            k = index.get(id(a))
            if k is None:
                k = index[id(a)] = len(table)
                table.append(a)
            out.append(k)
        return np.array(out, dtype=np.int32)

    def _chunk(self) -> AccessChunk:
        parts = []
        if self.rows:
            parts.append(self._singles(self.rows))
        if self.bulks:
            parts.append(self._bulk_part(self.bulks))
        c = AccessChunk()
        c.allocs = self.allocs
        c.retired = tuple(self.retired)
        if not parts:
            z = np.zeros(0, dtype=np.int64)
            for name in ("seq", "cta", "warp", "site", "alloc", "kind", "proxy", "order", "scope", "actor", "size",
                         "offset0", "lane", "offset"):
                setattr(c, name, z)
            c.all_lanes = c.scalar = np.zeros(0, dtype=np.bool_)
            c.lane_start = np.zeros(1, dtype=np.int64)
            c.iters = []
            c.n = 0
            return c
        if len(parts) == 1:
            cols, iters, counts, lane, offset = parts[0]
        else:
            cols, iters, counts, lane, offset = _merge(parts)
        for name, v in cols.items():
            setattr(c, name, v)
        c.iters = iters
        c.n = counts.size
        c.lane_start = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=c.lane_start[1:])
        c.lane, c.offset = lane, offset
        return c

    def _singles(self, rows):
        """Columns of the one-instruction records; lanes and offsets flattened (active lanes, ascending)."""
        (seq, cta, warp, site, iters, lanes, allocs, offsets, size, kind, proxy, order, scope, actor) = zip(*rows)
        n = len(rows)
        ndarray = np.ndarray
        all_lanes = np.fromiter((m is None for m in lanes), dtype=np.bool_, count=n)
        scalar = np.fromiter((type(o) is not ndarray for o in offsets), dtype=np.bool_, count=n)
        mask = np.empty((n, 32), dtype=np.bool_)
        mask[all_lanes] = True
        if not all_lanes.all():
            mask[~all_lanes] = np.array([m for m in lanes if m is not None], dtype=np.bool_)
        counts = np.count_nonzero(mask, axis=1)
        # the active lanes' offsets, row by row (a scalar offset repeated over its row's lanes)
        offset = np.empty(int(counts.sum()), dtype=np.int64)
        offset0 = np.zeros(n, dtype=np.int64)
        at_scalar = np.repeat(scalar, counts)
        if scalar.any():
            offset0[scalar] = [o for o in offsets if type(o) is not ndarray]
            offset[at_scalar] = np.repeat(offset0[scalar], counts[scalar])
        if not scalar.all():
            per_lane = np.concatenate([o for o in offsets if type(o) is ndarray]).reshape(-1, 32)
            offset[~at_scalar] = per_lane[mask[~scalar]]
        # kind, proxy, order and scope together: one code per distinct combination
        get = _FLAGS.get
        flags = [get(f, -1) for f in zip(kind, proxy, order, scope)]
        if -1 in flags:
            flags = [_flag(f) if c < 0 else c for f, c in zip(zip(kind, proxy, order, scope), flags)]
        table = np.array(_FLAG_TABLE, dtype=np.int8)[np.array(flags, dtype=np.int32)]
        known = self.alloc_index.get
        alloc = np.array([known(id(a), -1) for a in allocs], dtype=np.int32)
        if (alloc < 0).any():
            alloc = self._alloc_codes(allocs)
        flat = mask.reshape(-1)
        cols = {"seq": np.array(seq, dtype=np.int64), "cta": np.array(cta, dtype=np.int64),
                "warp": np.array(warp, dtype=np.int64), "site": np.array(site, dtype=np.int64),
                "alloc": alloc, "size": np.array(size, dtype=np.int64), "kind": table[:, 0], "proxy": table[:, 1],
                "order": table[:, 2], "scope": table[:, 3], "actor": np.array(actor, dtype=np.int64),
                "all_lanes": all_lanes, "scalar": scalar, "offset0": offset0}
        return cols, list(iters), counts, np.tile(_LANE8, n)[flat], offset

    def _bulk_part(self, bulks):
        """Columns of the bulk records' runs: one row (one lane: the issuing thread's) per run."""
        (seq0, cta, warp, site, iters, lane, allocs, starts, sizes, kind, proxy, actor) = zip(*bulks)
        per = np.array([s.size for s in starts], dtype=np.int64)
        n = int(per.sum())
        first = np.cumsum(per) - per
        within = np.arange(n, dtype=np.int64) - np.repeat(first, per)

        def each(values, dtype):
            return np.repeat(np.array(values, dtype=dtype), per)
        one = np.ones(n, dtype=np.bool_)
        offset = np.concatenate(starts)
        cols = {"seq": each(seq0, np.int64) + within, "cta": each(cta, np.int64), "warp": each(warp, np.int64),
                "site": each(site, np.int64), "alloc": np.repeat(self._alloc_codes(allocs), per),
                "size": _run_sizes(sizes, per),
                "kind": each([_KIND[k] for k in kind], np.int8), "proxy": each([_PROXY[p] for p in proxy], np.int8),
                "order": np.zeros(n, dtype=np.int8), "scope": np.zeros(n, dtype=np.int8),
                "actor": each(actor, np.int64), "all_lanes": ~one, "scalar": one, "offset0": offset}
        iters_out = list(chain.from_iterable(map(repeat, iters, per.tolist())))     # (each run's, per run)
        return cols, iters_out, np.ones(n, dtype=np.int64), each(lane, np.int8), offset


def _run_sizes(sizes: tuple, per: np.ndarray) -> np.ndarray:
    """Each run's size: per bulk record one size for all its runs (an int) or one per run (an array)."""
    if all(isinstance(z, (int, np.integer)) for z in sizes):
        return np.repeat(np.array(sizes, dtype=np.int64), per)
    return np.concatenate([np.full(k, z, dtype=np.int64) if isinstance(z, (int, np.integer)) else z
                           for z, k in zip(sizes, per.tolist())]).astype(np.int64)


def _merge(parts):
    """The parts' rows in seq order (each part is in seq order already)."""
    (c1, i1, n1, l1, o1), (c2, i2, n2, l2, o2) = parts
    seq = np.concatenate([c1["seq"], c2["seq"]])
    order = np.argsort(seq, kind="stable")
    cols = {k: np.concatenate([c1[k], c2[k]])[order] for k in c1}
    iters_all = i1 + i2
    iters = list(map(iters_all.__getitem__, order.tolist()))
    counts = np.concatenate([n1, n2])
    lane = np.concatenate([l1, l2])
    offset = np.concatenate([o1, o2])
    # the flattened lanes follow their rows: each row's block of lanes, taken in the rows' new order (no sort)
    new_counts = counts[order]
    old_start = np.cumsum(counts) - counts
    new_start = np.cumsum(new_counts) - new_counts
    perm = np.arange(int(new_counts.sum())) + np.repeat(old_start[order] - new_start, new_counts)
    return cols, iters, new_counts, lane[perm], offset[perm]
