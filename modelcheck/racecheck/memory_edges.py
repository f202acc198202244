"""Happens-before edges through memory for Racecheck's flow (`flow.Flow`): strong writes publish what their lanes
know (release rows, and fenced tcgen05 work), RMWs continue release sequences, strong reads acquire the rows of the
writes they read with covering scopes (docs/semantics.md#happens-before).  With split clocks a row that crosses
clusters is translated into the receiver's columns (`foreign`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .clocks import frozen


def one_lane(lane: int) -> np.ndarray:
    m = np.zeros(32, dtype=np.bool_)
    m[lane] = True
    return m


class MemoryEdges:
    """The memory edges of `flow.Flow` (a mixin: the state is the flow's)."""

    warps: Any
    tc: Any
    foreign: Any
    cta_domain: list
    release_rows: dict
    owned_release: set
    ledger: Any
    tc_rows: dict

    def publish(self, index: int, warp: int, lanes, level: int, via_fence: bool) -> None:
        """A strong write (record `index`) by these lanes: what each publishes to an acquire reading from it."""
        w = self.warps[warp]
        # any morally strong write is a thread sync for fenced tcgen05 work (a relaxed flag included); lanes that
        # share their tcgen05 rows publish one row, shared read-only
        tc = frozen(w.tc_release(None)) if w.tc is not None and w.tc_fenced.rows is None \
            and w.tc_pending.rows is None else None
        for lane in lanes:
            if w.tc is not None:
                self.tc_rows[(index, lane)] = tc if tc is not None else w.tc_release(one_lane(lane))
            if via_fence:
                row = w.fence_row.get(lane)
                if row is None:
                    continue
            else:
                row = w.snapshot(lane)
                if (index, lane) not in self.owned_release:
                    # a full-width snapshot of its own: charged to the memory budget while an access may read it
                    self.owned_release.add((index, lane))
                    self.ledger.made(1)
            self.release_rows[(index, lane)] = (row, level, w.cta)
        if not via_fence:
            w.epoch += 1

    def relay(self, index: int, warp: int, level: int, sources) -> None:
        """A strong RMW (record `index`) that read a write with a release row continues its release sequence: PTX
        observation order runs from a write through atomic RMWs that read it (PTX ISA 8.9.4), so an acquire
        reading the RMW synchronizes with the write's release pattern.  The write and the RMW must be morally
        strong; an acquire then needs the lower of the two scopes.  Sibling lanes of the RMW itself (`t ==
        index`) pass nothing on (docs/semantics.md#happens-before)."""
        w = self.warps[warp]
        for lane, t, wl, t_level, t_cta in sources:
            if t == index:
                continue
            pub = self.release_rows.get((t, wl))
            if pub is None:
                continue
            need = 1 if t_cta == w.cta else 3
            if t_level < need or level < need:
                continue
            row, wlevel, wcta = pub
            own = self.release_rows.get((index, lane))
            if own is None:
                self.release_rows[(index, lane)] = (row, min(wlevel, level), wcta)
            else:
                if self.foreign is not None:
                    row = self.foreign.translate(row, self.cta_domain[wcta], self.cta_domain[own[2]])
                    own = self.release_rows[(index, lane)]      # (a foreign column given may have widened the rows)
                self.release_rows[(index, lane)] = (np.maximum(own[0], row), own[1], own[2])
                if (index, lane) not in self.owned_release:       # (a new row now, no longer the write's)
                    self.owned_release.add((index, lane))
                    self.ledger.made(1)

    def acquire_from_memory(self, index: int, warp: int, level: int, acquire: bool, sources) -> list:
        """A strong read (record `index`) takes the release row of the write each lane reads from, scopes covering.
        `sources`: (lane, write record, write lane, write's scope level, write's CTA) in the read's entry order.
        Returns the scope mismatches (write record, write level)."""
        w = self.warps[warp]
        seen = set()
        mismatches = []
        for lane, t, wl, t_level, t_cta in sources:
            if (t, lane) in seen:
                continue
            seen.add((t, lane))
            pub = self.release_rows.get((t, wl))
            tc = self.tc_rows.get((t, wl)) if self.tc is not None else None
            if pub is None and tc is None:
                continue
            need = 1 if t_cta == w.cta else 3
            if tc is not None and t_level >= need and level >= need:
                if self.foreign is not None:
                    tc = self.foreign.translate(tc, self.cta_domain[t_cta], self.cta_domain[w.cta])
                w.tc_pending.merge(one_lane(lane), tc)
            if pub is None:
                continue
            row, wlevel, wcta = pub
            if wlevel < need or level < need:
                mismatches.append((t, wlevel, wcta != w.cta))
                continue
            if self.foreign is not None:
                row = self.foreign.translate(row, self.cta_domain[wcta], self.cta_domain[w.cta])
            if acquire:
                w.k.merge(one_lane(lane), row)
            else:
                w.pending_acquire.setdefault(lane, []).append(row)
        return mismatches
