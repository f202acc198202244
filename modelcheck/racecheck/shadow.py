"""Shadow memory: who last wrote each byte, and who read it since (Racecheck).

Only bytes that some instruction writes are tracked (a pre-pass over the trace finds
them); reads of read-only bytes can never conflict.  Per tracked byte: the last write's
stamp (actor column, epoch) and record; the reads since that write, per reader warp, as
a lane mask with the latest epoch (a warp re-reading with other lanes keeps the union at
the newer epoch: sound, occasionally stricter than needed); and up to two async readers.

`read`/`write` check one access record against the shadow for every lane's bytes at
once and return the unordered conflicts; `Conflict` carries what classification needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LANE_BITS = (np.uint64(1) << np.arange(32, dtype=np.uint64)).astype(np.uint64)
SCOPE_LEVEL = {"cta": 1, "cluster": 2, "gpu": 3, "sys": 4}
ASYNC_SLOTS = 2


@dataclass
class Conflict:
    byte: int                # byte offset in the allocation
    prior_rec: int           # index of the prior access in the pass's record table
    prior_lane: int
    current_lane: int
    prior_kind: str          # read | write
    prior_col: int


def strength(rec) -> int:
    """0 for weak/plain accesses, else the scope level of a strong (relaxed and stronger) access."""
    if rec.order in ("weak",) or rec.actor >= 0:
        return 0
    if rec.order == "volatile":
        return SCOPE_LEVEL["sys"]
    return SCOPE_LEVEL.get(rec.scope, 3)


class Shadow:
    """`unit`: the shadow's granule in bytes — the GCD of every access size and offset to the allocation, so
    no access covers part of a granule and checking granules is as exact as checking bytes."""

    def __init__(self, nbytes: int, written: np.ndarray, unit: int = 1):
        self.unit = unit
        self.n = nbytes
        self.tracked = np.full(len(written), -1, dtype=np.int64)
        idx = np.flatnonzero(written)
        self.tracked[idx] = np.arange(idx.size)
        t = idx.size
        self.w_col = np.full(t, -1, dtype=np.int64)
        self.w_epoch = np.zeros(t, dtype=np.int64)
        self.w_rec = np.full(t, -1, dtype=np.int64)
        self.w_strength = np.zeros(t, dtype=np.int8)
        self.w_proxy = np.zeros(t, dtype=np.int8)       # 0 generic, 1 async
        self.w_cta = np.zeros(t, dtype=np.int32)
        self.slot_of_warp: dict[int, int] = {}
        self.slot_warp: list[int] = []
        self.r_mask = np.zeros((t, 0), dtype=np.uint64)
        self.r_epoch = np.zeros((t, 0), dtype=np.int64)
        self.r_rec = np.zeros((t, 0), dtype=np.int64)
        self.r_strength = np.zeros((t, 0), dtype=np.int8)
        self.a_col = np.full((t, ASYNC_SLOTS), -1, dtype=np.int64)
        self.a_rec = np.full((t, ASYNC_SLOTS), -1, dtype=np.int64)

    def slot(self, warp: int) -> int:
        s = self.slot_of_warp.get(warp)
        if s is None:
            s = self.slot_of_warp[warp] = len(self.slot_warp)
            self.slot_warp.append(warp)
            t = self.w_col.size
            self.r_mask = np.concatenate([self.r_mask, np.zeros((t, 1), dtype=np.uint64)], axis=1)
            self.r_epoch = np.concatenate([self.r_epoch, np.zeros((t, 1), dtype=np.int64)], axis=1)
            self.r_rec = np.concatenate([self.r_rec, np.full((t, 1), -1, dtype=np.int64)], axis=1)
            self.r_strength = np.concatenate([self.r_strength, np.zeros((t, 1), dtype=np.int8)], axis=1)
        return s
