"""Racecheck streams: the verdict and every finding do not depend on how the run is cut into chunks or how
often the analysis forgets and compacts, and what it keeps follows the accesses in flight, not the run.

The reference is one chunk per run (nothing carried, nothing forgotten before the end); the stress setting
cuts the run every 5 records and compacts async columns as soon as one is free, which splits granules,
wakes waiting accesses, drops barrier payloads and remaps every knowledge row many times per kernel.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

import pytest

import modelcheck
from modelcheck.common.findings import json_safe
from tests.manifest import KERNELS, entries, manifest_inputs

COLUMNS = importlib.import_module("modelcheck.numsim.columns")
FLOW = importlib.import_module("modelcheck.racecheck.flow")
ANALYSIS = importlib.import_module("modelcheck.racecheck.analysis")
_ENTRIES = dict(entries())
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "racecheck"
NAMES = sorted(n for n, e in _ENTRIES.items()
               if (e["expect"].get("racecheck") or {}).get("verdict") in ("error", "review", "clean")
               and (n.startswith(("race_", "kda", "gemm", "fa4", "gdn", "tmem", "mma", "bulk", "cp_async", "mbar_"))))


@pytest.fixture(autouse=True)
def _cpu_budget_clock():
    """The stress setting costs several times a plain run: under the default wall clock a loaded machine (CI's
    parallel workers) can stop one of the two runs at the budget and the comparison fails for the load, not the
    analysis.  CPU seconds make both runs' budgets independent of the load."""
    modelcheck.set_budget_clock("cpu")
    try:
        yield
    finally:
        modelcheck.set_budget_clock("wall")


def _report(name):
    entry = _ENTRIES[name]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    report = modelcheck.racecheck(kernel.func, inputs=manifest_inputs(kernel.func, entry, kernel.constants))
    return report.verdict, [json_safe((f.id, f.kind, f.message, f.details)) for f in report.findings], report.stats


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_findings_do_not_depend_on_chunks(name, monkeypatch):
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", 1 << 30)
    whole = _report(name)
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", 5)
    monkeypatch.setattr(FLOW, "_HEADROOM", 1)
    cut = _report(name)
    assert cut[:2] == whole[:2]
    assert cut[2]["lane_accesses"] == whole[2]["lane_accesses"]
    assert cut[2]["analysis_chunks"] >= whole[2]["analysis_chunks"]


def test_names_cover_the_race_corpus():
    assert len(NAMES) > 40 and any(n.startswith("race_tcgen05") for n in NAMES)


def test_the_stress_setting_cuts_most_runs(monkeypatch):
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", 5)
    for name in ("kda_fwd", "gemm_ws", "fa4_fwd", "cp_async_overtaking", "race_tcgen05_mma_smem_reuse"):
        assert name in NAMES and _report(name)[2]["analysis_chunks"] > 10, name


class _Keeping(ANALYSIS.Analysis):
    """Records, after each chunk, what the analysis holds."""

    def _forget(self, c):
        super()._forget(c)
        flow, shadow = self.flow, self.shadow
        names = np.array(self.allocs.name)[shadow.gid >> 40] if shadow.gid.size else np.zeros(0, dtype=str)
        self.held = getattr(self, "held", [])
        self.held.append({"ring entries": int(np.count_nonzero(names != "out")), "columns": flow.width,
                          "ops": len(flow.async_col), "payloads": len(flow.mb) + len(flow.named),
                          "waiting": shadow.cold_rows})
        self.out_entries = int(np.count_nonzero(names == "out"))


def _held(monkeypatch, nc):
    kept = []

    class Keeping(_Keeping):
        def finish(self):
            super().finish()
            kept.append(self)
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", 2048)
    monkeypatch.setattr(importlib.import_module("modelcheck.racecheck"), "Analysis", Keeping)
    kernel = modelcheck.load(KERNELS / "kda_ring_dvec.py", NC=nc)
    assert modelcheck.racecheck(kernel.func).verdict == "clean"
    a = kept[0]
    return a.out_entries, {k: max(h[k] for h in a.held) for k in a.held[0]}


def test_what_the_analysis_holds_does_not_grow_with_the_run(monkeypatch):
    """The dvec ring at 8 and 32 chunks: the ring's live entries, the async columns, barrier payloads and waiting
    accesses at most stay the same (before streaming every record was kept, and a column per async operation
    ever issued); what grows is the last write of each output word, which a later read could still race with."""
    out8, short = _held(monkeypatch, 8)
    out32, long = _held(monkeypatch, 32)
    assert (out8, out32) == (8 * 4 * 32, 32 * 4 * 32)
    assert long == short


def test_a_woken_read_does_not_take_a_carried_write_place(monkeypatch):
    """tests/fixtures/racecheck/cold_wake_race.py: a read waiting for the first write to its allocation wakes into
    the carried table before a write carried from an earlier chunk; the carried write must keep its record (it
    once resolved to the woken read, and the race on `a` vanished at chunks of 1 or 2 records)."""
    kernel = modelcheck.load(FIXTURES / "cold_wake_race.py")
    inputs = {"b": np.arange(32, dtype=np.int32), "out": np.zeros(32, dtype=np.int32)}
    seen = []
    for rows in (1 << 30, 5, 3, 2, 1):
        monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", rows)
        report = modelcheck.racecheck(kernel.func, inputs=inputs)
        seen.append([json_safe((f.kind, f.message, f.details)) for f in report.findings])
        assert report.verdict == "error" and [f.kind for f in report.findings] == ["data_race"], rows
        assert report.findings[0].details["overlap"]["allocation"] == "a"
    assert all(s == seen[0] for s in seen)


class _Counting(ANALYSIS.Analysis):
    """Checks, after each chunk, that the shadow's entry count is its entries'."""

    def _forget(self, c):
        super()._forget(c)
        assert self.shadow.nent == self.shadow.gid.size


@pytest.mark.parametrize("rows", [1 << 30, 2048, 5])
def test_released_shared_memory_is_dropped_with_the_same_findings(monkeypatch, rows):
    """tests/fixtures/racecheck/waves_shared_race.py runs in waves; each wave's shared memory is released.  The
    analysis drops a released allocation's entries (nothing accesses it again): the findings must equal those of
    the old path, which keeps them."""
    monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", rows)
    monkeypatch.setattr(importlib.import_module("modelcheck.racecheck"), "Analysis", _Counting)
    units = importlib.import_module("modelcheck.racecheck.units")
    kernel = modelcheck.load(FIXTURES / "waves_shared_race.py")
    released = []
    real = units.Allocs.released

    def counting(self, allocs):
        out = real(self, allocs)
        released.extend(out)
        return out
    monkeypatch.setattr(units.Allocs, "released", counting)
    fast = modelcheck.racecheck(kernel.func)
    assert released, "the fixture no longer runs in waves"
    monkeypatch.setattr(units.Allocs, "released", lambda self, allocs: [])
    kept = modelcheck.racecheck(kernel.func)
    assert fast.verdict == kept.verdict == "error" and len(fast.findings) == 400
    assert [json_safe((f.id, f.kind, f.message, f.details)) for f in fast.findings] == \
        [json_safe((f.id, f.kind, f.message, f.details)) for f in kept.findings]
