"""Racecheck over a recorded trace (events and AccessRecords), for tests and benchmarks: `Pass` feeds the records
to the same `analysis.Analysis` a NumSim run feeds, as columns a chunk at a time.  There `records` lists the trace's
records with Racecheck's synthetic ones (a tcgen05.dealloc as a write of its allocation), which is how races number
records.
"""
from __future__ import annotations

import numpy as np

from ..numsim.columns import AccessColumns
from .analysis import Analysis
from .tcgen import with_deallocs


class _Alloc:
    """An allocation as a recorded AccessRecord names it (what AccessColumns needs of one)."""

    __slots__ = ("space", "id", "name")

    def __init__(self, space, alloc_id, name):
        self.space, self.id, self.name = space, alloc_id, name


class Pass:
    """Racecheck over a recorded trace: `Pass(warps, warps_per_cta, events, records).run()`; then `races` (records
    numbered as in `records`, which adds Racecheck's synthetic ones), `candidates` ((prior record, prior lane,
    current record, current lane, first byte, granule bytes) rows: every pair judged, grouped by the current record),
    `lane_accesses`, `scope_mismatches`.  `chunk_rows`: records per chunk (NumSim's default).  Its clocks span the
    whole grid (a recorded trace carries no cluster shape; `Analysis` splits them per cluster in a run)."""

    def __init__(self, run_warps: int, warps_per_cta: int, events, records, chunk_rows: int | None = None):
        self.nw, self.wpc = run_warps, warps_per_cta
        self.events = list(events)
        self.input = list(records)
        self.records = with_deallocs(self.events, self.input)
        self.chunk_rows = chunk_rows
        self.races: list = []
        self.candidates = np.zeros((0, 6), dtype=np.int64)
        self.lane_accesses = 0
        self.scope_mismatches: list = []
        self.analysis: Analysis | None = None

    def run(self, meter=None) -> None:
        a = self.analysis = Analysis(meter, keep_pairs=True)
        a.setup(self.nw, self.wpc)
        cols = AccessColumns([a.on_access_chunk], {"accesses": 0, "lane_accesses": 0}, self.chunk_rows)
        allocs: dict = {}
        events, records = self.events, self.input
        i = 0
        for rec in records:
            while i < len(events) and events[i].seq < rec.seq:
                a.on_sync(events[i])
                i += 1
            key = (rec.space, rec.alloc)
            alloc = allocs.get(key)
            if alloc is None:
                alloc = allocs[key] = _Alloc(rec.space, rec.alloc, rec.alloc_name)
            cols.rows.append((rec.seq, rec.cta, rec.warp, rec.site, rec.iters, rec.lanes, alloc, rec.offsets, rec.size,
                              rec.kind, rec.proxy, rec.order, rec.scope, rec.actor))
            if cols.full():
                cols.flush()
        cols.flush()
        for ev in events[i:]:
            a.on_sync(ev)
        a.finish()
        if a.limit is not None:
            raise a.limit
        self.races = a.races
        self.lane_accesses = a.lane_accesses
        self.scope_mismatches = a.scope_mismatches
        if a.candidates:
            self.candidates = np.concatenate(a.candidates)
