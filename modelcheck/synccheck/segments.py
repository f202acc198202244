"""Cluster launch control checked by segments: the rule, the trace facts that license it, and the plan.

Synccheck checks a kernel with CLC requests once per answer sequence (explorer/choices.py); T tiles (clusters of
the grid) give up to 2^(T-1) sequences.  With one resident cluster at a time (NumSim's CLC launch, `clc_resident`
1) a sequence is a *composition* of the tiles 0..T-1 into consecutive segments: the cluster launched for tile i
cancels i+1, .., j-1 (each request answered "cancelled"), gets "none remain" on its next request and exits, and
cluster j launches.  The sequence's answers are the composition's cuts: answer k is True iff tiles k and k+1 are
in one segment.

The rule.  Cluster i's run is decided by (i, j) -- which clusters it cancels and when it is told "none remain"; the
response bytes of a forced "none" (the last segment) and of a chosen one are the same -- and by the global bytes it
reads.  If (1) every cluster of every run checked requests in that shape (its answers: "cancelled" k times, then
one "none remain", its last request), (2) no sync event of a cluster names a barrier of another cluster, and (3)
no segment reads a global byte that a segment ending at or before its start writes (so no cluster can see another
cluster's writes, in any composition), then in every composition each cluster's run is the one it had in the run
where its segment was checked, and the sequence's verdict is the conjunction of its segments' verdicts (phase A's
observers and phase B's projections follow one cluster's barriers; the run order of clusters is fixed by the
launch).  So checking every one of the T(T+1)/2 segments once covers every sequence: `plan` picks compositions
that together contain every segment (at least (T+1)(T+2)/6 of them: each holds T of the T(T+1)(T+2)/6 tiles the
segments hold), and Synccheck runs those, each ended once the segments it has left were checked by earlier runs
(`cuts`: the clusters still pending then never run, as cancelled ones do; those before ran as in the whole
run).  A failing run is a real sequence's failure whatever the premise.  When a fact of the premise fails on some
run, Synccheck falls back to every answer sequence (explorer/choices.py), reusing the runs already made, and says
so in its stats (`clc_segments`).

Residency > 1 (more SMs than one cluster): two running clusters cancel pending clusters alternately, so a
cluster's tiles need not be consecutive and a run is not decided by (i, j): Synccheck falls back to sequences.
(NumSim's default is one resident cluster, the launch with the most choice points; a concurrent launch of clusters
that do not communicate, by (2) and (3), runs each cluster as it runs alone.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cmp_to_key

import numpy as np

from ..numsim.columns import KINDS
from ..numsim.trace import Observer

_READ, _WRITE = KINDS.index("read"), KINDS.index("write")    # an access column's kind codes
_COMPACT = 64                       # interval lists merged once this many pieces are pending


def _merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the half-open byte intervals [starts, ends) as sorted disjoint intervals."""
    if starts.size == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    return s[first], reach[last]


def _overlap(a: tuple, b: tuple) -> int | None:
    """A byte in both interval sets (each sorted and disjoint), or None."""
    (sa, ea), (sb, eb) = a, b
    if not sa.size or not sb.size:
        return None
    # for each interval of b, the last interval of a starting before its end
    k = np.searchsorted(sa, eb, side="left") - 1
    ok = k >= 0
    hit = ok & (ea[np.maximum(k, 0)] > sb)
    if not hit.any():
        return None
    i = int(np.flatnonzero(hit)[0])
    return int(max(sb[i], sa[k[i]]))


