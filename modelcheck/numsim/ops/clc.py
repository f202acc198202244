"""Cluster launch control (PTX ISA 9.7.15.18-19): `clusterlaunchcontrol.try_cancel` and `query_cancel`.

The launch: a kernel that executes `try_cancel` (found in its sites before the run) gets a `ClcScheduler`: its
clusters launch in cluster-id order, at most `resident` at a time (default 1); the others are pending, and a
pending cluster launches when a running one has finished (every warp of its CTAs exited).  A cluster cancelled
by `try_cancel` never runs: its warps finish without executing anything (the canceller does its tile).  As on
hardware, only running clusters hold shared memory: a cluster's CTAs get theirs when it launches and give it back
when its last warp exits (numsim.residency.release_shared); a pending or cancelled cluster's CTAs hold none
(`NotLaunched`), and the engine charges the memory budget for the running ones only.

`try_cancel.async[.shared::cta].mbarrier::complete_tx::bytes[.multicast::cluster::all].b128 [addr], [mbar]` is an
async operation: when it lands it decides its answer (policy "steal", the default: cancel the first pending
cluster if there is one; policy "fail": never cancel), writes the 16-byte response at `addr` (of every CTA of the
cluster with `.multicast::cluster::all`, at the same offset; the write is the operation's own async-proxy access,
so reading it before the mbarrier wait is a race) and completes 16 tx bytes on `mbar` (of each CTA written).
The response (model choice: PTX calls it opaque): bytes 0-3 are 1 if a cluster was cancelled, bytes 4-15 the x, y
and z ctaid of its first CTA.  `query_cancel.is_canceled.pred.b128` and `get_first_ctaid::x|y|z.b32.b128` decode a
b128 register holding it.  With both policies, the default run takes the "tiles remain" path while clusters are
pending and the "none remain" exit path at the end.

A request that lands while a cluster is pending could get either answer on hardware (a pending cluster may have
launched elsewhere meanwhile): it is a choice point.  `answers` forces the first choice points' answers (True:
cancel, False: none remain); the later ones follow the policy.  `choices` records every choice point's answer in
landing order, so a checker can run the kernel again with another answer (NumSim only exposes the choice; the
explorer decides which answers to try: modelcheck/explorer/choices.py).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import EngineError, UnsupportedTIRxError
from ..memory import CLUSTER_WINDOW
from ..residency import ReleasedShared
from ..runtime import Wait
from ..sync import SyncError
from .async_copy import issue_on_barrier
from .cluster import cluster_of
from .tma import async_records

RESPONSE_BYTES = 16


class ClcScheduler:
    """Which clusters of the grid run, are pending or were cancelled (numsim/ops/clc.py)."""

    def __init__(self, clusters: list[list], resident: int = 1, policy: str = "steal", answers: tuple = (),
                 launch: Callable[[int], None] | None = None, release: Callable[[int], None] | None = None):
        """`launch(cid)`: give the cluster's CTAs their shared memory as it starts running; `release(cid)`: take
        it back when its last warp exits (only running clusters hold shared memory, as on hardware)."""
        self.clusters = clusters            # cluster id -> its CTAs (ranks in order)
        self.launch = launch
        self.release = release
        self.state = ["pending"] * len(clusters)
        self.policy = policy
        self.answers = tuple(bool(a) for a in answers)
        self.choices: list[bool] = []       # each choice point's answer, in landing order
        # every request's (issuing cluster, cancelled cluster or None, was it a choice point), in landing order:
        # what a checker needs to see which tiles each cluster did (modelcheck/synccheck/segments.py)
        self.requests: list[tuple[int, int | None, bool]] = []
        # past the forced answers: (the answers so far, the policy's answer) -> the answer taken (a checker may
        # snapshot the run here and resume the snapshot with the other answer: modelcheck/synccheck/snapshots.py)
        # it may answer (answer, True): the clusters still pending when the running one exits never run (a
        # checker that has checked them elsewhere ends the run there: synccheck/segments.py)
        self.on_choice: Callable[[tuple, bool], bool | tuple[bool, bool]] | None = None
        self.skip_rest = False
        self.cancels = 0
        self.version = 0
        self.exits = [0] * len(clusters)
        for cid in range(min(max(resident, 1), len(clusters))):
            self._run(cid)

    def _run(self, cid: int) -> None:
        self.state[cid] = "running"
        if self.launch is not None:
            self.launch(cid)

    def pending(self) -> int | None:
        return next((c for c, s in enumerate(self.state) if s == "pending"), None)

    def cancel(self, issuer: int = -1) -> int | None:
        """The cluster the next try_cancel (of cluster `issuer`) cancels, or None: with a pending cluster the
        forced answer of this choice point, else the policy's."""
        cid = self.pending()
        if cid is None:
            self.requests.append((issuer, None, False))
            return None
        k = len(self.choices)
        take = self.answers[k] if k < len(self.answers) else self.policy == "steal"
        if k >= len(self.answers) and self.on_choice is not None:
            got = self.on_choice(tuple(self.choices), take)
            if isinstance(got, tuple):
                got, skip = got
                self.skip_rest = self.skip_rest or bool(skip)
            take = bool(got)
        self.choices.append(take)
        self.requests.append((issuer, cid if take else None, True))
        if not take:
            return None
        self.state[cid] = "cancelled"
        self.cancels += 1
        self.version += 1
        return cid

    def finished(self, cid: int) -> None:
        self.state[cid] = "done"
        if self.release is not None:
            self.release(cid)
        nxt = self.pending()
        if nxt is not None and self.skip_rest and not any(s == "running" for s in self.state):
            # the checker's end of the run: the pending clusters finish without running, as cancelled ones do
            for c, s in enumerate(self.state):
                if s == "pending":
                    self.state[c] = "skipped"
        elif nxt is not None:
            self._run(nxt)
        self.version += 1


