"""Async operations in Racecheck's flow (`flow.Flow`), from issue to the waits that retire them.

An operation is forked at its issue: what its issuing lane knew then (`fork`: the lane's read-only row, shared
while the warp learns nothing new, and its bridged rows), with its issue (warp, lane, epoch) that lifetime
races name (`issuer_cols`, `issuer_ids`).  Bulk copies and cp.async join their lane's uncommitted group, a
commit closes it, and a wait_group makes the lanes know the older groups' operations done (a bulk store's source
reads already at wait_group.read, its groups still pending); wgmma.wait_group and tcgen05.wait name their
operations.  A retired operation whose last chunk was judged keeps its issue but not its fork's rows (`settle`).
Its column (`flow.Flow.column`) and its completion on an mbarrier (`flow.Flow._completion`) are the flow's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..common.ordering import GROUP_FAMILY
from .clocks import WarpState, fork_known, fork_table
from .memory_edges import one_lane
from .tcgen import TcgenOrder

# what knowing an async column means: a bulk store's source reads are done (wait_group.read), or the whole
# operation is (its accesses are stamped DONE, except a bulk store's source reads, stamped READ_DONE)
READ_DONE, DONE = 1, 2
# async operations whose fork row their completion publishes (`flow.Flow._completion`)
_PUBLISHED_AT_COMPLETION = ("tcgen05.commit", "st.async")


class AsyncOps:
    """The async operations of `flow.Flow` (a mixin: the state is the flow's)."""

    fork: dict
    fork_seq: dict
    issuer: dict
    async_info: dict
    async_col: dict
    op_dom: dict
    op_kind: dict
    col0: np.ndarray
    domain: np.ndarray
    foreign: Any
    tc: TcgenOrder | None
    _zero_bridged: dict

    fork_known = staticmethod(fork_known)

    def fork_table(self, ops: list):
        """The ordinary forks of `ops` for gathering (`clocks.fork_table`)."""
        return fork_table(self.fork, ops, self.col0)

    def fork_row(self, op: int) -> np.ndarray:
        """What async operation `op` knew at its issue: its lane's row, its own column at the issue's epoch."""
        row, _, (warp, lane, epoch) = self.fork[op]
        out = row.copy()
        out[int(self.col0[warp]) + lane] = epoch
        return out

    def issuer_cols(self, ops: np.ndarray, cols: np.ndarray, dom, before=None) -> tuple[np.ndarray, np.ndarray]:
        """The issuing lanes' columns of async operations `ops` (known by columns `cols`), as rows of domain `dom`
        (one, or one per operation) know them, and where they know nothing of it (another domain's lane without a
        foreign column).  An operation not issued (before seqs `before`, if given) is its own issuer: `cols`."""
        issuer = cols.copy()
        lost = np.zeros(cols.size, dtype=np.bool_)
        if not ops.size:
            return issuer, lost
        uniq, inv = np.unique(ops, return_inverse=True)
        info = np.array([self.issuer.get(o, (-1, 0, np.inf)) for o in uniq.tolist()], dtype=np.float64)[inv]
        warp, lane = info[:, 0].astype(np.int64), info[:, 1].astype(np.int64)
        have = warp >= 0
        if before is not None:
            have &= info[:, 2] < before
        h = np.flatnonzero(have)
        issuer[h] = self.col0[warp[h]] + lane[h]
        if self.foreign is not None and h.size:
            d = dom if np.isscalar(dom) else np.asarray(dom)[h]
            x = h[self.domain[warp[h]] != d]
            if x.size:
                f = self.foreign.lane_col(warp[x], lane[x])
                issuer[x] = np.maximum(f, 0)
                lost[x] = f < 0
        return issuer, lost

    def issuer_ids(self, ops: np.ndarray) -> np.ndarray:
        """A launch-wide id of each operation's issuing lane (32·warp + lane; one of its own, negative, if it has
        none): two operations of one thread have equal ids."""
        if not ops.size:
            return ops.astype(np.int64)
        uniq, inv = np.unique(ops, return_inverse=True)
        ids = [32 * i[0] + i[1] if i is not None else -2 - o for o, i in zip(uniq.tolist(),
                                                                             map(self.issuer.get, uniq.tolist()))]
        return np.array(ids, dtype=np.int64)[inv]

    def col_in(self, op: int, dom: int) -> int:
        """The column rows of domain `dom` know async operation `op` by (-1: none; nothing of it reached them)."""
        col = self.async_col.get(op, -1)
        if col < 0 or self.foreign is None or self.op_dom.get(op, dom) == dom:
            return col
        return self.foreign.op_col(op)

    def settle(self, ops) -> None:
        """Retired operations some carried record still names: no access of theirs will be judged again (NumSim
        made the last one, and its chunk is judged), so their forks' rows go and only their issue (warp, lane,
        epoch) stays, which judging them as the earlier access reads.  A commit's and an st.async's fork stay whole:
        their completion, which may land later, publishes it (`flow.Flow._completion`)."""
        fork, kind = self.fork, self.op_kind
        for op in ops:
            f = fork.get(op)
            if f is not None and f[0] is not None and kind.get(op) not in _PUBLISHED_AT_COMPLETION:
                fork[op] = (None, None, f[2])
        if self.tc is not None:
            self.tc.settle(ops)

    def _issue(self, ev, w: WarpState, d: dict) -> None:
        op = d.get("op")
        if op is None:
            return
        lane = int(d.get("lane", 0))
        bridged = {dom: w.bridged_snapshot(lane, dom) for dom in ("shared", "global")} if w.has_bridged \
            else self._zero_bridged
        self.fork[op] = (w.fork_row(lane), bridged, (ev.warp, lane, w.epoch))
        self.fork_seq[op] = ev.seq
        if op in self.async_col:
            self.issuer[op] = (ev.warp, lane, ev.seq)
        self.async_info[op] = {"kind": d.get("kind", ""), "warp": ev.warp, "lane": lane, "site": ev.site,
                               "iters": ev.iters}
        if "lane" not in d:        # a warp-collective op (tcgen05.ld/st): evidence names the witness lane
            del self.async_info[op]["lane"]
        if w.tc is not None and self.tc is not None and d.get("kind", "").startswith("tcgen05"):
            self.tc.issue(ev, w, op, lane)
        w.epoch += 1
        fam = GROUP_FAMILY.get(d.get("kind", ""))
        if fam:
            w.async_uncommitted[fam].setdefault(lane, []).append(op)

    def _wait_group(self, ev, w: WarpState, mask, fam: str) -> None:
        keep = int(ev.count or 0)
        read = bool(ev.details.get("read"))
        for lane in (range(32) if mask is None else np.flatnonzero(mask)):
            lane = int(lane)
            groups = w.async_groups[fam].get(lane, [])
            if fam == "cp.async" and keep == 0 and w.async_uncommitted[fam].get(lane):
                groups = groups + [w.async_uncommitted[fam].pop(lane)]   # wait_all commits first
            cut = max(len(groups) - keep, 0)
            # wait_group.read N: the source reads of all but the newest N groups are done, and nothing more: the
            # groups stay pending, and a later wait_group without .read still retires their writes (PTX ISA
            # 9.7.9.27.2.2: .read "indicates that the waiting has to be done until all the bulk async operations
            # in the specified bulk async-group have completed reading from their source locations")
            read_upto = w.groups_read[fam]
            first = read_upto.get(lane, 0) if read else 0
            for g in groups[first:cut]:
                for op in g:
                    if op in self.async_col:          # (a forgotten operation's column is asked about no more)
                        w.k.learn_column(one_lane(lane), self.async_col[op], READ_DONE if read else DONE)
            if not read:
                w.async_groups[fam][lane] = groups[cut:]
                read_upto[lane] = max(read_upto.get(lane, 0) - cut, 0)
                continue
            # the oldest read groups whose operations were all forgotten cannot be asked about again
            gone = 0
            while gone < cut and not any(op in self.async_col for op in groups[gone]):
                gone += 1
            w.async_groups[fam][lane] = groups[gone:]
            read_upto[lane] = max(cut, read_upto.get(lane, 0)) - gone


    @staticmethod
    def _commit_group(w: WarpState, mask, fam: str) -> None:
        """The lanes' uncommitted operations of `fam` (bulk, cp.async) become their newest group."""
        for lane in (range(32) if mask is None else np.flatnonzero(mask)):
            lane = int(lane)
            w.async_groups[fam].setdefault(lane, []).append(w.async_uncommitted[fam].pop(lane, []))

    def _wait_ops(self, w: WarpState, mask, ops, tcgen: bool) -> None:
        """A wait that names its operations (wgmma.wait_group: the warp's older wgmma groups, for every lane of the
        warpgroup collective; tcgen05.wait::ld/st, whose operations are ordered for tcgen05 work too)."""
        cols = np.array([self.async_col[o] for o in ops if o in self.async_col], dtype=np.int64)
        w.k.learn_columns(mask, cols, DONE)
        if tcgen and w.tc is not None:
            w.tc.learn_columns(mask, cols, DONE)