class Footprint(Observer):
    """Phase A's observer of the premise's facts: each cluster's global reads and writes (byte intervals per
    allocation), the CLC requests' issuers and answers, and sync events naming another cluster's barrier."""

    wants_accesses = True
    wants_columns = True

    def __init__(self):
        self.cta_cluster = np.zeros(0, dtype=np.int64)
        self.pieces: dict[tuple, list] = {}     # (cluster, allocation name, "r" | "w") -> [(starts, ends)]
        self.requests: dict[int, tuple] = {}    # request index -> (issuing cluster, cancelled cluster | None, choice)
        self.crossing: str | None = None        # the first sync event naming another cluster's barrier
        self._global: dict[int, bool] = {}

    def on_start(self, run) -> None:
        layout = run.cluster_layout()
        self.cta_cluster = layout.domain[::max(run.warps_per_cta, 1)].copy()

    def on_sync(self, ev) -> None:
        d = ev.details
        if "clc_request" in d:
            self.requests.setdefault(d["clc_request"], (int(self.cta_cluster[ev.cta]), d["cancelled_cluster"],
                                                        bool(d["clc_choice"])))
        b = ev.barrier
        if b is None or self.crossing is not None:
            return
        mine = int(self.cta_cluster[ev.cta])
        other = b[1] if b[0] == "cluster" else int(self.cta_cluster[b[1]]) if b[0] in ("mbarrier", "named") else mine
        if other != mine:
            self.crossing = f"{ev.kind} of CTA {ev.cta} (cluster {mine}) names {b[0]} {b[2]} of cluster {other}"

    def on_access_chunk(self, chunk) -> None:
        if not chunk.n:
            return
        table = chunk.allocs
        for k in range(len(self._global), len(table)):
            self._global[k] = table[k].space == "global"
        is_global = np.fromiter((self._global[k] for k in range(len(table))), dtype=bool, count=len(table))
        rows = is_global[chunk.alloc]
        if not rows.any():
            return
        counts = np.diff(chunk.lane_start)
        row_of = np.repeat(np.arange(chunk.n), counts)
        sel = rows[row_of]
        r = row_of[sel]
        starts = chunk.offset[sel]
        ends = starts + chunk.size[r]
        cluster = self.cta_cluster[chunk.cta[r]]
        kind = chunk.kind[r]
        alloc = chunk.alloc[r]
        for key in set(zip(cluster.tolist(), alloc.tolist(), kind.tolist())):
            c, a, k = key
            m = (cluster == c) & (alloc == a) & (kind == k)
            piece = (starts[m], ends[m])
            name = table[a].name
            for rw in (("r",) if k == _READ else ("w",) if k == _WRITE else ("r", "w")):
                got = self.pieces.setdefault((c, name, rw), [])
                got.append(piece)
                if len(got) >= _COMPACT:
                    got[:] = [_merge(np.concatenate([p[0] for p in got]), np.concatenate([p[1] for p in got]))]

    def result(self) -> dict:
        """What a run tells the segment search (picklable: it comes back from a resumed snapshot)."""
        sets: dict = {}
        for (c, name, rw), got in self.pieces.items():
            sets.setdefault(c, {"r": {}, "w": {}})[rw][name] = _merge(np.concatenate([p[0] for p in got]),
                                                                      np.concatenate([p[1] for p in got]))
        return {"requests": [self.requests[k] for k in sorted(self.requests)], "crossing": self.crossing,
                "footprints": sets}


def segments_of(requests: list, nclusters: int, upto: int | None = None) -> tuple[list | None, str]:
    """The run's segments [(i, j)] from its CLC requests in landing order, or None and why the run is not a
    composition of consecutive segments (clause (1) of the rule).  `upto`: the tile where the run ended (the
    clusters from it on never ran: `plan`'s cuts)."""
    by: dict[int, list] = {}
    for issuer, cancelled, _ in requests:
        by.setdefault(issuer, []).append(cancelled)
    out, i = [], 0
    while i < (nclusters if upto is None else upto):
        answers = by.pop(i, None)
        if not answers:
            return None, f"cluster {i} ran and made no cluster launch control request"
        *cancels, last = answers
        if last is not None:
            return None, f"cluster {i}'s last request cancelled cluster {last} (it exited without 'none remain')"
        if cancels != list(range(i + 1, i + 1 + len(cancels))):
            return None, f"cluster {i}'s requests were answered {answers}, not 'cancelled' k times then 'none remain'"
        out.append((i, i + 1 + len(cancels)))
        i += 1 + len(cancels)
    if by:
        return None, f"cluster(s) {sorted(by)} made requests but were cancelled"
    return out, ""


def answers_of(segments: list, tiles: int | None = None) -> tuple:
    """The composition's answer sequence: one per choice point (every request while a cluster is pending);
    `tiles`: of a run that ended after `segments` (default: they hold every tile)."""
    out: list[bool] = []
    end = segments[-1][1] if tiles is None else tiles
    for i, j in segments:
        out += [True] * (j - i - 1)
        if j < end:
            out.append(False)
    return tuple(out)


