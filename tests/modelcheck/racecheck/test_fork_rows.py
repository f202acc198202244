"""Racecheck's async forks hold knowledge rows only while something can read them.

A fork is what the issuing lane knew at the issue: a row of the flow's width (lane columns, then one per async
operation in flight), so one row per operation grows with the square of the operations in flight.  A split
lane hands one read-only row to every operation it issues until it learns something (`Knowledge.frozen`), and
an operation NumSim retired keeps only its issue once its chunk is judged (`Flow.settle`): its accesses are
judged no more, and as an earlier access it is judged by the later access's knowledge.
"""
from __future__ import annotations

import gc
import importlib
from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck.racecheck.clocks import Knowledge, Ledger

COLUMNS = importlib.import_module("modelcheck.numsim.columns")
ANALYSIS = importlib.import_module("modelcheck.racecheck.analysis")
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "racecheck" / "cp_async_input_rounds.py"


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


def test_fork_copies_bring_the_memory_look_nearer(monkeypatch):
    """Rows made for forks are no warp's own (the ledger's row count leaves them out), but their bytes count towards
    the next look at the process's growth (`Ledger.copied`): a run of forks is refused at the budget, not killed."""
    looks = []

    class Meter:
        def headroom(self, nbytes, what):
            looks.append(what)
    ledger = Ledger(8)
    ledger.meter = Meter()
    monkeypatch.setattr(Ledger, "STEP", 8 * 4 * 3)         # a look every three rows
    k = Knowledge(8, ledger)
    k.learn_column(_lanes(3), 5, 1)                       # a warp's own rows: 32, counted (and looked at)
    assert ledger.rows == 32 and len(looks) == 1
    for col in range(6):                                   # six forks, each after something learned: six copies
        k.frozen(3)
        k.learn_column(_lanes(3), col, 2)
    assert ledger.rows == 32 and len(looks) == 3 and "forks" in looks[-1]


class _Holding(ANALYSIS.Analysis):
    """Records, after each chunk, the async operations named and the fork rows held."""

    def _forget(self, c):
        super()._forget(c)
        flow = self.fl
        self.held = getattr(self, "held", [])
        rows = {id(f[0]) for f in flow.fork.values() if f[0] is not None}
        self.held.append((len(flow.async_col), len(rows)))


def _run(monkeypatch, rounds):
    kept = []

    class Holding(_Holding):
        def finish(self):
            super().finish()
            kept.append(self)
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", 64)
    monkeypatch.setattr(importlib.import_module("modelcheck.racecheck"), "Analysis", Holding)
    report = modelcheck.racecheck(modelcheck.load(FIXTURE, ROUNDS=rounds).func)
    assert report.verdict == "clean"
    return kept[0].held


@pytest.mark.parametrize("rounds", [4, 16])
def test_retired_copies_named_by_waiting_reads_hold_no_rows(monkeypatch, rounds):
    """Every copy's read of the input waits for a first write to the end, so the copies stay named (their columns
    grow with the rounds); the rows their forks held go once their chunk is judged: at most a round's worth,
    one row per lane (4 copies each, one handed row), whatever the rounds."""
    held = _run(monkeypatch, rounds)
    ops = max(n for n, _ in held)
    assert ops == rounds * 4 * 32
    assert max(r for _, r in held) <= 2 * 32
