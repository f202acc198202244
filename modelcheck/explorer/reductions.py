"""What each reduction saves: the same fixed sync programs verified under four configurations.

(a) per-resource projections + causal certificates + sleep sets (what Synccheck runs),
(b) projections + sleep sets, no certificates,
(c) projections alone (no certificates, no sleep sets),
(d) the whole program, unprojected and unreduced (`verify_whole`, no sleep sets).

`measure(programs)` runs them and returns one row per configuration with the verifier
states and transitions, the wall time and, for the projected ones, the per-projection
figures.  A configuration that stops at a limit reports the counts reached so far and the
limit it hit: its true size is larger (and projections after the one that stopped were
never explored).
"""
from __future__ import annotations

import time
from typing import Any

from ir.errors import UsageError

from . import Programs, verify, verify_whole

CONFIGURATIONS = {
    "a": "projections + certificates + sleep sets (synccheck)",
    "b": "projections + sleep sets",
    "c": "projections, no certificates or sleep sets",
    "d": "whole program, no reductions",
}


def measure(programs: Programs, configs: str = "abcd", *, max_states: int = 200_000,
            max_transitions: int = 2_000_000, max_seconds: float = 60.0) -> list[dict]:
    rows = []
    for key in configs:
        if key not in CONFIGURATIONS:
            raise UsageError(f"unknown configuration {key!r}; choose from {', '.join(CONFIGURATIONS)}")
        limits: dict[str, Any] = {"max_states": max_states, "max_transitions": max_transitions,
                                  "max_seconds": max_seconds}
        t0 = time.perf_counter()
        if key == "d":
            v = verify_whole(programs, sleep_sets=False, **limits)
        else:
            v = verify(programs, certificates_on=key == "a", sleep_sets=key in "ab", **limits)
        wall = time.perf_counter() - t0
        rows.append({"config": key, "label": CONFIGURATIONS[key], "status": v.status, "states": v.states,
                     "transitions": v.transitions, "wall_time_s": wall, "limit": v.limit,
                     "stopped_at": v.resource_name if v.status == "limit" else "",
                     "projections": v.projections if key != "d" else 1, "certified": v.certified,
                     "searched": v.searched, "per_projection": list(v.per_resource)})
    return rows


def describe(row: dict) -> str:
    """'complete', or how the configuration stopped."""
    if row["status"] == "limit":
        where = f" in {row['stopped_at']}" if row["stopped_at"] else ""
        return f"> limit ({row['limit']}{where})"
    return row["status"]
