"""Racecheck's candidate pairs (`modelcheck.racecheck.pairs`): a fixed number per reuse of a ring slot,
none within one actor, grouped by a stable sort."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.racecheck.analysis import Pass
from modelcheck.racecheck.pairs import stable_order
from tests.manifest import KERNELS


def _pass(name: str, **constants) -> Pass:
    kernel = modelcheck.load(KERNELS / name, **constants)
    trace = numsim.Trace()
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func), observers=(trace,))
    p = Pass(res.stats["warps"], (res.stats["block"][0] + 31) // 32, trace.sync, trace.accesses)
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
        counts.append(p.pairs.prior.size)
    steps = np.diff(counts)
    assert steps[0] > 0 and (steps == steps[0]).all(), counts


def _shadow_pairs(ent) -> set:
    """The last-write / reads-since shadow, one granule at a time in trace order (no vectorization)."""
    out = set()
    m, i = ent.rec.size, 0
    while i < m:
        end = i
        while end < m and ent.gid[end] == ent.gid[i]:
            end += 1
        last_write, reads, k = None, [], i
        while k < end:                      # one record's entries on this granule at a time
            g = k
            while g < end and ent.rec[g] == ent.rec[k]:
                g += 1
            writes = bool(ent.writes[ent.rec[k]])
            for e in range(k, g):
                if last_write is not None:
                    out.add((last_write, e))
                if writes:
                    out.update((r, e) for r in reads)
            last_write, reads = (g - 1, []) if writes else (last_write, reads + list(range(k, g)))
            k = g
        i = end
    return out


def test_candidates_are_the_shadow_pairs_of_different_actors():
    """Exactly the shadow's pairs whose accesses belong to different actors, grouped by the later record;
    program order orders one lane's (or one async operation's) accesses, and the ring's lanes do reuse their
    own words, so the pruning is exercised."""
    p = _pass("kda_ring_dvec.py", NC=4)      # the 3-slot ring wraps: a lane rewrites its own slot word
    ent, pairs = p.ent, p.pairs
    shadow = _shadow_pairs(ent)
    different = {(a, b) for a, b in shadow if ent.actor[a] != ent.actor[b]}
    assert different and len(different) < len(shadow)
    got = list(zip(pairs.prior.tolist(), pairs.current.tolist()))
    assert len(got) == len(set(got)) and set(got) == different
    records = ent.rec[pairs.current]
    for r in range(len(p.records)):
        assert (records[pairs.start[r]:pairs.start[r + 1]] == r).all()


@pytest.mark.parametrize("bound", [1, 17, 1 << 16, (1 << 16) + 1, 200_000, 1 << 20, (1 << 20) + 1, 1 << 40])
def test_stable_order_is_a_stable_argsort(bound):
    rng = np.random.default_rng(bound % 1000)
    for n in (0, 1, 5000):
        keys = rng.integers(0, bound, n)
        keys[: n // 2] = np.sort(keys[: n // 2])          # presorted runs, as in traces
        assert (stable_order(keys, bound) == np.argsort(keys, kind="stable")).all()
