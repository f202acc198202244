"""Racecheck's knowledge store answers like dense per-lane clocks.

`clocks.Knowledge` keeps a warp's knowledge as the shared read-only zero row until something is learned, then
one row its lanes share (a payload it learned first, or a row forks read, shared read-only until the next write),
then 32 lane rows once they differ; the reference here is the plain dense form, a
(32, width) matrix per warp that every operation updates.  Over random operation sequences (merges, warp-sync
joins, learned columns, absorbs, widenings and compactions) every "what does lane l know of column a" query, and
the joins and meets that releases and collective operations read, must agree, and the shared zero row must
never be written.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.numsim.trace import ClusterLayout
from modelcheck.racecheck import flow as flow_mod
from modelcheck.racecheck.clocks import Knowledge, Ledger, WarpState, is_zero_row, zero_row

WIDTH = 12


class Dense:
    """The reference: 32 lane rows, always."""

    def __init__(self, width: int):
        self.rows = np.zeros((32, width), dtype=np.int32)

    def merge(self, mask, payload):
        idx = _idx(mask)
        self.rows[idx] = np.maximum(self.rows[idx], payload[None, :])

    def set_all(self, mask, payload):
        if mask is None or mask.all():
            self.rows[:] = np.maximum(self.rows.max(axis=0), payload)[None, :]
        else:
            self.merge(mask, payload)

    def learn_columns(self, mask, cols, value):
        idx = _idx(mask)
        for c in cols:
            self.rows[idx, c] = np.maximum(self.rows[idx, c], value)

    def absorb(self, mask, other: "Dense"):
        idx = _idx(mask)
        self.rows[idx] = np.maximum(self.rows[idx], other.rows[idx])

    def resize(self, keep, width):
        out = np.zeros((32, width), dtype=np.int32)
        out[:, :keep.size] = self.rows[:, keep]
        self.rows = out


def _idx(mask):
    return np.arange(32) if mask is None else np.flatnonzero(mask)


masks = st.one_of(st.none(), st.lists(st.booleans(), min_size=32, max_size=32).map(lambda b: np.array(b)))
values = st.integers(min_value=0, max_value=9)
ops = st.lists(st.tuples(st.sampled_from(["merge", "set_all", "learn", "learn_many", "absorb", "resize",
                                          "split", "own"]),
                         masks, st.lists(values, min_size=64, max_size=64), values,
                         st.lists(st.integers(min_value=0, max_value=63), min_size=1, max_size=4)),
               max_size=24)


def _apply(k: Knowledge, d: Dense, other: Knowledge, od: Dense, op, mask, vals, value, cols):
    width = d.rows.shape[1]
    payload = np.array(vals[:width], dtype=np.int32)
    cols = np.array(sorted({c % width for c in cols}), dtype=np.int64)
    if op == "merge":
        k.merge(mask, payload), d.merge(mask, payload)
    elif op == "set_all":
        # as a warp sync uses it: the payload is the members' release, which covers what they know
        idx = _idx(mask)
        if idx.size:
            payload = np.maximum(payload, d.rows[idx].max(axis=0))
        k.set_all(mask, payload), d.set_all(mask, payload)
    elif op == "learn":
        k.learn_column(mask, int(cols[0]), value), d.learn_columns(mask, cols[:1], value)
    elif op == "learn_many":
        k.learn_columns(mask, cols, value), d.learn_columns(mask, cols, value)
    elif op == "absorb":
        # the other warp learns something first (or stays at the zero row)
        if value % 2:
            other.merge(mask, payload), od.merge(mask, payload)
        k.absorb(mask, other), d.absorb(mask, od)
    elif op == "resize":
        # a compaction (keep some columns) or a widening (keep all, more zeros after)
        keep = np.arange(width) if value % 2 else np.array(sorted(set(range(width)) - set(cols.tolist())))
        new = max(keep.size + value, 1)
        memo: dict = {}          # rows the two share (one learned the other's) stay shared, as in a flow's widening
        for kn, dn in ((k, d), (other, od)):
            kn.resize(keep, new, memo)
            dn.resize(keep, new)
    elif op == "split":
        k.lane_rows()
    elif op == "own" and k.rows is None:
        # the warp-sync fast path: a converged warp writes its lanes' columns in its own row
        k.own()[cols] = value
        d.rows[:, cols] = value


def _check(k: Knowledge, d: Dense):
    width = d.rows.shape[1]
    lanes = np.repeat(np.arange(32), width)
    cols = np.tile(np.arange(width), 32)
    assert np.array_equal(k.known(lanes, cols), d.rows[lanes, cols])
    m = np.zeros(32, dtype=np.bool_)
    m[[0, 5, 31]] = True
    assert np.array_equal(k.join(None), d.rows.max(axis=0))
    assert np.array_equal(k.join(m), d.rows[m].max(axis=0))
    if k.rows is None:       # one shared row: every lane knows the same
        assert np.array_equal(k.meet(m), d.rows[m].max(axis=0))
    else:
        assert np.array_equal(k.meet(m), d.rows[m].min(axis=0))


@settings(max_examples=60, deadline=None)
@given(ops)
def test_knowledge_answers_like_dense_lane_rows(seq):
    ledger = Ledger(WIDTH)
    k, other = Knowledge(WIDTH, ledger), Knowledge(WIDTH, ledger)
    d, od = Dense(WIDTH), Dense(WIDTH)
    for step in seq:
        _apply(k, d, other, od, *step)
        _check(k, d)
        _check(other, od)
        ledger.width = d.rows.shape[1]
        assert ledger.rows == k.row_count() + other.row_count()
        assert zero_row(d.rows.shape[1]).max() == 0


def test_a_warp_that_learned_nothing_holds_no_row():
    ledger = Ledger(64)
    warps = [WarpState(w, 0, 64, 32 * w, ledger) for w in range(2)]
    assert all(is_zero_row(w.k.row) and w.row_count() == 0 for w in warps)
    assert warps[0].k.row is warps[1].k.row          # one shared row
    payload = warps[0].release(None)                   # a release reads, and writes nothing
    assert is_zero_row(warps[0].k.row) and payload[:32].tolist() == [1] * 32
    warps[1].acquire(None, payload)
    assert ledger.rows == 1 and warps[1].k.known(np.array([3]), np.array([7])).tolist() == [1]
    try:
        warps[0].k.row[0] = 1
    except ValueError:
        pass
    else:
        raise AssertionError("the shared zero row must be read-only")


# per-domain async columns on a real flow: 3 clusters of 2 warps, operations given, learned, forgotten, compacted,
# foreign columns given between them (flow.Flow.column / new_column / compact)
col_steps = st.lists(st.tuples(st.sampled_from(["give", "give", "learn", "forget", "foreign"]), st.integers(0, 5),
                               st.integers(0, 40)), max_size=60)


@settings(max_examples=60, deadline=None)
@given(col_steps)
def test_async_columns_per_domain_never_collide_and_start_fresh(seq):
    """A domain's live operations have distinct columns, never a foreign column's; a column given to a domain's
    operation is zero in every row of that domain (a stale value there would be read as knowledge of it); each
    operation keeps what its domain's rows learned of it through compactions."""
    headroom = flow_mod._HEADROOM
    flow_mod._HEADROOM = 1              # (widenings and compactions every few steps)
    try:
        _run_columns(flow_mod.Flow(6, 2, ClusterLayout(np.repeat(np.arange(3), 2), np.tile(np.arange(2), 3), 2)), seq)
    finally:
        flow_mod._HEADROOM = headroom


