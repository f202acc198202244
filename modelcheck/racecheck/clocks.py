"""Happens-before knowledge for Racecheck: vector clocks with lanes as actors.

Columns: one per lane of every warp of the warp's clock domain (`col0 + lane`: the whole grid,
or the warp's cluster when nothing can order warps of different clusters, `flow.Flow`), then one
per async operation.  A warp's epoch counts its release-like operations; an access is stamped
(actor column, epoch), an async operation's accesses (column, 1).  Lane `m` of warp `w`
knows actor column `a` up to `row(m)[a]`; its own column is always its warp's current
epoch (program order).  No implicit order between lanes of a warp: only warp syncs,
barriers and release/acquire put one lane's epoch into another's row.

Lanes of a warp usually know the same things, so a warp keeps one shared row and
splits into 32 rows only when a subset of lanes acquires something the others do not
(an elected wait); a full-warp sync joins them back.  The same structure holds the
knowledge that has crossed a `fence.proxy.async` ("bridged"), per proxy domain.

A row nobody has written yet (a warp of a CTA not yet started, the tcgen05 knowledge of a warp that
has no tcgen05 work, a lane's fence row) is the flow's one read-only zero row (`zero_row`), shared:
a grid of thousands of CTAs holds rows only for the warps that have learned something, and a
widening copies only those (`Ledger` counts them and charges them to the run's memory budget).
A write to the shared row would raise (read-only), so no row is changed behind another's back.
The same copy-on-write shares a warp's row with the async operations it issues while it learns
nothing new (`Knowledge.frozen`: a fork is the issuing lane's row, read-only, plus its own column
at the issue's epoch, which the flow applies when it reads the fork): a producer issuing many
copies per stage holds one row for them, not one per copy.

Async columns come and go: the analysis gives an operation a column when it is issued and
takes it back once nothing can ask about the operation any more, so the rows stay as wide
as the operations in flight, not as the run (`resize`: keep these columns, in order, then
zeros up to the new width; lane columns always stay first).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

FULL = np.ones(32, dtype=np.bool_)
LANES = np.arange(32)
_LANES_OF: dict[bytes, np.ndarray] = {}


def lanes_of(mask) -> np.ndarray:
    """The lane numbers set in a 32-lane mask (None = all), memoized: the same few masks recur all run long."""
    if mask is None:
        return LANES
    key = mask.tobytes()
    lanes = _LANES_OF.get(key)
    if lanes is None:
        lanes = _LANES_OF[key] = np.flatnonzero(mask)
    return lanes


_ZERO: dict[int, np.ndarray] = {}


def zero_row(width: int) -> np.ndarray:
    """The shared read-only all-zero row of `width` columns (what a row nobody wrote knows)."""
    row = _ZERO.get(width)
    if row is None:
        # (kept for the run: a flow passes through a few dozen widths at most)
        row = _ZERO[width] = np.zeros(width, dtype=np.int32)
        row.flags.writeable = False
    return row


def is_zero_row(row) -> bool:
    """Is `row` a shared zero row (never written: it knows nothing)?"""
    return row is not None and _ZERO.get(row.shape[-1]) is row


def frozen(row: np.ndarray) -> np.ndarray:
    """`row` made read-only: it is shared from now on (a fork), and its holder copies it before a write."""
    if row.flags.writeable:
        row.flags.writeable = False
    return row


def resize(row: np.ndarray, keep: np.ndarray, width: int) -> np.ndarray:
    """row[..., keep] followed by zero columns up to `width` (row: (A,) or (32, A)); a shared zero row stays one."""
    if is_zero_row(row):
        return zero_row(width)
    out = np.zeros(row.shape[:-1] + (width,), dtype=row.dtype)
    out[..., :keep.size] = row[..., keep]
    return out


def resize_shared(memo: dict, row: np.ndarray, keep: np.ndarray, width: int) -> np.ndarray:
    """`resize` of a row others may share: each shared row once (`memo`: id -> (row, resized); holding the row keeps
    its id from being reused while the memo lives), and the result shared (read-only) too."""
    hit = memo.get(id(row))
    if hit is None:
        hit = memo[id(row)] = (row, frozen(resize(row, keep, width)))
    return hit[1]


def fork_table(forks: dict, ops: list, col0: np.ndarray):
    """The forks (`flow.Flow.fork`: op -> (shared row, bridged, (warp, lane, epoch))) of `ops` for gathering: (rows:
    one per distinct shared row, which: ops[i]'s row in `rows`, own: ops[i]'s own column, epoch: its value there)."""
    index: dict = {}
    rows: list[np.ndarray] = []
    which: list[int] = []
    own: list[int] = []
    epoch: list[int] = []
    for op in ops:
        row, _, (warp, lane, e) = forks[op]
        k = index.get(id(row))
        if k is None:
            k = index[id(row)] = len(rows)
            rows.append(row)
        which.append(k)
        own.append(int(col0[warp]) + lane)
        epoch.append(e)
    return (np.stack(rows), np.array(which, dtype=np.int64), np.array(own, dtype=np.int64),
            np.array(epoch, dtype=np.int32))


def fork_known(table, i: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """known[j] = what the fork of ops[i[j]] (`fork_table(.., ops, ..)`) knows of column cols[j]."""
    rows, which, own, epoch = table
    known = rows[which[i], cols]
    return np.where(cols == own[i], epoch[i], known)


class Ledger:
    """How many rows of its own a flow's knowledge holds (shared zero rows cost nothing), charged to the run's
    memory budget as they are made, a step at a time: rows materialize one by one as warps start, and a
    launch-wide domain makes each row megabytes wide."""

    __slots__ = ("rows", "meter", "bytes_since", "width", "peak")

    STEP = 32 << 20            # bytes of new rows between two looks at the process's growth

    def __init__(self, width: int):
        self.rows = 0
        self.peak = 0                # the most rows held at once (rows go when their warp exits: `WarpState.retire`)
        self.meter = None
        self.bytes_since = 0
        self.width = width

    def made(self, nrows: int) -> None:
        """`nrows` warp rows made (< 0: freed by retired warps, which the next rows reuse before the process
        grows: they credit the step)."""
        self.rows += nrows
        if self.rows > self.peak:
            self.peak = self.rows
        if nrows < 0:
            self.bytes_since += nrows * self.width * 4
        else:
            self.copied(nrows)

    def copied(self, nrows: int) -> None:
        """`nrows` rows were made (a warp's, or a copy no warp counts as its own: a fork's, a shared row copied
        before a write): every STEP bytes of them, the process's growth is looked at."""
        if nrows <= 0:
            return
        self.bytes_since += nrows * self.width * 4
        if self.bytes_since >= self.STEP:
            self.bytes_since = 0
            if self.meter is not None:
                self.meter.headroom(self.STEP, f"Racecheck's vector clocks ({self.rows:,} rows of {self.width:,} "
                                               f"columns held by the warps that have learned something, besides "
                                               f"the rows of async operations' forks)")


