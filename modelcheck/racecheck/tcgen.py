"""tcgen05 ordering for Racecheck (docs/semantics.md#tcgen05-and-tmem; checker-semantics §5.4 item 10).

Two tcgen05 operations (mma, cp, shift, ld, st, and a dealloc, modeled as a write of the
whole allocation by the deallocating warp) are judged against each other by tcgen05
knowledge only, kept per lane next to the ordinary knowledge (`WarpState.tc`): an
operation's column is 1 there once it was issued before the lane's later operations
(which orders pipelined pairs: mma->mma, cp->mma, shift->mma, shift->cp, mma->shift) and
2 (DONE) once it is complete for them (`wait::ld` / `wait::st` for the warp's own ld/st;
a `tcgen05.commit` observed through its mbarrier for mma/cp/shift).  Across threads the
knowledge moves only from a `fence::before_thread_sync` (a commit implies one) through a
thread sync (mbarrier, named barrier, warp sync, morally strong flag) to the next
`fence::after_thread_sync`.  Within a thread, a before-fence or commit also orders the
thread's earlier mma/cp/shift before its later ones.  A commit publishes its thread's
mma/cp/shift and their causal predecessors, never tcgen05 work the thread only imported.
Assumes: records and events of one NumSim trace, async columns assigned by `replay.Pass`.
"""
from __future__ import annotations

import numpy as np

from ..common.ordering import PIPELINED_AFTER
from ..numsim import AccessRecord
from .clocks import Knowledge, WarpState, resize, resize_shared

DONE = 2
CODE = {"tcgen05.mma": 1, "tcgen05.cp": 2, "tcgen05.shift": 3, "tcgen05.ld": 4, "tcgen05.st": 5,
        "tcgen05.dealloc": 6}
_TRACKED = (1, 2, 3)              # mma, cp, shift: covered by the issuing thread's tcgen05.commit
# pipelined pairs [earlier, later] (PTX §9.7.16.6.2), ordered in issue order; shift->cp is the 4x256b shape in
# the PTX (not distinguished here)
PIPELINED = np.zeros((7, 7), dtype=np.bool_)
for _later, _earlier in PIPELINED_AFTER.items():
    for _e in _earlier:
        PIPELINED[CODE[_e], CODE[_later]] = True
DEALLOC_ACTOR = 1 << 40           # synthetic actor ids of deallocations: DEALLOC_ACTOR + the event's seq
HINT_AFTER_FENCE = ("the synchronization carries the earlier tcgen05 operation's completion, but no "
                    "tcgen05.fence::after_thread_sync follows it before this tcgen05 operation; add the fence "
                    "after the wait")
HINT_PUBLISH = ("order the earlier tcgen05 operation first: complete it (tcgen05.wait::ld/st, or tcgen05.commit "
                "and its mbarrier) and execute tcgen05.fence::before_thread_sync after it, before the "
                "synchronization (within one thread: before this operation)")


def dealloc_record(ev):
    """The synthetic record of a tcgen05.dealloc event (a write of the whole allocation right after it), or None."""
    if ev.kind != "tcgen05.dealloc" or ev.details.get("allocation") is None:
        return None
    col0, ncols = ev.details["taddr"] & 0xFFFF, ev.details["ncols"]
    lane0 = np.zeros(32, dtype=np.bool_)
    lane0[0] = True
    return AccessRecord(ev.seq + 0.5, ev.cta, ev.warp, ev.site, ev.iters, lane0, "tmem", ev.details["allocation"],
                        f"tmem[{col0}:{col0 + ncols}]", 0, 128 * ncols * 4, "write", "async",
                        actor=DEALLOC_ACTOR + ev.seq)


def with_deallocs(events, records) -> list:
    """The records plus one synthetic write of the whole allocation per tcgen05.dealloc, right after its event."""
    extra = [r for r in map(dealloc_record, events) if r is not None]
    if not extra:
        return records
    return sorted([*records, *extra], key=lambda r: r.seq)


def _one(lane: int) -> np.ndarray:
    m = np.zeros(32, dtype=np.bool_)
    m[lane] = True
    return m


def _tc(w: WarpState) -> Knowledge:
    """The warp's tcgen05 knowledge (TcgenOrder is only asked about warps that have it)."""
    assert w.tc is not None
    return w.tc