def _run_columns(fl, seq):
    learned: dict = {}                  # (warp, op) -> value the warp's rows know of op
    next_op = 0
    for kind, warp, n in seq:
        dom = int(fl.domain[warp])
        if kind == "give":
            op = next_op
            next_op += 1
            col = fl.column(op, warp)
            for w in range(6):
                if int(fl.domain[w]) == dom:
                    assert fl.warps[w].k.join(None)[col] == 0
        elif kind == "learn":
            mine = [op for op, d in fl.op_dom.items() if d == dom]
            if mine:
                op = mine[n % len(mine)]
                fl.warps[warp].k.learn_column(None, fl.async_col[op], 1 + n % 3)
                learned[(warp, op)] = max(learned.get((warp, op), 0), 1 + n % 3)
        elif kind == "forget" and fl.async_col:
            ops = sorted(fl.async_col)[:1 + n % 4]
            fl.forget(ops)
            learned = {k: v for k, v in learned.items() if k[1] not in ops}
            fl.compact()
        elif kind == "foreign":
            fl.foreign._give_op(10_000 + n) if n % 2 else fl.foreign._give(np.array([warp * 32 + n % 32]))
        foreign = set(fl.foreign.columns().tolist())
        for d in range(3):
            cols = [c for op, c in fl.async_col.items() if fl.op_dom[op] == d]
            assert len(cols) == len(set(cols)) and not foreign & set(cols)
        for (w, op), v in learned.items():
            assert fl.warps[w].k.join(None)[fl.async_col[op]] == v
