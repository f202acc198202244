"""What a replay compares between two runs: output elements, and which write each read observed.

`observed_writes(accesses)` walks a run's access records in execution order with a shadow of
the last writer of every byte (per allocation) and returns, for each read, the writes whose
bytes it saw.  A read and a write are named by (warp, site, loop iterations, event) -- the
same in both runs of one kernel when they execute the same operation; `None` is a byte's
initial contents.
"""
from __future__ import annotations

import numpy as np

from ..numsim.schedule import access_event


def _byte_index(rec) -> np.ndarray:
    """The byte offsets (in its allocation) a record touches, over its lanes."""
    span = np.arange(rec.size, dtype=np.int64)
    if not isinstance(rec.offsets, np.ndarray):
        return int(rec.offsets) + span
    offs = rec.offsets if rec.lanes is None else rec.offsets[rec.lanes]
    return (offs.astype(np.int64)[:, None] + span[None, :]).ravel()


def observed_writes(accesses) -> dict:
    """read key -> tuple of writer keys (None: initial contents), in first-seen order; also the read's allocation."""
    shadows: dict[int, np.ndarray] = {}
    writers: list = [None]                 # index 0: the initial contents
    writer_index: dict = {}
    out: dict = {}
    for rec in accesses:
        idx = _byte_index(rec)
        if idx.size == 0:
            continue
        shadow = shadows.get(rec.alloc)
        top = int(idx.max()) + 1
        if shadow is None or shadow.size < top:
            grown = np.zeros(max(top, 64 if shadow is None else 2 * shadow.size), dtype=np.int32)
            if shadow is not None:
                grown[:shadow.size] = shadow
            shadow = shadows[rec.alloc] = grown
        key = (rec.warp, rec.site, tuple(rec.iters or ()), access_event(rec))
        if rec.kind in ("read", "rmw"):
            seen = tuple(writers[i] for i in dict.fromkeys(shadow[idx].tolist()))
            prev = out.get(key)
            out[key] = (seen if prev is None else tuple(dict.fromkeys(prev[0] + seen)), rec.alloc_name)
        if rec.kind in ("write", "rmw"):
            wi = writer_index.get(key)
            if wi is None:
                wi = writer_index[key] = len(writers)
                writers.append(key)
            shadow[idx] = wi
    return out


def output_differences(default: dict, forced: dict, limit: int = 16) -> tuple[list, int]:
    """Elements whose values differ: ([{output, index, default, replayed}] up to `limit`, total count)."""
    shown: list[dict] = []
    total = 0
    for name in sorted(set(default) & set(forced)):
        a, b = default[name], forced[name]
        if a.shape != b.shape:
            continue
        diff = a != b
        if np.issubdtype(a.dtype, np.floating):
            diff &= ~(np.isnan(a) & np.isnan(b))
        where = np.argwhere(diff)
        total += len(where)
        for idx in where[:max(limit - len(shown), 0)]:
            index = tuple(int(i) for i in idx)
            shown.append({"output": name, "index": list(index), "default": a[index].item(),
                          "replayed": b[index].item()})
    return shown, total


def other_round(writer, read) -> bool:
    """A write (key) made in another round than the read: their outermost loop iterations differ (producer and
    consumer loops of a pipeline count rounds alike; inner loops need not be the same loop, so they are not
    compared; an async copy carries its issue's iterations)."""
    if writer is None or read is None:
        return False
    wi, ri = writer[2], read[2]
    return bool(wi) and bool(ri) and wi[0] != ri[0]


def read_differences(default: dict, forced: dict, rounds: bool = False) -> list[dict]:
    """Reads of the forced run that saw other writes than in the default run (or did not run there), in
    forced-run order; reads that ran in both runs first.  With `rounds`, also the reads that saw a write from
    another iteration (`other_round`) even where the default run saw the same."""
    both: list = []
    new: list = []
    for key, (saw, alloc) in forced.items():
        before = default.get(key)
        if before is not None and set(before[0]) == set(saw) and \
                not (rounds and any(other_round(w, key) for w in saw)):
            continue
        item = {"read": key, "allocation": alloc, "saw": list(saw), "default_saw": None if before is None
                else list(before[0])}
        (new if before is None else both).append(item)
    return both + new


def barrier_states(events, barriers: dict) -> dict:
    """name -> how each barrier (tuple -> name) ends in a run, from its sync events: the generations
    completed and what the last one holds (the arrivals a non-confluent schedule leaves behind)."""
    out = {}
    for barrier, name in barriers.items():
        mine = [e for e in events if e.barrier == barrier]
        if barrier[0] == "named":
            gens: dict = {}
            for e in mine:
                if e.kind in ("bar.sync", "bar.arrive", "bar.red"):
                    g = gens.setdefault(e.generation, {"threads": 0, "count": e.count, "warps": []})
                    g["threads"] += int(e.details.get("threads", 32))
                    g["warps"].append(e.warp)
            done = sum(1 for g in gens.values() if g["threads"] >= g["count"])
            text = f"{done} generation(s) completed"
            open_ = [(k, g) for k, g in sorted(gens.items()) if g["threads"] < g["count"]]
            for k, g in open_:
                text += (f"; generation {k}: {g['threads']}/{g['count']} threads arrived (warp(s) "
                         f"{', '.join(map(str, sorted(g['warps'])))}) and nobody completes it")
        else:
            done = sum(1 for e in mine if e.completed)
            last = max((e.generation for e in mine if e.generation is not None), default=0)
            pending = [e for e in mine if e.kind == "mbarrier.arrive" and e.generation == last and not e.completed]
            text = f"{done} phase(s) completed"
            if pending and not any(e.completed and e.generation == last for e in mine):
                text += f"; generation {last}: {sum(e.count for e in pending)} arrival(s) of an incomplete phase"
        out[name] = text
    return out
