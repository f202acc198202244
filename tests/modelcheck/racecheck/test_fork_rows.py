"""Racecheck's async forks hold knowledge rows only while something can read them.

A fork is what the issuing lane knew at the issue: a row of the flow's width (lane columns, then one per async
operation in flight), so one row per operation grows with the square of the operations in flight.  A split
lane hands one read-only row to every operation it issues until it learns something (`Knowledge.frozen`).
"""
from __future__ import annotations

import gc

import numpy as np

from modelcheck.racecheck.clocks import Knowledge, Ledger


def _lanes(*lanes):
    m = np.zeros(32, dtype=np.bool_)
    m[list(lanes)] = True
    return m


def test_a_split_lane_hands_one_row_to_what_it_issues_until_it_learns():
    k = Knowledge(8, Ledger(8))
    k.learn_column(_lanes(3), 5, 1)               # lane 3 alone learns: the lanes split
    assert k.rows is not None
    first = k.frozen(3)
    assert k.frozen(3) is first and not first.flags.writeable
    k.learn_column(_lanes(4), 6, 1)               # another lane learning changes nothing of lane 3's
    assert k.frozen(3) is first
    assert k.frozen(4) is not first and k.frozen(4)[6] == 1
    k.learn_column(_lanes(3), 7, 2)
    second = k.frozen(3)
    assert second is not first and second[7] == 2 and first[7] == 0     # the handed row never changes
    m = _lanes(0, 3, 4)
    meet = k.meet_frozen(m)
    assert k.meet_frozen(m) is meet and meet.tolist() == k.meet(m).tolist()
    k.merge(None, np.full(8, 3, dtype=np.int32))
    assert k.meet_frozen(m) is not meet and k.meet_frozen(m).min() == 3
    del first, second
    gc.collect()
    assert k.frozen(3).tolist() == k.rows[3].tolist()     # a row nothing holds any more is made again

