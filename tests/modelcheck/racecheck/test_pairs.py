"""Racecheck's candidate pairs (`modelcheck.racecheck.pairs`): a fixed number per reuse of a ring slot,
none within one actor, grouped by a stable sort; chunk by chunk (the carried shadow, granules that
shrink as finer accesses arrive) exactly the pairs of a byte-at-a-time shadow over the whole trace."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.racecheck.replay import Pass
from modelcheck.racecheck import granules
from modelcheck.racecheck.pairs import stable_order
from tests.manifest import KERNELS, entries, manifest_inputs


def _pass(name: str, chunk_rows=None, **constants) -> Pass:
    kernel = modelcheck.load(KERNELS / name, **constants)
    trace = numsim.Trace()
    inputs = manifest_inputs(kernel.func, dict(entries())[name.removesuffix(".py")], kernel.constants)
    res = numsim.run(kernel.func, inputs, observers=(trace,))
    p = Pass(res.stats["warps"], (res.stats["block"][0] + 31) // 32, trace.sync, trace.accesses, chunk_rows)
    p.run()
    return p


def test_each_chunk_adds_the_same_candidate_pairs():
    """The dvec ring reuses every slot each chunk: a reuse is paired with the accesses since the slot's last
    write only, so each chunk adds the same number of pairs (pairing it with every earlier reuse would add more
    each chunk); the ring is race-free at every size."""
    counts = []
    for chunks in (3, 4, 5, 6):
        p = _pass("kda_ring_dvec.py", NC=chunks)
        assert not p.races
        counts.append(p.candidates.shape[0])
    steps = np.diff(counts)
    assert steps[0] > 0 and (steps == steps[0]).all(), counts


def _byte_shadow(records) -> tuple[set, set]:
    """The last-write / reads-since shadow, one byte at a time in trace order (no vectorization, no granules):
    (pairs of different actors, pairs of one actor), as (prior record, prior lane, current record, current lane,
    byte).  One record's lanes see the shadow as it was before the record."""
    last, reads = {}, {}
    different, same = set(), set()
    for i, rec in enumerate(records):
        writes = rec.kind in ("write", "rmw")
        mine = []
        for lane, off in rec.lane_offsets().items():
            who = -1 - rec.actor if rec.actor >= 0 else rec.warp * 32 + lane
            for b in range(off, off + rec.size):
                key = (rec.space, rec.alloc, b)
                earlier = ([last[key]] if key in last else []) + (reads.get(key, []) if writes else [])
                for j, pl, pwho in earlier:
                    (different if pwho != who else same).add((j, pl, i, lane, b))
                mine.append((key, (i, lane, who)))
        for key, acc in mine:
            if writes:
                last[key], reads[key] = acc, []
            else:
                reads.setdefault(key, []).append(acc)
    return different, same


def _bytes_of(candidates) -> list:
    return [(a, al, b, bl, x) for a, al, b, bl, lo, n in candidates.tolist() for x in range(lo, lo + n)]


@pytest.mark.parametrize("name,consts", [("kda_ring_dvec.py", {"NC": 4}), ("mma_ts.py", {}),
                                         ("race_tmem_dealloc_reader.py", {}), ("race_lane_broadcast.py", {})])
@pytest.mark.parametrize("chunk_rows", [None, 3])
def test_candidates_are_the_byte_shadow_pairs_of_different_actors(name, consts, chunk_rows):
    """Exactly the byte shadow's pairs whose accesses belong to different actors (each byte once), grouped by the
    later record; program order orders one lane's (or one async operation's) accesses, and the ring's lanes do
    reuse their own words, so the pruning is exercised.  With 3 records per chunk the shadow is carried across
    chunks and granules are split when a finer access comes (TMEM: a dealloc's whole allocation, then lanes)."""
    p = _pass(name, chunk_rows, **consts)
    different, same = _byte_shadow(p.records)
    assert different
    got = _bytes_of(p.candidates)
    assert len(got) == len(set(got)) and set(got) == different
    if name == "kda_ring_dvec.py":
        assert same                          # a lane rewrites its own slot word: pairs the checker leaves out
    current = p.candidates[:, 2]
    assert (np.diff(current) >= 0).all()
    assert p.lane_accesses == sum(32 if r.lanes is None else int(np.count_nonzero(r.lanes)) for r in p.records)


@pytest.mark.parametrize("page_shift", [2, 6, 12])
@pytest.mark.parametrize("name,consts", [("kda_ring_dvec.py", {"NC": 4}), ("mma_ts.py", {}),
                                         ("race_tmem_dealloc_reader.py", {})])
def test_small_pages_give_the_byte_shadow_pairs(name, consts, page_shift, monkeypatch):
    """Pages of 4, 64 and 4096 bytes (granules.Pages): accesses span many pages, cut in pieces, and pages get
    granules of their own, finer where a small access falls, split in the carry as chunks of 3 records bring them
    (mma_ts at 64 and 4096 bytes); the pairs are still exactly the byte shadow's."""
    monkeypatch.setattr(granules, "PAGE_SHIFT", page_shift)
    p = _pass(name, 3, **consts)
    different, _ = _byte_shadow(p.records)
    got = _bytes_of(p.candidates)
    assert len(got) == len(set(got)) and set(got) == different


@pytest.mark.parametrize("bound", [1, 17, 1 << 16, (1 << 16) + 1, 200_000, 1 << 20, (1 << 20) + 1, 1 << 40])
def test_stable_order_is_a_stable_argsort(bound):
    rng = np.random.default_rng(bound % 1000)
    for n in (0, 1, 5000):
        keys = rng.integers(0, bound, n)
        keys[: n // 2] = np.sort(keys[: n // 2])          # presorted runs, as in traces
        assert (stable_order(keys, bound) == np.argsort(keys, kind="stable")).all()
