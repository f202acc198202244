"""The budget clock (numsim/budget.py): wall seconds by default, CPU seconds of the check on request, continuous
across the forks of Synccheck's snapshots; a check's verdict under the CPU clock does not move with the load."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import modelcheck
from modelcheck.numsim import budget
from modelcheck.numsim.errors import ResourceLimit
from modelcheck.synccheck import snapshots
from tests.manifest import KERNELS


@pytest.fixture
def cpu_clock():
    budget.set_clock("cpu")
    try:
        yield
    finally:
        budget.set_clock("wall")


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_unknown_clock_is_refused():
    with pytest.raises(ValueError, match="unknown budget clock 'gpu'"):
        budget.set_clock("gpu")
    assert budget.clock_name() == "wall"
    with pytest.raises(ValueError):
        modelcheck.set_budget_clock("cycles")


def test_wall_clock_counts_waiting_and_says_seconds():
    meter = budget.Meter(max_seconds=0.05)
    time.sleep(0.1)
    with pytest.raises(ResourceLimit, match=r"more than 0\.05 s \(its time budget"):
        meter.check()


def test_cpu_clock_ignores_waiting_and_counts_work(cpu_clock):
    meter = budget.Meter(max_seconds=0.15)
    time.sleep(0.3)                 # another process's turn on the core: not this check's time
    meter.check()
    _burn(0.2)
    with pytest.raises(ResourceLimit, match=r"more than 0\.15 s of CPU \(its time budget"):
        meter.check()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_cpu_clock_goes_on_in_a_forked_child(cpu_clock):
    _burn(0.2)
    before = budget.now()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:        # the child's own CPU counter starts at zero; the budget clock must not
        os.write(write, repr(budget.now()).encode())
        os._exit(0)
    os.close(write)
    child = float(os.read(read, 64).decode())
    os.close(read)
    os.waitpid(pid, 0)
    assert before <= child < before + 0.5


def test_advance_to_counts_another_process_work(cpu_clock):
    reading = budget.now() + 5.0
    budget.advance_to(reading)
    assert budget.now() >= reading
    budget.advance_to(reading - 3.0)       # never backwards
    assert budget.now() >= reading


def test_advance_to_is_inert_on_the_wall_clock():
    t = budget.now()
    budget.advance_to(t + 100.0)
    assert budget.now() < t + 50.0


@pytest.mark.skipif(not snapshots.available(), reason="snapshots fork (Linux)")
def test_resumed_snapshots_under_the_cpu_clock_match_the_wall_clock(monkeypatch):
    """The answer sequences of a CLC kernel, resumed from forked snapshots, give the same findings and sequences
    whichever clock the budget reads."""
    monkeypatch.setattr(snapshots, "MIN_SNAPSHOT_STEPS", 0)

    def run():
        kernel = modelcheck.load(KERNELS / "clc_consumer_count.py", COUNTED=1)
        return modelcheck.synccheck(kernel, {"out": np.zeros(3, np.int32)})
    wall = run()
    budget.set_clock("cpu")
    try:
        cpu = run()
    finally:
        budget.set_clock("wall")
    assert cpu.verdict == wall.verdict
    assert [(f.id, f.kind) for f in cpu.findings] == [(f.id, f.kind) for f in wall.findings]
    assert cpu.stats["clc_paths"] == wall.stats["clc_paths"] and cpu.stats["clc_resumed"] > 0
