"""What a chunk's accesses know of their pairs' earlier accesses: the later access's lane's knowledge of the
earlier one's actor (bridged too where proxies differ, and of its issuer where it is async), gathered into the
chunk's `known`, `known_bridged` and `known_issuer` (`analysis.Analysis`).  A strong access gathers at once
(`gather_now`), as do the accesses of a chunk whose pairs cross clock domains (their foreign columns,
`foreign_cols`); a plain access's gather is kept for the chunk's end (`Deferred`).

A plain access only needs what its warp knew at the warp's next event (`analysis.Analysis._flush_warp`).
Gathering that at every flush costs a dozen small numpy calls per flush, and a chunk has tens of thousands
of flushes (a consumer warp's few accesses between two barrier waits).  `Deferred` instead keeps, per flush,
the records and what the warp knew then: its ordinary knowledge and its bridged knowledge per proxy domain as
read-only rows (a warp's shared row is frozen, so its next write copies it: copy-on-write as for forks,
`clocks.Knowledge.frozen`; per-lane rows are copied), its epoch and its bridged own epochs.  `gather` then reads
every kept flush's pairs in one pass: exactly what `gather_now` at each flush would have read, since a snapshot
is what the warp knew there and the rest it reads (the issuing lane of an async earlier access, set at that
operation's issue before any of its accesses) does not change before the chunk's events end.
"""
from __future__ import annotations

import numpy as np

from .clocks import frozen
from .units import DOMAIN_NAMES

_NAMES = ("shared", "global")


def _view(kn) -> tuple:
    """(rows, per lane) of a Knowledge as it is now: its shared row (frozen: shared from now on) or a copy of its
    lane rows."""
    if kn.rows is None:
        return frozen(kn.row), False
    if kn.ledger is not None:
        kn.ledger.copied(32)        # (held until the chunk's gather: the memory budget looks at copies too)
    return kn.rows.copy(), True


class Deferred:
    """The chunk's flushes whose gathers wait (see the module docstring)."""

    __slots__ = ("sels", "ordinary", "bridged", "epoch", "bown", "col0", "dom", "width")

    def __init__(self):
        self._clear()

    def _clear(self) -> None:
        self.sels: list = []
        self.ordinary: list = []       # per flush: (rows, per lane)
        self.bridged: list = []        # per flush: {domain: (rows, per lane)}, or None (nothing bridged yet: zeros)
        self.epoch: list = []
        self.bown: list = []           # per flush: {domain: own bridged epochs per lane}, or None
        self.col0: list = []
        self.dom: list = []
        self.width = -1

    def __len__(self) -> int:
        return len(self.sels)

    def add(self, w, sel: np.ndarray, dom: int, width: int) -> None:
        self.width = width
        self.sels.append(sel)
        self.ordinary.append(_view(w.k))
        if w.has_bridged:
            b = w.bridged
            self.bridged.append({d: _view(b[d]) for d in _NAMES})
            self.bown.append({d: w.bown[d].copy() for d in _NAMES})
        else:
            self.bridged.append(None)
            self.bown.append(None)
        self.epoch.append(w.epoch)
        self.col0.append(w.col0)
        self.dom.append(dom)

    def gather(self, c, flow) -> None:
        """Every kept flush's pairs: c.known, c.known_bridged and c.known_issuer as `gather_now` sets them."""
        if not self.sels:
            return
        P = c.pairs
        sizes = np.array([s.size for s in self.sels], dtype=np.int64)
        sel = np.concatenate(self.sels)
        q, cnt = pair_positions(P, sel)
        if q.size:
            item = np.repeat(np.repeat(np.arange(sizes.size), sizes), cnt)
            lanes, cols = P.cur_lane[q], c.pcol[q]
            epoch = np.array(self.epoch, dtype=np.int64)
            col0 = np.array(self.col0, dtype=np.int64)
            c.known[q] = self._known(self.ordinary, item, lanes, cols, col0, epoch[item])
            for name, mm in bridged_by_domain(c, q):
                c.known_bridged[q[mm]] = self._bridged(name, item[mm], lanes[mm], cols[mm], col0)
            m = maybe_unordered_async(c, q)
            if m.size:
                wdom = np.array(self.dom, dtype=np.int64)[item[m]]
                issuer, lost = flow.issuer_cols(c.units.actor[P.prior[q[m]]], cols[m], wdom)
                known = self._known(self.ordinary, item[m], lanes[m], issuer, col0, epoch[item[m]])
                c.known_issuer[q[m]] = np.where(lost, 0, known)
        self._clear()

    def _bridged(self, name: str, item, lanes, cols, col0) -> np.ndarray:
        """Bridged knowledge for domain `name`: zero where the warp had bridged nothing yet (its own epochs too)."""
        out = np.zeros(item.size, dtype=np.int32)
        has = np.array([b is not None for b in self.bridged], dtype=np.bool_)[item]
        h = np.flatnonzero(has)
        if h.size:
            views = [b[name] if b is not None else None for b in self.bridged]
            zero = np.zeros(32, dtype=np.int32)
            bown = np.stack([b[name] if b is not None else zero for b in self.bown])
            out[h] = self._known(views, item[h], lanes[h], cols[h], col0, bown[item[h], lanes[h]])
        return out

    @staticmethod
    def _known(views: list, item, lanes, cols, col0, own_value) -> np.ndarray:
        """known[j] = what lane lanes[j] knew at flush item[j] of column cols[j] (its own column: `own_value`)."""
        index: dict = {}
        rows: list = []
        nrows = 0
        base = np.zeros(len(views), dtype=np.int64)
        per_lane = np.zeros(len(views), dtype=np.bool_)
        used = np.zeros(len(views), dtype=np.bool_)
        used[item] = True
        for i in np.flatnonzero(used).tolist():
            r, lane_rows = views[i]
            k = index.get(id(r))
            if k is None:
                k = index[id(r)] = nrows
                rows.append(r if lane_rows else r[None, :])
                nrows += rows[-1].shape[0]
            base[i] = k
            per_lane[i] = lane_rows
        table = np.concatenate(rows) if len(rows) > 1 else rows[0]
        at = base[item] + np.where(per_lane[item], lanes, 0)
        known = table[at, cols]
        own = cols == col0[item] + lanes
        return np.where(own, own_value, known)


