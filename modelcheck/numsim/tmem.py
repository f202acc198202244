"""Tensor Memory of one CTA: 128 lanes x 512 columns of 32-bit cells, and its allocations
(docs/semantics.md#tcgen05-and-tmem).

Allocation (`tcgen05.alloc`) is first-fit over 32-column granules; an allocation owns
all 128 lanes of its columns.  The address written back is `column` (lane field 0).
Lifecycle rules raise `TmemError(kind, message)`; the ops attach the span:
`tcgen_invalid_columns` (not a power of two in [32, 512]),
`tcgen_allocation_size_increase` (more columns than the CTA's previous allocation),
`tcgen_alloc_after_relinquish`, `tcgen_deallocation_mismatch` (not exactly a live
allocation), `tmem_access_outside_live_allocation`, `tmem_access_out_of_bounds`;
`tcgen_live_allocations_at_exit` is checked when the run completes (`live_at_exit`).

Access records: a TMEM allocation is an `Allocation`-like object with space "tmem";
the byte offset of cell (lane, column) inside it is `(lane * ncols + column - col0) * 4`
(lane-major, so one thread's run of columns is one contiguous range).  TMEM is only
reached through tcgen05 operations, so every TMEM record has proxy "async" and the
issuing tcgen05 operation as its actor.
"""
from __future__ import annotations

import numpy as np

from .descriptors import TMEM_COLUMNS, TMEM_LANES
from ..common.verdict import Verdict
from .errors import Diagnostic

TMEM_ALLOC_ID_BASE = 1 << 24     # TMEM allocation ids are disjoint from global/shared ids


class TmemError(Exception):
    def __init__(self, kind: str, message: str, **details):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details


class TmemAllocation:
    __slots__ = ("id", "name", "space", "cta", "col0", "ncols", "warp", "site", "live", "all_written")

    def __init__(self, alloc_id, cta, col0, ncols, warp, site):
        self.id = alloc_id
        self.name = f"tmem[{col0}:{col0 + ncols}]"
        self.space = "tmem"
        self.cta = cta
        self.col0 = col0
        self.ncols = ncols
        self.warp = warp
        self.site = site
        self.live = True
        self.all_written = True

    def offsets(self, lanes, cols):
        """Byte offsets in this allocation of cells (lane, column) (arrays or ints)."""
        return (np.asarray(lanes, dtype=np.int64) * self.ncols + np.asarray(cols, dtype=np.int64) - self.col0) * 4

    def describe(self) -> str:
        return f"columns {self.col0}-{self.col0 + self.ncols - 1}"


class TMEM:
    """One CTA's Tensor Memory."""

    def __init__(self, cta: int):
        self.cta = cta
        self.cells = np.zeros((TMEM_LANES, TMEM_COLUMNS), dtype=np.uint32)
        self.live: list[TmemAllocation] = []
        self.relinquished = False
        self.last_ncols: int | None = None
        self.version = 0

    # -- lifecycle
    def check_request(self, ncols: int) -> None:
        if ncols < 32 or ncols > TMEM_COLUMNS or ncols & (ncols - 1):
            raise TmemError("tcgen_invalid_columns", f"tcgen05.alloc of {ncols} columns; the column count must be a "
                                                     f"power of two in [32, 512]", ncols=ncols)
        if self.relinquished:
            raise TmemError("tcgen_alloc_after_relinquish", "tcgen05.alloc after this CTA executed "
                                                            "tcgen05.relinquish_alloc_permit; allocate before "
                                                            "relinquishing the permit")
        if self.last_ncols is not None and ncols > self.last_ncols:
            raise TmemError("tcgen_allocation_size_increase",
                            f"tcgen05.alloc of {ncols} columns after an allocation of {self.last_ncols}; the column "
                            f"count must not increase between allocations of a CTA", ncols=ncols,
                            previous=self.last_ncols)

    def first_fit(self, ncols: int) -> int | None:
        taken = sorted((a.col0, a.col0 + a.ncols) for a in self.live)
        col = 0
        for lo, hi in taken:
            if col + ncols <= lo:
                return col
            col = max(col, hi)
        return col if col + ncols <= TMEM_COLUMNS else None

    def fits(self, col: int, ncols: int) -> bool:
        """Columns col..col+ncols-1 are all free."""
        return col + ncols <= TMEM_COLUMNS and all(a.col0 + a.ncols <= col or col + ncols <= a.col0
                                                   for a in self.live)

    def allocate(self, col0: int, ncols: int, alloc_id: int, warp: int, site: int) -> TmemAllocation:
        a = TmemAllocation(alloc_id, self.cta, col0, ncols, warp, site)
        self.live.append(a)
        self.last_ncols = ncols
        self.version += 1
        return a

    def release(self, taddr: int, ncols: int) -> TmemAllocation:
        lane, col = taddr >> 16, taddr & 0xFFFF
        for a in self.live:
            if lane == 0 and a.col0 == col and a.ncols == ncols:
                self.live.remove(a)
                a.live = False
                self.version += 1
                return a
        near = next((a for a in self.live if lane == 0 and a.col0 == col), None)
        if near is not None:
            why = f"the allocation at column {col} has {near.ncols} columns, not {ncols}"
        elif self.live:
            why = "live allocations are " + ", ".join(a.describe() for a in self.live)
        else:
            why = "no TMEM allocation is live in this CTA"
        raise TmemError("tcgen_deallocation_mismatch",
                        f"tcgen05.dealloc of {ncols} columns at TMEM address {taddr:#x} does not match a live "
                        f"allocation ({why}); dealloc exactly the address and column count alloc returned, once",
                        taddr=taddr, ncols=ncols)

    # -- accesses
    def covering(self, lanes: np.ndarray, cols: np.ndarray, what: str) -> TmemAllocation:
        """The live allocation holding every cell (lanes[i], cols[i]); raises TmemError otherwise."""
        # (the ufunc reductions themselves: ndarray.min / max add a Python wrapper per call)
        lo_l, hi_l = int(np.minimum.reduce(lanes, axis=None)), int(np.maximum.reduce(lanes, axis=None))
        lo_c, hi_c = int(np.minimum.reduce(cols, axis=None)), int(np.maximum.reduce(cols, axis=None))
        if lo_l < 0 or hi_l >= TMEM_LANES or lo_c < 0 or hi_c >= TMEM_COLUMNS:
            raise TmemError("tmem_access_out_of_bounds",
                            f"{what} touches TMEM lanes {lo_l}-{hi_l}, columns {lo_c}-{hi_c}; TMEM has lanes 0-127 "
                            f"and columns 0-511", lanes=[lo_l, hi_l], columns=[lo_c, hi_c])
        for a in self.live:
            if a.col0 <= lo_c and hi_c < a.col0 + a.ncols:
                return a
        held = ", ".join(a.describe() for a in self.live) or "none"
        raise TmemError("tmem_access_outside_live_allocation",
                        f"{what} touches TMEM columns {lo_c}-{hi_c} (lanes {lo_l}-{hi_l}), outside every live "
                        f"allocation (live: {held}); access only columns tcgen05.alloc returned, before dealloc",
                        columns=[lo_c, hi_c], lanes=[lo_l, hi_l])

    def describe(self) -> str:
        used = sum(a.ncols for a in self.live)
        return f"{used} of 512 columns allocated ({', '.join(a.describe() for a in self.live) or 'none'})"