def cuts(nclusters: int, covered: set, todo: list) -> list[int]:
    """Where each planned run may end: the first tile of the run's last segments that an earlier run (or
    `covered`) already checked -- those clusters need not run again (ops/clc.py skip_rest)."""
    seen, out = set(covered), []
    for answers in todo:
        segs, cut = [], 0
        for k, a in enumerate(answers):
            if not a:
                segs.append((cut, k + 1))
                cut = k + 1
        segs.append((cut, nclusters))
        end = nclusters
        for i, j in reversed(segs):
            if (i, j) not in seen:
                break
            end = i
        out.append(end)
        seen |= set(segs)
    return out


def plan(nclusters: int, covered: set) -> list[tuple]:
    """Compositions (as answer sequences) that contain every segment not in `covered`: greedily the composition
    with the most uncovered segments (a longest path in the DAG of segments, weight 1 per uncovered one)."""
    want = {(i, j) for i in range(nclusters) for j in range(i + 1, nclusters + 1)} - set(covered)
    out: list[tuple] = []
    while want:
        best: list = [(0, 0, None)] + [None] * nclusters     # at tile j: (uncovered, -segments, previous cut)
        for j in range(1, nclusters + 1):
            for i in range(j):
                b = best[i]
                assert b is not None
                cand = (b[0] + ((i, j) in want), b[1] - 1, i)
                if best[j] is None or cand[:2] > best[j][:2]:
                    best[j] = cand
        segs, j = [], nclusters
        while j:
            i = best[j][2]
            segs.append((i, j))
            j = i
        segs.reverse()
        want -= set(segs)
        out.append(answers_of(segs))
    return sorted(out, key=cmp_to_key(_depth_first))


def _depth_first(a: tuple, b: tuple) -> int:
    """The order explorer.choices.explore visits answer sequences in (from the default run, "cancelled" every
    time): where two first differ, the one still on the default path comes first if it stays there, else the
    one that leaves it there (the earliest deviation first).  A failing sequence is then, as far as the plan
    allows, the one the depth-first search would have reported."""
    d = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), None)
    if d is None:
        return 0
    on, off = (a, b) if a[d] else (b, a)
    first = on if all(on[d:]) else off
    return -1 if first is a else 1


@dataclass
class SegmentSearch:
    """The segments seen so far, with their footprints, and what broke the premise (if anything did)."""

    nclusters: int
    seen: dict = field(default_factory=dict)      # (i, j) -> {"r": {alloc: intervals}, "w": {...}}
    broken: str = ""
    fresh: set = field(default_factory=set)       # segments added (or grown) since the last `verify`

    def add(self, facts: dict | None, upto: int | None = None) -> list | None:
        """Record a completed run's facts (a run ended at tile `upto`); its segments, or None (and `broken` says
        why) when the premise fails."""
        if self.broken:
            return None
        if facts is None:
            self.broken = "a run's trace facts were not recorded"
            return None
        if facts["crossing"]:
            self.broken = f"clusters share a barrier: {facts['crossing']}"
            return None
        segs, why = segments_of(facts["requests"], self.nclusters, upto)
        if segs is None:
            self.broken = why
            return None
        for i, j in segs:
            fp = facts["footprints"].get(i, {"r": {}, "w": {}})
            old = self.seen.get((i, j))
            self.fresh.add((i, j))
            if old is None:
                self.seen[(i, j)] = fp
                continue
            for rw in ("r", "w"):       # a segment seen twice: the union of both (conservative for clause (3))
                for name, iv in fp[rw].items():
                    prev = old[rw].get(name)
                    old[rw][name] = iv if prev is None else _merge(np.concatenate([prev[0], iv[0]]),
                                                                   np.concatenate([prev[1], iv[1]]))
        return segs

    def verify(self) -> bool:
        """Clause (3) over every pair of segments seen (the pairs with a segment added since the last call): no
        segment reads what one ending at or before its start writes.  False (and `broken` says where) when some
        does."""
        if self.broken:
            return False
        fresh, self.fresh = self.fresh, set()
        for (a, b), later in sorted(self.seen.items()):
            for (i, j), earlier in sorted(self.seen.items()):
                if j > a or ((a, b) not in fresh and (i, j) not in fresh):     # pairs of old ones: checked before
                    continue
                for name, w in earlier["w"].items():
                    r = later["r"].get(name)
                    byte = _overlap(w, r) if r is not None else None
                    if byte is not None:
                        self.broken = (f"the cluster of tiles {a}..{b - 1} reads {name} byte {byte}, which the cluster "
                                       f"of tiles {i}..{j - 1} writes")
                        return False
        return True

    def complete(self) -> bool:
        return len(self.seen) == self.nclusters * (self.nclusters + 1) // 2
