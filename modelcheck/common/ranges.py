"""Sorted ids written as ranges ("0-3,5"), as NumSim's diagnostics and the reports name warps, lanes and CTAs.

A shared leaf (tests/test_architecture.py LEAVES): imports nothing of modelcheck and no numpy, so the
start-up path (`modelcheck --version`, `parse`) can render errors without loading the simulator.
"""
from __future__ import annotations


def id_ranges(ids, sep: str = ",") -> str:
    """"0-3,5": sorted distinct ids with consecutive runs as ranges (warps, lanes)."""
    ids = sorted(set(ids))
    out: list[str] = []
    start: int | None = None
    prev = 0                                      # read only once start is set
    for i in ids:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return sep.join(out)