class NotLaunched(ReleasedShared):
    """The shared memory of a CTA whose cluster has not launched (pending) or never will (cancelled): it holds
    none; reaching its bytes is an unmodeled operation, not a read of memory that does not exist."""

    def __getattr__(self, name):
        raise UnsupportedTIRxError("shared memory of a CTA not launched", None,
                                   f"an operation reaches CTA {self.__dict__['cta']}'s shared memory while its "
                                   f"cluster is pending or cancelled (cluster launch control): it holds none")


def launch_gate(eng, program, clc: ClcScheduler):
    """The per-warp program behind the scheduler's launch decisions."""
    def gated(w):
        cid = w.rt.cluster_id
        while clc.state[cid] == "pending":
            yield Wait(clc, lambda: clc.state[cid] != "pending",
                       f"await the launch of cluster {cid} (pending: running clusters hold the GPU)")
        if clc.state[cid] in ("cancelled", "skipped"):
            return
        yield from program(w)
        clc.exits[cid] += 1
        if clc.exits[cid] == sum(len(rt.warps) for rt in clc.clusters[cid]):
            clc.finished(cid)
            eng.touch(clc)
    return gated


def _try_cancel(ctx, call, info):
    addr_fn, bar_fn = ctx.expr(call.operands[0]), ctx.expr(call.operands[1])
    multicast = "multicast::cluster::all" in info.quals
    site = ctx.site(call, "clusterlaunchcontrol.try_cancel")
    span = call.span
    what = "clusterlaunchcontrol.try_cancel" + (".multicast::cluster::all" if multicast else "")

    def run(w):
        clc = w.eng.clc
        assert clc is not None, "a kernel with try_cancel runs under a ClcScheduler"
        a_all, b_all = addr_fn(w), bar_fn(w)
        eng = w.eng
        w.effects += 1
        for lane in [int(k) for k in np.flatnonzero(w.active())]:
            addr = int(a_all[lane]) if type(a_all) is np.ndarray else int(a_all)
            baddr = int(b_all[lane]) if type(b_all) is np.ndarray else int(b_all)
            for a, name in ((addr, "response"), (baddr, "mbarrier")):
                if a >= CLUSTER_WINDOW or cluster_of(w, a, span, what)[0] is not w.rt:
                    raise EngineError("invalid_address", f"{what}: the {name} address {a:#x} is not in the executing "
                                                         f"CTA's shared memory (.shared::cta)", span, address=a)
            if addr % RESPONSE_BYTES:
                raise EngineError("misaligned_address", f"{what}: the response address {addr:#x} is not 16-byte "
                                                        f"aligned", span, address=addr)
            targets = w.rt.cluster if multicast and w.rt.cluster else [w.rt]
            decision: dict = {}
            for rt in targets:
                slot = rt.shared.find(addr, RESPONSE_BYTES)
                if slot is None:
                    raise EngineError("oob", f"{what}: the 16-byte response at {addr:#x} is outside every shared "
                                             f"allocation of CTA {rt.index}", span, address=addr)
                op, bar, gen = issue_on_barrier(w, "clc.try_cancel", lane, site, span, what, rt, rt, baddr,
                                                RESPONSE_BYTES)
                eng.enqueue(_land(w, op, clc, decision, rt, slot, addr - slot.base, bar, baddr, gen, span, what))
    return run, False