def tmem_of(rt) -> TMEM:
    if rt.tmem is None:
        rt.tmem = TMEM(rt.index)
    return rt.tmem


def next_alloc_id(eng) -> int:
    n = getattr(eng, "tmem_allocs", 0)
    eng.tmem_allocs = n + 1
    return TMEM_ALLOC_ID_BASE + n


def live_at_exit(ctas, sites) -> list[Diagnostic]:
    """`tcgen_live_allocations_at_exit` for every allocation still live when the run completed."""
    out = []
    for rt in ctas:
        if rt.tmem is None:
            continue
        for a in rt.tmem.live:
            s = sites[a.site]
            out.append(Diagnostic(
                "tcgen_live_allocations_at_exit", Verdict.ERROR,
                f"TMEM {a.describe()} allocated by warp {a.warp} (CTA {rt.index}) are still allocated when the "
                f"kernel exits; every allocation must be freed with tcgen05.dealloc before exit",
                s.span, {"cta": rt.index, "warp": a.warp, "site": a.site, "columns": [a.col0, a.col0 + a.ncols],
                         "allocation": a.name}))
    return out


def record_cells(eng, site, alloc, lanes, cols, kind, *, w=None, op=None, lane_mask=None) -> None:
    """Access records for cells (lanes[t, r], cols[t, r]) (32 x R): one record per run of registers whose
    cells are consecutive columns of the same lane for every thread (32x32b -> one record)."""
    if not eng.tracing:
        eng.stats["accesses"] += 1
        return
    regs = lanes.shape[1]
    # register r starts a new run unless every thread's cell r follows its cell r - 1 (one comparison for all)
    joined = ((lanes[:, 1:] == lanes[:, :-1]) & (cols[:, 1:] == cols[:, :-1] + 1)).all(axis=0)
    bounds = [0, *(np.flatnonzero(~joined) + 1).tolist(), regs]
    for start, end in zip(bounds[:-1], bounds[1:]):
        offs = alloc.offsets(lanes[:, start], cols[:, start])
        _emit(eng, site, alloc, offs, 4 * (end - start), kind, w, op, lane_mask)


def record_rows(eng, site, alloc, lanes, col0, ncols: int, kind, op) -> None:
    """Async op records: `ncols` columns from `col0` in each TMEM lane of `lanes` (one record per lane, in one bulk
    record; `col0` may be an array: each lane's own first column)."""
    if not eng.tracing:
        eng.stats["accesses"] += 1
        return
    lanes = np.asarray(lanes, dtype=np.int64).reshape(-1)
    eng.access_runs(op, site, alloc, alloc.offsets(lanes, col0), 4 * ncols, kind)


def _emit(eng, site, alloc, offs, size, kind, w, op, lane_mask) -> None:
    if op is not None and w is None:
        lanes = np.zeros(32, dtype=np.bool_)
        lanes[op.lane] = True
        eng.access(None, site, alloc, offs, size, kind, proxy="async", lanes=lanes, actor=op.id, iters=op.iters,
                   warp=op.warp, cta=op.cta)
    else:
        eng.access(w, site, alloc, offs, size, kind, proxy="async", lanes=lane_mask,
                   actor=op.id if op is not None else -1)