class Knowledge:
    """One warp's knowledge: a row (A,) its lanes share, or per-lane rows (32, A); until something is learned the
    row is the shared zero row (`zero_row`), made the warp's own on the first write (`own`)."""

    __slots__ = ("row", "rows", "ledger", "handed")

    # exactly one of the two is an array, the other None (a warp splits and joins in place); typed loosely so the
    # hot paths need no narrowing at every use
    row: Any
    rows: Any

    def __init__(self, width: int, ledger: Ledger | None = None):
        self.row = zero_row(width)
        self.rows = None
        self.ledger = ledger
        # split lanes: the read-only row last handed out per lane (or lane mask), held weakly (it lives as long as a
        # fork holds it); handed out again while the lanes still know exactly that (`_hand`)
        self.handed: dict | None = None

    def row_count(self) -> int:
        """How many rows of the flow's width it holds (0 while it knows nothing, 1, or 32 once its lanes' knowledge
        differs)."""
        if self.rows is None:
            return 0 if is_zero_row(self.row) else 1
        return len(self.rows)

    def own(self) -> np.ndarray:
        """The row its lanes share, made writable: a copy if it was the zero row or a row forks share."""
        row = self.row
        if not row.flags.writeable:
            if self.ledger is not None:
                if is_zero_row(row):
                    self.ledger.made(1)
                else:
                    self.ledger.copied(1)      # (the shared row stays, held by forks)
            row = self.row = row.copy()
        return row

    def frozen(self, lane: int) -> np.ndarray:
        """What lane `lane` knows now, as a read-only row: the shared row itself (the next write copies it), or a
        copy of the lane's row."""
        if self.rows is None:
            return frozen(self.row)
        return self._hand(lane, self.rows[lane], fresh=False)

    def meet_frozen(self, mask) -> np.ndarray:
        """`meet`, read-only, sharing the row when the lanes share one."""
        if self.rows is None:
            return frozen(self.row)
        return self._hand(b"" if mask is None else mask.tobytes(), self.rows[lanes_of(mask)].min(axis=0), fresh=True)

    def _hand(self, key, row: np.ndarray, fresh: bool) -> np.ndarray:
        """`row` (what split lanes know) as a read-only row: the one handed out last for `key` while it is still
        alive and equal, else a copy.  A lane issuing several operations between two things it learns gives them
        one row, not one each (the rows are the flow's width: a copy per operation is what grows with it).
        `fresh`: `row` is a new array nothing else holds (else it is copied)."""
        handed = self.handed
        if handed is None:
            handed = self.handed = {}
        ref = handed.get(key)
        last = ref() if ref is not None else None
        if last is not None and last.shape == row.shape and np.array_equal(last, row):
            return last
        out = frozen(row if fresh else row.copy())
        if self.ledger is not None:
            self.ledger.copied(1)
        handed[key] = weakref.ref(out)
        return out

    def lane_rows(self) -> np.ndarray:
        if self.rows is None:
            if self.ledger is not None:
                self.ledger.made(32 if is_zero_row(self.row) else 31)
            self.rows = np.repeat(self.row[None, :], 32, axis=0)
            self.row = None
        return self.rows

    def merge(self, mask, payload: np.ndarray) -> None:
        """Lanes in `mask` (None = all) learn `payload`."""
        if mask is None or (self.rows is None and mask.all()):
            if self.rows is None:
                if payload is self.row or is_zero_row(payload):
                    return
                if is_zero_row(self.row) and payload.shape == self.row.shape and payload.base is None:
                    # knowing nothing yet, the lanes know exactly the payload: share it (copy on the next write; a
                    # view is not shared, since its base could still be written)
                    self.row = frozen(payload)
                    if self.ledger is not None:
                        self.ledger.made(1)
                    return
                row = self.own()
                np.maximum(row, payload, out=row)
            else:
                np.maximum(self.rows, payload[None, :], out=self.rows)
            return
        rows = self.lane_rows()
        idx = lanes_of(mask)
        rows[idx] = np.maximum(rows[idx], payload[None, :])

    def join(self, mask) -> np.ndarray:
        """The union of what the lanes in `mask` know."""
        if self.rows is None:
            return self.row.copy()
        if mask is None:
            return self.rows.max(axis=0)
        return self.rows[lanes_of(mask)].max(axis=0)

    def set_all(self, mask, payload: np.ndarray) -> None:
        """Lanes in `mask` know exactly `payload` joined with what they knew (a warp-sync join)."""
        if mask is None or mask.all():
            if self.rows is None:
                if is_zero_row(self.row) and self.ledger is not None:
                    self.ledger.made(1)
                self.row = payload.copy()
            else:
                if self.ledger is not None:
                    self.ledger.made(-31)
                self.row = np.maximum(self.rows.max(axis=0), payload)
            self.rows = None
            return
        self.merge(mask, payload)

    def known(self, lanes: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """known[i] = what lane lanes[i] knows of actor column cols[i]."""
        if self.rows is None:
            return self.row[cols]
        return self.rows[lanes, cols]

    def learn_column(self, mask, col: int, value: int = 1) -> None:
        if mask is None or (self.rows is None and mask.all()):
            if self.rows is None:
                if self.row[col] < value:
                    self.own()[col] = value
            else:
                np.maximum(self.rows[:, col], value, out=self.rows[:, col])
            return
        rows = self.lane_rows()
        idx = lanes_of(mask)
        rows[idx, col] = np.maximum(rows[idx, col], value)

    def learn_columns(self, mask, cols: np.ndarray, value: int) -> None:
        """Lanes in `mask` learn actor columns `cols` up to `value`."""
        if not cols.size:
            return
        if mask is None or (self.rows is None and mask.all()):
            if self.rows is None:
                row = self.own()
                row[cols] = np.maximum(row[cols], value)
            else:
                self.rows[:, cols] = np.maximum(self.rows[:, cols], value)
            return
        rows = self.lane_rows()
        idx = lanes_of(mask)
        sub = rows[np.ix_(idx, cols)]
        rows[np.ix_(idx, cols)] = np.maximum(sub, value)

    def absorb(self, mask, other: "Knowledge") -> None:
        """Lanes in `mask` learn what the same lanes know in `other`."""
        if other.rows is None:
            self.merge(mask, other.row)
            return
        rows = self.lane_rows()
        idx = lanes_of(mask)
        rows[idx] = np.maximum(rows[idx], other.rows[idx])

    def meet(self, mask) -> np.ndarray:
        """What every lane in `mask` knows (a warp-collective operation is ordered after only that)."""
        if self.rows is None:
            return self.row.copy()
        return self.rows[lanes_of(mask)].min(axis=0)

    def resize(self, keep: np.ndarray, width: int, memo: dict | None = None) -> None:
        """`resize` the rows; a row shared with others (read-only) once per `memo`, so it stays shared."""
        self.handed = None
        if self.rows is None:
            if memo is not None and not self.row.flags.writeable:
                self.row = resize_shared(memo, self.row, keep, width)
            else:
                self.row = resize(self.row, keep, width)
        else:
            self.rows = resize(self.rows, keep, width)



class WarpState:
    """Knowledge (ordinary, and bridged per proxy domain) and the epoch of one warp.

    A lane's own column is never read from the rows: ordinary knowledge of itself is the
    current epoch (program order); bridged knowledge of itself is the epoch of its last
    `fence.proxy.async` for that domain (`bown`)."""

    __slots__ = ("id", "cta", "col0", "epoch", "k", "_bridged", "ledger", "bown", "fence_row", "pending_acquire",
                 "async_uncommitted", "async_groups", "groups_read", "has_bridged", "tc", "tc_fenced", "tc_pending")

    tc_fenced: Knowledge           # set by `tc_start`
    tc_pending: Knowledge

    def __init__(self, wid: int, cta: int, width: int, col0: int | None = None, ledger: Ledger | None = None):
        self.id = wid
        self.ledger = ledger
        self.cta = cta
        self.col0 = wid * 32 if col0 is None else col0      # its lane 0's column (flow.Flow: cluster-local)
        self.epoch = 1
        self.k = Knowledge(width, ledger)
        self._bridged: dict[str, Knowledge] | None = None     # made on first use (`bridged`): zeros until then
        self.bown = {"shared": np.zeros(32, dtype=np.int32), "global": np.zeros(32, dtype=np.int32)}
        self.has_bridged = False    # nothing bridged yet: bridged knowledge is all zeros, skip its bookkeeping
        self.fence_row: dict[int, np.ndarray] = {}        # lane -> knowledge at its last fence.acq_rel/sc
        self.pending_acquire: dict[int, list] = {}        # lane -> payloads read relaxed, acquired at a fence
        self.async_uncommitted: dict[str, dict[int, list]] = {"bulk": {}, "cp.async": {}}
        self.async_groups: dict[str, dict[int, list]] = {"bulk": {}, "cp.async": {}}
        # lane -> how many of its oldest groups a wait_group.read found read: they stay pending (in async_groups)
        # until a wait_group without .read retires their writes
        self.groups_read: dict[str, dict[int, int]] = {"bulk": {}, "cp.async": {}}
        # tcgen05 ordering (docs/semantics.md#tcgen05-and-tmem), only for kernels with tcgen05 operations: what the
        # lanes' next tcgen05 operations are ordered after (`tc`: 1 = issued before them in a pipelined order,
        # 2 = completed), the part published at the last fence::before_thread_sync, and what thread syncs brought
        # in that takes effect only at the next fence::after_thread_sync
        # (tc_fenced and tc_pending exist from `tc_start` on, exactly when tc is not None)
        self.tc: Knowledge | None = None

    @property
    def bridged(self) -> dict[str, Knowledge]:
        """Bridged knowledge per proxy domain (all zeros until something is bridged: made when first asked)."""
        if self._bridged is None:
            width = self.k.row.size if self.k.rows is None else self.k.rows.shape[1]
            self._bridged = {"shared": Knowledge(width, self.ledger), "global": Knowledge(width, self.ledger)}
        return self._bridged

    def own_cols(self, mask) -> np.ndarray:
        return self.col0 + lanes_of(mask)

    def known(self, lanes: np.ndarray, cols: np.ndarray, domain: str | None = None) -> np.ndarray:
        """What lane lanes[i] knows (ordinarily, or bridged for `domain`) of actor column cols[i]."""
        if domain is None:
            base = self.k.known(lanes, cols)
            own_value = self.epoch
        else:
            base = self.bridged[domain].known(lanes, cols)
            own_value = self.bown[domain][lanes]
        own = cols == self.col0 + lanes
        if own.any():
            base = np.where(own, own_value, base)
        return base

    def known_block(self, lanes: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """known[i, j] = what lane lanes[i] knows of actor column cols[j] (ordinary knowledge)."""
        if self.k.rows is None:
            block = np.broadcast_to(self.k.row[cols][None, :], (lanes.size, cols.size)).copy()
        else:
            block = self.k.rows[lanes][:, cols]
        own = cols[None, :] == (self.col0 + lanes)[:, None]
        if own.any():
            block[own] = self.epoch
        return block

    def release(self, mask) -> np.ndarray:
        """What lanes in `mask` publish (their knowledge plus their own epochs); ticks the epoch."""
        payload = self.k.join(mask)
        if mask is None:
            payload[self.col0:self.col0 + 32] = self.epoch
        else:
            payload[self.own_cols(mask)] = self.epoch
        self.epoch += 1
        return payload

    def release_bridged(self, mask, domain: str) -> np.ndarray:
        payload = self.bridged[domain].join(mask)
        lanes = lanes_of(mask)
        payload[self.col0 + lanes] = np.maximum(payload[self.col0 + lanes], self.bown[domain][lanes])
        return payload

    def fork_row(self, lane: int) -> np.ndarray:
        """Lane `lane`'s knowledge now, read-only and maybe shared, without its own column (`snapshot` sets that to
        the current epoch; a fork keeps the epoch beside the row)."""
        return self.k.frozen(lane)

    def snapshot(self, lane: int) -> np.ndarray:
        """Lane `lane`'s knowledge now (own column = current epoch): an async operation's fork."""
        row = self.k.row.copy() if self.k.rows is None else self.k.rows[lane].copy()
        row[self.col0 + lane] = self.epoch
        return row

    def bridged_snapshot(self, lane: int, domain: str) -> np.ndarray:
        b = self.bridged[domain]
        row = b.row.copy() if b.rows is None else b.rows[lane].copy()
        row[self.col0 + lane] = self.bown[domain][lane]
        return row

    def fence_proxy(self, mask, domains) -> None:
        """fence.proxy.async: what these lanes know, and their own history so far, becomes bridged."""
        self.has_bridged = True
        for d in domains:
            b = self.bridged[d]
            if self.k.rows is None:
                b.merge(mask, self.k.row)
            else:
                rows = b.lane_rows()
                idx = lanes_of(mask)
                rows[idx] = np.maximum(rows[idx], self.k.rows[idx])
            if mask is None:
                self.bown[d][:] = self.epoch
            else:
                self.bown[d][mask] = self.epoch
        self.epoch += 1

    def acquire(self, mask, payload: np.ndarray, bridged: dict | None = None) -> None:
        self.k.merge(mask, payload)
        if bridged:
            self.has_bridged = True
            for d, p in bridged.items():
                self.bridged[d].merge(mask, p)

    def tc_start(self, width: int) -> None:
        self.tc, self.tc_fenced, self.tc_pending = (Knowledge(width, self.ledger) for _ in range(3))

    def tc_release(self, mask) -> np.ndarray:
        """A thread sync publishes the tcgen05 knowledge these lanes had at their last before_thread_sync, and
        passes on what earlier thread syncs brought them (a chain of syncs needs the fences only at its ends)."""
        return np.maximum(self.tc_fenced.join(mask), self.tc_pending.join(mask))

    def row_count(self) -> int:
        """How many rows of the flow's width this warp holds (what a widening copies)."""
        n = self.k.row_count() + sum(b.row_count() for b in (self._bridged or {}).values())
        if self.tc is not None:
            n += self.tc.row_count() + self.tc_fenced.row_count() + self.tc_pending.row_count()
        return n + len(self.fence_row) + sum(len(rows) for rows in self.pending_acquire.values())

    def retire(self) -> None:
        """The warp has exited: its rows go (back to the shared zero row; the ledger is told).  Exact because what
        the warp knows is read only by its own later events and accesses (there are none after its exit: NumSim's
        `warp.exit` comes after them in seq order, and the analysis handles a warp's accesses before its next event);
        what it passed on (forks, barrier payloads, release rows) are rows of their own.  Its async groups stay: a
        later cp.async.mbarrier.arrive completion reads them."""
        # (pending acquires are release rows the flow holds and charges, not the warp's)
        n = self.row_count() - sum(len(rows) for rows in self.pending_acquire.values())
        width = self.k.row.size if self.k.rows is None else self.k.rows.shape[1]
        self.k = Knowledge(width, self.ledger)
        self._bridged = None
        self.has_bridged = False
        self.fence_row = {}
        self.pending_acquire = {}
        if self.tc is not None:
            self.tc_start(width)
        if self.ledger is not None and n:
            self.ledger.made(-n)

    def resize(self, keep: np.ndarray, width: int, memo: dict | None = None) -> None:
        """Keep the knowledge of columns `keep` (see `resize`); every row this warp holds (shared rows stay shared
        through `memo`)."""
        self.k.resize(keep, width, memo)
        for b in (self._bridged or {}).values():
            b.resize(keep, width, memo)
        if self.tc is not None:
            for kn in (self.tc, self.tc_fenced, self.tc_pending):
                kn.resize(keep, width, memo)
        self.fence_row = {lane: resize(r, keep, width) for lane, r in self.fence_row.items()}
        self.pending_acquire = {lane: [resize(r, keep, width) for r in rows]
                                for lane, rows in self.pending_acquire.items()}


class Warps:
    """The flow's warps by id, each made on first use: a warp no event or access has named yet (one of a CTA not
    yet started) knows nothing beyond its launch, so it holds no state at all, and widenings and compactions
    (`made`) touch only the warps that exist."""

    __slots__ = ("n", "wpc", "col0", "ledger", "width", "tc", "made")

    def __init__(self, n: int, warps_per_cta: int, col0: list, ledger: Ledger):
        self.n, self.wpc, self.col0, self.ledger = n, max(warps_per_cta, 1), col0, ledger
        self.width = ledger.width
        self.tc = False              # tcgen05 knowledge started (`WarpState.tc_start` for every warp made)
        self.made: dict[int, WarpState] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, wid: int) -> WarpState:
        w = self.made.get(wid)
        if w is None:
            if -self.n <= wid < 0:        # as a list indexes (the flow's warps were one)
                return self[wid + self.n]
            if not 0 <= wid < self.n:
                raise IndexError(wid)
            w = self.made[wid] = WarpState(wid, wid // self.wpc, self.width, self.col0[wid], self.ledger)
            if self.tc:
                w.tc_start(self.width)
        return w

    def __iter__(self):
        """The warps made so far (the others are all zeros)."""
        return iter(list(self.made.values()))