def _land(w, op, clc, decision, rt, slot, off, bar, baddr, bound_gen, span, what):
    eng, warp = w.eng, w.gid

    def complete():
        if rt.exited:
            raise EngineError("cluster_exit_while_peer_access", f"{what} (issued by warp {warp} of CTA {w.cta}) "
                                                                f"writes its response after CTA {rt.index} exited",
                              span, peer_cta=rt.index, warp=warp)
        if "cid" not in decision:         # one answer per request, multicast to every CTA of the cluster
            decision["cid"] = clc.cancel(w.rt.cluster_id)
            decision["request"] = len(clc.requests) - 1
            eng.touch(clc)
        cid = decision["cid"]
        words = np.zeros(4, dtype="<u4")
        if cid is not None:
            first = clc.clusters[cid][0].block_idx
            words[:] = (1, *first)
        slot.data[off:off + RESPONSE_BYTES] = words.view(np.uint8)
        slot.mark_written(off, RESPONSE_BYTES)
        async_records(eng, op, slot, np.array([off]), RESPONSE_BYTES, "write")
        op.done = True
        gen = bar.local_gen
        try:
            completed = bar.complete_tx(RESPONSE_BYTES)
        except SyncError as err:
            raise EngineError(err.kind, err.message, span, warp=warp, **err.details) from None
        eng.touch(bar)
        eng.async_sync(w.cta, warp, "mbarrier.complete_tx", op.site, op.iters, barrier=("mbarrier", rt.index, baddr),
                       tx=RESPONSE_BYTES, generation=gen, completed=completed,
                       details={"op": op.id, "async": True, "kind": op.kind, "bound_generation": bound_gen,
                                "cancelled_cluster": cid, "clc_request": decision["request"],
                                "clc_choice": clc.requests[decision["request"]][2]})
    return complete


def _words(value) -> np.ndarray:
    """(lanes, 4) uint32 words of a b128 register value."""
    arr = np.asarray(value)
    if arr.dtype.itemsize != RESPONSE_BYTES:
        raise TypeError("not a b128 value")
    return np.ascontiguousarray(arr.reshape(-1)).view("<u4").reshape(-1, 4)


def _query(ctx, call, info):
    dst = ctx.lvalue(call.operands[0], "clusterlaunchcontrol.query_cancel")
    resp = ctx.expr(call.operands[1])
    query = info.quals["query"]
    span = call.span
    if call.operands[1].dtype not in ("uint128", "int128"):
        raise UnsupportedTIRxError("clusterlaunchcontrol.query_cancel", span,
                                   f"the response is a {call.operands[1].dtype}; a b128 (T.uint128) register is")
    col = {"is_canceled": 0, "get_first_ctaid::x": 1, "get_first_ctaid::y": 2, "get_first_ctaid::z": 3}[query]

    def run(w):
        words = _words(resp(w))[:, col]
        out = words != 0 if col == 0 else words.astype(np.uint32)
        if out.size == 1:
            out = bool(out[0]) if col == 0 else int(out[0])
        dst(w, out)
    return run, False


HANDLERS = {
    "clusterlaunchcontrol.try_cancel": _try_cancel,
    "clusterlaunchcontrol.query_cancel": _query,
}
