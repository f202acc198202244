"""Foreign lane columns: split clocks that stay exact when knowledge crosses clusters
(docs/semantics.md#racecheck-at-grid-scale).

With split clocks a row's lane columns are its own cluster's (`flow.Flow`: column `32·p + l` is lane `l` of the
warp at place `p` of the row's cluster), so the columns of two clusters alias.  Knowledge crosses clusters only
through morally strong `.gpu`/`.sys` accesses (`racecheck.domains`); where it does, the payload is translated
into the receiving cluster's columns (`translate`): the sender's lane block becomes one column per foreign lane it
knows something of, given on demand beside the async columns and unique over the launch, and what the payload knew
of the receiver's own lanes through such columns folds back into its lane block.  A row is then a dense block for
its own cluster plus columns only for the lanes knowledge actually came from; with no crossing it is exactly the
split row, and with every lane crossed it is the whole-grid row with its columns permuted.  So every answer is the
whole-grid clocks' answer:

- a lane's knowledge of a lane of its own cluster is in its lane block (never in a foreign column: `translate`
  folds those back, so no value is split between two columns);
- of a lane of another cluster, in that lane's foreign column, or zero if none was ever given (nothing of it
  crossed into any row) — `lookup`;
- of an async operation, in the operation's column (unique over the launch already).

A foreign column is kept for the rest of the run (compactions keep it): a lane's history may be asked about as
long as any row knows it.
"""
from __future__ import annotations

import numpy as np


class Foreign:
    """The foreign lane columns of a flow with split clocks (`flow.Flow.foreign`)."""

    __slots__ = ("fl", "col", "nl", "_members", "_home")

    def __init__(self, flow):
        self.fl = flow
        self.nl = flow.nlanes
        self.col = np.full(flow.nw * 32, -1, dtype=np.int64)   # launch-wide lane (32 * warp + lane) -> its column
        self._members: dict[int, np.ndarray] = {}              # domain -> its warps by place
        self._home: dict[int, tuple] = {}                       # domain -> (foreign columns, lane columns) of its lanes

    def __len__(self) -> int:
        return int((self.col >= 0).sum())

    def columns(self) -> np.ndarray:
        """Every foreign column (what a compaction keeps)."""
        return self.col[self.col >= 0]

    def renumber(self, new_col: np.ndarray) -> None:
        """After a compaction: old column c is new_col[c]."""
        have = self.col >= 0
        self.col[have] = new_col[self.col[have]]
        self._home = {}

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

    def translate(self, row: np.ndarray, src: int, dst: int) -> np.ndarray:
        """`row`, knowledge in domain `src`'s columns, in domain `dst`'s columns (a new row; `row` itself if the
        domains are the same)."""
        if src == dst:
            return row
        local = np.flatnonzero(row[:self.nl])
        cols = None
        if local.size:
            members = self.members(src)
            cols = self._give(members[local // 32] * 32 + local % 32)
        fl = self.fl
        out = np.zeros(row.shape[:-1] + (fl.width,), dtype=row.dtype)
        out[..., :row.shape[-1]] = row              # (a widening keeps column numbers: the old row's still hold)
        out[..., :self.nl] = 0
        if cols is not None:
            out[..., cols] = np.maximum(out[..., cols], row[..., local])
        fcols, home = self._home_of(dst)
        if fcols.size:
            out[..., home] = np.maximum(out[..., home], out[..., fcols])
            out[..., fcols] = 0
        return out

    def lookup(self, warps: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """For lane columns `cols` of warps `warps` (each in its own domain), the foreign columns a row of another
        domain knows them by (-1: none, it knows nothing of that lane)."""
        return self.col[warps * 32 + (cols - self.fl.col0[warps])]
