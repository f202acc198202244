"""Reads of memory nothing can write, dropped before the analysis builds its tables.

A race needs a write.  NumSim binds the inputs a kernel never stores to read-only (`RunInfo.unwritten`: a
write to one raises and ends the run incomplete), so a plain read of them can pair with nothing, now or later.
Such reads are often most of a kernel's lane accesses (weights, activations, indices); without this filter each
would still be stamped with what its warp knew and parked in the shadow until a first write that never comes.

Only weak generic reads are dropped: a strong read may take part in release/acquire through memory or a
fence.sc pattern, and an async operation's reads belong to its bookkeeping.  The run's counts still include the
dropped records.  A write record to such an allocation would mean the premise failed: the analysis stops
(`incomplete`) rather than judge without the reads it dropped.
"""
from __future__ import annotations

import numpy as np

from ..numsim.columns import KINDS, ORDERS, PROXIES, AccessChunk
from ..numsim.errors import ResourceLimit

_READ, _WEAK, _GENERIC = KINDS.index("read"), ORDERS.index("weak"), PROXIES.index("generic")
_PER_RECORD = ("seq", "cta", "warp", "site", "alloc", "kind", "proxy", "order", "scope", "actor", "size", "all_lanes",
               "scalar", "offset0")


class UnwrittenReads:
    """The filter for one run: `split(chunk)` -> (the chunk without those reads, records dropped, lanes dropped)."""

    def __init__(self, unwritten: frozenset):
        self.unwritten = unwritten
        self.mask = np.zeros(0, dtype=np.bool_)      # per allocation of the run's table (grows with it)

    def split(self, chunk) -> tuple:
        if not self.unwritten or not chunk.n:
            return chunk, 0, 0
        allocs = chunk.allocs
        if len(allocs) != self.mask.size:
            self.mask = np.array([a.space == "global" and a.id in self.unwritten for a in allocs], dtype=np.bool_)
        on = self.mask[chunk.alloc]
        if not on.any():
            return chunk, 0, 0
        wrote = np.flatnonzero(on & (chunk.kind != _READ))
        if wrote.size:
            i = int(wrote[0])
            raise ResourceLimit("internal", f"internal: a write to {allocs[chunk.alloc[i]].name}, an input NumSim "
                                            "bound read-only, reached Racecheck (its reads were not kept)")
        drop = on & (chunk.order == _WEAK) & (chunk.proxy == _GENERIC)
        if not drop.any():
            return chunk, 0, 0
        keep = ~drop
        counts = np.diff(chunk.lane_start)
        lanes_kept = np.repeat(keep, counts)
        out = AccessChunk()
        for name in _PER_RECORD:
            setattr(out, name, getattr(chunk, name)[keep])
        idx = np.flatnonzero(keep)
        out.n = int(idx.size)
        out.iters = [chunk.iters[i] for i in idx.tolist()]
        out.lane_start = np.concatenate(([0], np.cumsum(counts[keep]))).astype(chunk.lane_start.dtype)
        out.lane, out.offset = chunk.lane[lanes_kept], chunk.offset[lanes_kept]
        out.allocs, out.retired = allocs, chunk.retired
        return out, int(drop.sum()), int(counts[drop].sum())
