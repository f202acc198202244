"""Access records as columns (`modelcheck.numsim.columns`) are the records NumSim hands out one at a time.

The column path is the hand-optimized one (a tuple per instruction, one bulk record per TMA box, MMA operand
or block of TMEM rows, numpy columns per chunk); its readable form is one `AccessRecord` per record delivered
to `on_access`.  Both must give the same records, field by field, on kernels with every kind of access, at
any chunk size; the run's access counts must not depend on who listens; and every async operation a
completed run issues is reported retired (what lets a streaming checker forget it).
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS, entries, manifest_inputs

COLUMNS = importlib.import_module("modelcheck.numsim.columns")
NAMES = ["kda_fwd", "gemm_ws", "mma_ts", "fa4_fwd", "race_bulk_store_source_reuse", "cp_async_overtaking_fixed",
         "race_tmem_ld_st_no_wait", "atomic_histogram", "race_flag_relaxed_store_fixed", "gemm_persistent"]


class _Objects(numsim.Observer):
    def __init__(self):
        self.records = []

    def on_access(self, rec):
        self.records.append(rec)


class _Chunks(numsim.Observer):
    wants_columns = True

    def __init__(self):
        self.chunks = []
        self.issued = []

    def on_sync(self, ev):
        if ev.kind == "async.issue" and ev.details.get("op") is not None:
            self.issued.append(ev.details["op"])

    def on_access_chunk(self, chunk):
        self.chunks.append(chunk)


def _fields(r):
    lanes = None if r.lanes is None else tuple(np.flatnonzero(r.lanes).tolist())
    return (r.seq, r.cta, r.warp, r.site, r.iters, lanes, r.space, r.alloc, r.alloc_name,
            tuple(sorted(r.lane_offsets().items())), isinstance(r.offsets, np.ndarray), r.size, r.kind, r.proxy,
            r.order, r.scope, r.actor)


def _kernel(name):
    entry = dict(entries())[name]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    return kernel.func, manifest_inputs(kernel.func, entry, kernel.constants)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rows", [None, 7])
def test_columns_are_the_records(name, rows, monkeypatch):
    if rows is not None:
        monkeypatch.setattr(COLUMNS, "CHUNK_ROWS", rows)
    func, inputs = _kernel(name)
    objects, chunks, trace = _Objects(), _Chunks(), numsim.Trace()
    plain = numsim.run(func, inputs)
    by_object = numsim.run(func, inputs, observers=(objects,))
    by_column = numsim.run(func, inputs, observers=(chunks, trace))
    assert objects.records
    want = [_fields(r) for r in objects.records]
    assert [_fields(r) for c in chunks.chunks for r in c.records()] == want
    assert [_fields(r) for r in trace.accesses] == want
    assert trace.lane_accesses() == sum(32 if r.lanes is None else int(np.count_nonzero(r.lanes))
                                        for r in objects.records)
    for key in ("accesses", "lane_accesses", "warp_instructions", "sync_events"):
        assert by_object.stats[key] == by_column.stats[key], key
    assert plain.stats["warp_instructions"] == by_column.stats["warp_instructions"]
    if rows is not None:
        assert len(chunks.chunks) > 1
    retired = [op for c in chunks.chunks for op in c.retired]
    assert len(retired) == len(set(retired))
    if by_column.termination == "completed":
        assert set(chunks.issued) <= set(retired), sorted(set(chunks.issued) - set(retired))[:5]


def test_a_bulk_record_is_one_call_per_box():
    """The GEMM's TMA boxes, MMA operand reads and TMEM accumulator rows arrive as bulk records: far fewer calls
    into the buffer than records."""
    func, inputs = _kernel("gemm_ws")
    calls = {"bulk": 0}
    real = COLUMNS.AccessColumns.bulk

    def counting(self, *args):
        calls["bulk"] += 1
        return real(self, *args)
    chunks = _Chunks()
    try:
        COLUMNS.AccessColumns.bulk = counting
        numsim.run(func, inputs, observers=(chunks,))
    finally:
        COLUMNS.AccessColumns.bulk = real
    async_rows = sum(int(np.count_nonzero(c.actor >= 0)) for c in chunks.chunks)
    assert calls["bulk"] * 10 < async_rows


@pytest.mark.parametrize("seed", range(5))
def test_byte_runs_sorts_instead_of_unique(seed):
    """descriptors.byte_runs dedupes a sorted copy (readable form: np.unique, which hashes and was the GEMM
    recording's largest cost); same runs on swizzled, repeated and empty footprints."""
    from modelcheck.numsim.descriptors import byte_runs
    rng = np.random.default_rng(seed)
    for size in (2, 4, 16):
        addrs = rng.choice(np.arange(0, 4096, size), size=rng.integers(0, 300)) if seed else np.zeros(0, np.int64)
        a = np.unique(addrs.astype(np.int64))
        brk = np.flatnonzero(np.diff(a) != size) + 1
        want = (a[np.r_[0, brk]], a[np.r_[brk - 1, a.size - 1]] + size - a[np.r_[0, brk]]) if a.size else (a, a)
        got = byte_runs(addrs, size)
        assert all((x == y).all() for x, y in zip(got, want))
