"""Split clocks with foreign columns (racecheck.foreign) answer like whole-grid clocks.

A row of domain D knows a lane or an async operation of D in its own columns (lane block, D's async columns: every
domain numbers its operations from the same column on, so they alias) and a lane or operation of another domain in
its foreign column (zero when it has none).  The reference is the whole-grid view of a row: one value per
launch-wide lane, then one per launch-wide operation.  Over random rows and random crossings (a row
translated into another domain, merged there with the receiver's own knowledge, translated on again — back home
included, with the rows widening as foreign columns are given), every translated row must have the whole-grid view
of what was sent, joined with what the receiver knew.
"""
from __future__ import annotations


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.numsim.trace import ClusterLayout
from modelcheck.racecheck.foreign import Foreign

DOMAINS, WARPS = 3, 2           # three clusters of two warps: 6 warps, 192 lanes
ASYNC = 4                       # async operations per domain, columns nlanes .. nlanes + 3 in each (aliased)
NOPS = DOMAINS * ASYNC


class FakeFlow:
    """What `Foreign` reads of a flow: its layout and a column allocator that widens (keeping numbers)."""

    def __init__(self):
        self.layout = ClusterLayout(np.repeat(np.arange(DOMAINS), WARPS), np.tile(np.arange(WARPS), DOMAINS), WARPS)
        self.domain = self.layout.domain
        self.nw = DOMAINS * WARPS
        self.nlanes = WARPS * 32
        self.col0 = self.layout.local * 32
        self.next_col = self.nlanes + ASYNC
        self.width = self.next_col + 2
        # op d * ASYNC + i is domain d's i-th operation, at column nlanes + i of that domain's rows
        self.async_col = {op: self.nlanes + op % ASYNC for op in range(NOPS)}
        self.op_dom = {op: op // ASYNC for op in range(NOPS)}
        self.dom_ops = {d: {op: self.async_col[op] for op in range(d * ASYNC, (d + 1) * ASYNC)}
                        for d in range(DOMAINS)}

    def new_column(self) -> int:
        if self.next_col >= self.width:
            self.width *= 2
        self.next_col += 1
        return self.next_col - 1


def whole(fl: FakeFlow, foreign: Foreign, row: np.ndarray, dom: int) -> np.ndarray:
    """The whole-grid view of `row` (domain `dom`'s columns): a value per launch-wide lane, then per operation."""
    row = np.pad(row, (0, fl.width - row.size))
    lanes = np.arange(fl.nw * 32)
    warps = lanes // 32
    mine = fl.domain[warps] == dom
    out = np.zeros(lanes.size + NOPS, dtype=np.int64)
    out[:lanes.size][mine] = row[fl.col0[warps[mine]] + lanes[mine] % 32]
    f = foreign.col[lanes]
    known = ~mine & (f >= 0)
    out[:lanes.size][known] = row[f[known]]
    for op in range(NOPS):
        col = fl.async_col[op] if fl.op_dom[op] == dom else foreign.op_col(op)
        out[lanes.size + op] = row[col] if col >= 0 else 0
    return out


def from_view(fl: FakeFlow, foreign: Foreign, view: np.ndarray, dom: int) -> np.ndarray:
    """A row of domain `dom` knowing only its own lanes and operations of `view` (what a warp learns locally)."""
    row = np.zeros(fl.width, dtype=np.int32)
    warps = np.flatnonzero(fl.domain == dom)
    for w in warps.tolist():
        row[fl.col0[w]:fl.col0[w] + 32] = view[w * 32:(w + 1) * 32]
    row[fl.nlanes:fl.nlanes + ASYNC] = view[fl.nw * 32 + dom * ASYNC:fl.nw * 32 + (dom + 1) * ASYNC]
    return row


values = st.lists(st.integers(0, 3), min_size=DOMAINS * WARPS * 32 + NOPS, max_size=DOMAINS * WARPS * 32 + NOPS)
steps = st.lists(st.tuples(st.integers(0, 7), st.integers(0, DOMAINS - 1), values), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, DOMAINS - 1), values, steps)
def test_translated_rows_answer_like_whole_grid_rows(start, first, seq):
    fl = FakeFlow()
    foreign = Foreign(fl)
    held = [(from_view(fl, foreign, np.array(first), start), start)]      # rows, each in its domain's columns
    for pick, dst, local in seq:
        row, src = held[pick % len(held)]
        expect = whole(fl, foreign, row, src)
        moved = foreign.translate(row, src, dst)
        assert np.array_equal(whole(fl, foreign, moved, dst), expect)
        # the receiver joins it with what it knew itself (its own lanes and operations)
        own = from_view(fl, foreign, np.array(local), dst)
        joined = np.maximum(np.pad(own, (0, fl.width - own.size)), np.pad(moved, (0, fl.width - moved.size)))
        assert np.array_equal(whole(fl, foreign, joined, dst),
                              np.maximum(expect, whole(fl, foreign, own, dst)))
        held.append((joined, dst))
    # a lane or operation of the receiver's own domain is never held in a foreign column of a row there (no split
    # values)
    for row, dom in held[1:]:
        f = foreign.col[np.arange(fl.nw * 32)]
        home = (fl.domain[np.arange(fl.nw * 32) // 32] == dom) & (f >= 0)
        fops = np.array([c for op, c in foreign.ops.items() if fl.op_dom[op] == dom], dtype=np.int64)
        padded = np.pad(row, (0, fl.width - row.size))
        assert not padded[f[home]].any() and not padded[fops].any()


def test_lookup_names_the_foreign_column_or_none():
    fl = FakeFlow()
    foreign = Foreign(fl)
    row = np.zeros(fl.width, dtype=np.int32)
    row[fl.col0[1] + 5] = 2                          # domain 0 knows its warp 1's lane 5
    foreign.translate(row, 0, 2)
    warps = np.array([1, 1, 3])
    cols = np.array([fl.col0[1] + 5, fl.col0[1] + 6, fl.col0[3] + 5])
    got = foreign.lookup(warps, cols)
    assert got[0] >= fl.nlanes + ASYNC and (got[1:] == -1).all() and len(foreign) == 1


def test_operations_cross_by_their_own_columns():
    """Two domains number different operations by the same column: what crossed keeps them apart, and a round
    trip folds an operation back into its own column."""
    fl = FakeFlow()
    foreign = Foreign(fl)
    row = np.zeros(fl.width, dtype=np.int32)
    row[fl.nlanes + 1] = 2                           # domain 0 knows its operation 1 (column nlanes + 1)
    moved = foreign.translate(row, 0, 1)
    assert moved[fl.nlanes + 1] == 0                 # in domain 1 that column is its own operation 5
    col = foreign.op_col(1)
    assert col >= fl.nlanes + ASYNC and moved[col] == 2 and foreign.op_col(5) == -1
    back = foreign.translate(moved, 1, 0)
    assert back[fl.nlanes + 1] == 2 and back[col] == 0
    foreign.forget([1])
    assert foreign.op_col(1) == -1 and len(foreign) == 0