class TcgenOrder:
    """The tcgen05 side of one Racecheck pass: forks, commit coverage and same-thread fence order."""

    def __init__(self, width: int, async_col: dict):
        self.async_col = async_col
        self.fork: dict[int, tuple] = {}         # op -> (tcgen05 knowledge, not yet fenced-in knowledge) at issue
        self.issued: dict[tuple, list] = {}      # (warp, lane) -> columns of its live mma/cp/shift, in issue order
        self.count: dict[tuple, int] = {}        # (warp, lane) -> how many mma/cp/shift it issued
        self.counted: dict[int, list] = {}       # warp -> its lanes in `count` (a fence looks at those only)
        self.last: dict[tuple, np.ndarray] = {}  # (warp, lane) -> tcgen05 knowledge at its latest mma/cp/shift
        self.commit_cover: dict[int, tuple] = {}  # commit op -> (columns it covers, their predecessors' knowledge)
        # a lane's mma/cp/shift number i is ordered before its later ones issued after more than i were fenced
        self.fenced_upto: dict[tuple, int] = {}
        # tracked op -> (its number among its lane's mma/cp/shift, how many of those were fenced at its issue); per
        # operation, since columns of different clock domains alias
        self.op_index: dict[int, tuple] = {}

    def issue(self, ev, w: WarpState, op: int, lane: int) -> None:
        """A tcgen05 operation (or commit) issued: fork its knowledge; the issuing lanes now order after it."""
        kind = ev.details.get("kind", "")
        if kind == "tcgen05.commit":
            key = (ev.warp, lane)
            cols = np.array(self.issued.get(key, ()), dtype=np.int64)
            self.commit_cover[op] = (cols, self.last.get(key))
            self.fenced_upto[key] = self.count.get(key, 0)
            w.tc_fenced.absorb(_one(lane), _tc(w))      # commit implies fence::before_thread_sync
            return
        code = CODE.get(kind)
        if code is None or op not in self.async_col:
            return
        m = _one(lane) if "lane" in ev.details else ev.lanes    # mma/cp/shift: one thread; ld/st: the warp
        tc = _tc(w)
        row = tc.meet_frozen(m)           # (read-only, shared with the warp until its next tcgen05 write)
        self.fork[op] = (row, w.tc_pending.meet_frozen(m))
        col = self.async_col[op]
        tc.learn_column(m, col, 1)
        if code in _TRACKED:
            key = (ev.warp, lane)
            n = self.count.get(key, 0)
            self.op_index[op] = (n, self.fenced_upto.get(key, 0))
            self.issued.setdefault(key, []).append(col)
            if not n:
                self.counted.setdefault(ev.warp, []).append(lane)
            self.count[key] = n + 1
            self.last[key] = row

    def fence_before(self, ev, w: WarpState, mask) -> None:
        w.tc_fenced.absorb(mask, _tc(w))
        for lane in self.counted.get(ev.warp, ()):
            if mask is None or mask[lane]:
                key = (ev.warp, lane)
                self.fenced_upto[key] = self.count[key]

    def dealloc(self, actor: int, w: WarpState, mask) -> None:
        self.fork[actor] = (_tc(w).meet_frozen(mask), w.tc_pending.meet_frozen(mask))

    def commit_payload(self, op: int):
        """(columns a landed commit completes, the tcgen05 knowledge it publishes or None) — None if unknown."""
        cover = self.commit_cover.get(op)
        if cover is None:
            return None
        cols, last = cover
        if last is None:              # an empty commit republishes nothing
            return cols, None
        row = last.copy()
        row[cols] = DONE
        return cols, row

    def ordered(self, tp, tcur, pop, cop, known, issuer_ids) -> np.ndarray:
        """Pairs ordered by tcgen05 ordering beyond knowledge >= stamp: pipelined issue order, same-thread fences
        (`pop`, `cop`: the earlier and later accesses' operations, -1 for a lane access; `issuer_ids(ops)`: their
        issuing lanes, `flow.Flow.issuer_ids`)."""
        out = (tp > 0) & PIPELINED[tp, tcur] & (known >= 1)
        idx = self._numbers(pop, 0)
        fenced = self._numbers(cop, 1)
        maybe = np.flatnonzero((idx >= 0) & (idx < fenced))
        if maybe.size:
            out[maybe] |= issuer_ids(pop[maybe]) == issuer_ids(cop[maybe])
        return out

    def _numbers(self, ops: np.ndarray, which: int) -> np.ndarray:
        """op_index[op][which] per operation, -1 where it has none."""
        out = np.full(ops.size, -1, dtype=np.int64)
        if ops.size and self.op_index:
            uniq, inv = np.unique(ops, return_inverse=True)
            got = self.op_index.get
            out = np.array([got(o, (-1, -1))[which] for o in uniq.tolist()], dtype=np.int64)[inv]
        return out

    def resize(self, keep: np.ndarray, width: int, new_col: np.ndarray, memo: dict | None = None) -> None:
        """Columns `keep` stay (old column c is now new_col[c], -1 if dropped); every row and column list follows
        (fork rows are shared with the warps' (clocks.Knowledge.frozen): resized once each through `memo`)."""
        memo = {} if memo is None else memo
        self.fork = {op: (resize_shared(memo, a, keep, width), resize_shared(memo, b, keep, width))
                     for op, (a, b) in self.fork.items()}
        self.last = {k: resize_shared(memo, r, keep, width) for k, r in self.last.items()}
        self.commit_cover = {op: (_kept(cols, new_col), None if last is None else resize(last, keep, width))
                             for op, (cols, last) in self.commit_cover.items()}
        self.issued = {k: _kept(np.array(cols, dtype=np.int64), new_col).tolist() for k, cols in self.issued.items()}

    def settle(self, ops) -> None:
        """Retired operations (`flow.Flow.settle`): no access of theirs is judged again, so their forks go."""
        for op in ops:
            self.fork.pop(op, None)

    def forget(self, ops) -> None:
        for op in ops:
            self.fork.pop(op, None)
            self.commit_cover.pop(op, None)
            self.op_index.pop(op, None)

    def hint(self, tp: int, tcur: int, prior_col: int, cur_actor: int) -> str | None:
        """Did the completion reach the current operation's thread but miss its after_thread_sync fence?
        (`prior_col`: the earlier operation's column in the current one's domain, -1 if it has none there)"""
        if not (tp and tcur) or cur_actor not in self.fork:
            return None
        need = 1 if PIPELINED[tp, tcur] else DONE
        known = self.fork[cur_actor][1][prior_col] if prior_col >= 0 else 0
        return HINT_AFTER_FENCE if known >= need else HINT_PUBLISH


def _kept(cols: np.ndarray, new_col: np.ndarray) -> np.ndarray:
    """The columns still there, renumbered."""
    c = new_col[cols] if cols.size else cols
    return c[c >= 0]