def gather_now(c, flow, w, sel: np.ndarray) -> None:
    """For the pairs closed by the chunk's records `sel` (one warp's): what the accessing lane knows of the earlier
    access's actor (bridged too where proxies differ; and of its issuer where it is async)."""
    P = c.pairs
    q, _ = pair_positions(P, sel)
    if not q.size:
        return
    lanes, cols = P.cur_lane[q], c.pcol[q]
    unknown = None
    if c.xdom is not None:
        cols, unknown = foreign_cols(c, flow, q, cols)
    c.known[q] = w.known(lanes, cols)
    if c.cross_any[sel].any():
        for name, mm in bridged_by_domain(c, q):
            c.known_bridged[q[mm]] = w.known(lanes[mm], cols[mm], name)
    if c.async_prior_any[sel].any():
        m = maybe_unordered_async(c, q)
        if m.size:
            issuer, lost = flow.issuer_cols(c.units.actor[P.prior[q[m]]], cols[m], flow.domain[w.id])
            c.known_issuer[q[m]] = np.where(lost, 0, w.known(lanes[m], issuer))
    if unknown is not None:
        unknown_pairs(c, q[unknown])


def pair_positions(P, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the pairs of each record in `sel`, one range after another; each record's pair count)."""
    s = P.start[sel]
    cnt = P.start[sel + 1] - s
    total = int(cnt.sum())
    return np.arange(total) + np.repeat(s - (np.cumsum(cnt) - cnt), cnt), cnt


def bridged_by_domain(c, q: np.ndarray):
    """(domain name, positions in `q`) of the pairs judged on bridged knowledge, per proxy domain of the later
    access."""
    m = np.flatnonzero(c.need_bridged[q])
    if not m.size:
        return
    dom = c.cur_bits[q[m]] >> 1
    for d, name in DOMAIN_NAMES.items():
        mm = m[dom == d]
        if mm.size:
            yield name, mm


def maybe_unordered_async(c, q: np.ndarray) -> np.ndarray:
    """Positions in `q` of the pairs with an async earlier access that knowledge (gathered so far, bridged where
    judged so) leaves unordered: only a race's witness reads `known_issuer`, and a race is such a pair."""
    a = np.flatnonzero((c.prior_bits[q] & 2) != 0)
    if not a.size:
        return a
    qa = q[a]
    known = c.known[qa]
    bridged = c.need_bridged[qa]
    if bridged.any():
        known = np.where(bridged, np.minimum(known, c.known_bridged[qa]), known)
    return a[known < c.units.stamp[c.pairs.prior[qa]]]


def foreign_cols(c, flow, q: np.ndarray, cols: np.ndarray):
    """The columns pairs `q` ask about, in the later access's clock domain: an earlier access of another domain's
    lane is known by that lane's foreign column (`foreign`).  Returns (columns, positions in `q` of the pairs whose
    earlier lane has no foreign column: nothing of it crossed, known as zero)."""
    assert c.xdom is not None and flow.foreign is not None
    U, P = c.units, c.pairs
    pr = P.prior[q]
    x = np.flatnonzero(c.xdom[q])
    if not x.size:
        return cols, x
    act = U.actor[pr[x]]
    f = np.empty(x.size, dtype=np.int64)
    lane = act < 0
    f[lane] = flow.foreign.lookup(U.warp[pr[x[lane]]], cols[x[lane]])
    if not lane.all():                 # an async operation of another domain: its foreign column
        ops, inv = np.unique(act[~lane], return_inverse=True)
        f[~lane] = np.array([flow.foreign.op_col(o) for o in ops.tolist()], dtype=np.int64)[inv]
    cols = cols.copy()
    cols[x] = np.maximum(f, 0)
    return cols, x[f < 0]


def unknown_pairs(c, q: np.ndarray) -> None:
    """Pairs `q` know nothing of their earlier access (its lane's knowledge never reached the later one's domain)."""
    if q.size:
        c.known[q] = c.known_bridged[q] = c.known_issuer[q] = 0
