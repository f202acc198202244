"""Foreign columns: split clocks that stay exact when knowledge crosses clusters
(docs/semantics.md#racecheck-at-grid-scale).

With split clocks a row's columns are its own cluster's: column `32·p + l` is lane `l` of the warp at place `p` of
the row's cluster (`flow.Flow`), and its async columns number its own cluster's async operations (`Flow.column`),
so the columns of two clusters alias.  Knowledge crosses clusters only through morally strong `.gpu`/`.sys`
accesses (`racecheck.domains`); where it does, the payload is translated into the receiving cluster's columns
(`translate`): each sender lane and each sender async operation it knows something of gets one column of its own
(a foreign column, keyed by the launch-wide lane or operation, given on demand and unique over the launch: no
domain numbers an operation there), and what the payload knew of the receiver's own lanes and operations through
such columns folds back into the receiver's own columns.  A row is then a dense block for its own cluster plus
columns only for what knowledge actually came from; with no crossing it is exactly the split row.  So every
answer is the whole-grid clocks' answer:

- a lane's knowledge of a lane or operation of its own cluster is in its own column (never in a foreign column:
  `translate` folds those back, so no value is split between two columns);
- of a lane or operation of another cluster, in its foreign column, or zero if none was ever given (nothing of
  it crossed into any row) — `lookup`, `lane_col`, `op_col`.

A lane's foreign column is kept for the rest of the run (compactions keep it): a lane's history may be asked about
as long as any row knows it.  An operation's goes when the flow forgets the operation (`forget`).
"""
from __future__ import annotations

import numpy as np


class Foreign:
    """The foreign lane columns of a flow with split clocks (`flow.Flow.foreign`)."""

    __slots__ = ("fl", "col", "nl", "ops", "_members", "_home", "_home_ops")

    def __init__(self, flow):
        self.fl = flow
        self.nl = flow.nlanes
        self.col = np.full(flow.nw * 32, -1, dtype=np.int64)   # launch-wide lane (32 * warp + lane) -> its column
        self._members: dict[int, np.ndarray] = {}              # domain -> its warps by place
        self._home: dict[int, tuple] = {}                       # domain -> (foreign columns, lane columns) of its lanes
        self.ops: dict[int, int] = {}                           # async op -> its foreign column
        self._home_ops: dict[int, tuple] = {}                   # domain -> (foreign columns, own columns) of its ops

    def __len__(self) -> int:
        return int((self.col >= 0).sum()) + len(self.ops)

    def columns(self) -> np.ndarray:
        """Every foreign column (what a compaction keeps)."""
        ops = np.fromiter(self.ops.values(), dtype=np.int64, count=len(self.ops))
        return np.concatenate([self.col[self.col >= 0], ops])

    def renumber(self, new_col: np.ndarray) -> None:
        """After a compaction: old column c is new_col[c]."""
        have = self.col >= 0
        self.col[have] = new_col[self.col[have]]
        self.ops = {op: int(new_col[c]) for op, c in self.ops.items()}
        self._home, self._home_ops = {}, {}

    def forget(self, ops) -> None:
        """Operations nothing asks about any more: their foreign columns go (a compaction drops them)."""
        if self.ops:
            for op in ops:
                if self.ops.pop(op, None) is not None:
                    self._home_ops = {}

    def op_col(self, op: int) -> int:
        """The foreign column of async operation `op` (-1: none, nothing of it crossed)."""
        return self.ops.get(op, -1)

    def lane_col(self, warps: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        """The foreign columns of lanes `lanes` of warps `warps` (-1: none)."""
        return self.col[warps * 32 + lanes]

    def members(self, dom: int) -> np.ndarray:
        m = self._members.get(dom)
        if m is None:
            fl = self.fl
            warps = np.flatnonzero(fl.domain == dom)
            m = np.full(self.nl // 32, -1, dtype=np.int64)
            m[fl.layout.local[warps]] = warps
            self._members[dom] = m
        return m

    def _give(self, lanes: np.ndarray) -> np.ndarray:
        """The columns of launch-wide lanes `lanes`, given where missing (the rows may widen: columns keep their
        numbers then)."""
        cols = self.col[lanes]
        missing = np.unique(lanes[cols < 0])
        if missing.size:
            for lane in missing.tolist():
                self.col[lane] = self.fl.new_column()
            self._home = {}
            cols = self.col[lanes]
        return cols

    def _home_of(self, dom: int) -> tuple:
        """(foreign columns, lane-block columns) of the lanes of `dom` that have foreign columns."""
        h = self._home.get(dom)
        if h is None:
            lanes = np.flatnonzero(self.col >= 0)
            warps = lanes // 32
            mine = lanes[self.fl.domain[warps] == dom]
            h = self._home[dom] = (self.col[mine], self.fl.col0[mine // 32] + mine % 32)
        return h

    def _home_ops_of(self, dom: int) -> tuple:
        """(foreign columns, own columns) of the operations of `dom` that have foreign columns."""
        h = self._home_ops.get(dom)
        if h is None:
            fl = self.fl
            mine = [(c, fl.async_col[op]) for op, c in self.ops.items() if fl.op_dom.get(op) == dom]
            h = self._home_ops[dom] = (np.array([m[0] for m in mine], dtype=np.int64),
                                       np.array([m[1] for m in mine], dtype=np.int64))
        return h

    def translate(self, row: np.ndarray, src: int, dst: int) -> np.ndarray:
        """`row` (one row), knowledge in domain `src`'s columns, in domain `dst`'s columns (a new row; `row` itself if
        the domains are the same)."""
        if src == dst:
            return row
        fl = self.fl
        local = np.flatnonzero(row[:self.nl])
        cols = None
        if local.size:
            members = self.members(src)
            cols = self._give(members[local // 32] * 32 + local % 32)
        # src's own async operations it knows something of (a forgotten one's stale column is dropped)
        mine = fl.dom_ops.get(src, {})
        acols = afrom = np.zeros(0, dtype=np.int64)
        if mine:
            ops = [(op, c) for op, c in mine.items() if c < row.size and row[c]]
            if ops:
                afrom = np.array([c for _, c in ops], dtype=np.int64)
                acols = np.array([self._give_op(op) for op, _ in ops], dtype=np.int64)
        fc = self.columns()
        fc = fc[fc < row.size]
        out = np.zeros(fl.width, dtype=row.dtype)   # (a widening keeps column numbers: the old row's still hold)
        out[fc] = row[fc]                           # foreign columns pass on unchanged
        if cols is not None:
            out[cols] = np.maximum(out[cols], row[local])
        if acols.size:
            out[acols] = np.maximum(out[acols], row[afrom])
        for fcols, home in (self._home_of(dst), self._home_ops_of(dst)):
            if fcols.size:
                out[home] = np.maximum(out[home], out[fcols])
                out[fcols] = 0
        return out

    def _give_op(self, op: int) -> int:
        """The foreign column of operation `op`, given if missing (the rows may widen: columns keep their numbers)."""
        col = self.ops.get(op)
        if col is None:
            col = self.ops[op] = self.fl.new_column()
            self._home_ops = {}
        return col

    def lookup(self, warps: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """For lane columns `cols` of warps `warps` (each in its own domain), the foreign columns a row of another
        domain knows them by (-1: none, it knows nothing of that lane)."""
        return self.col[warps * 32 + (cols - self.fl.col0[warps])]
