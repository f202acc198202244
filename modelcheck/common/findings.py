"""Findings: frozen records, one registry of kinds, stable ids (docs/architecture.md#reports).

A finding's id is `<checker>:<kind>:<16 hex of sha256>` over its details with every
source-location field removed, so ids survive reruns and file moves.  Details carry
the operations involved as dicts made by `operation(...)`: warp, lanes, static op id,
loop iterations, source span and text, op name.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from .verdict import STATUSES, Verdict

STATUS_ORDER = {s: k for k, s in enumerate(STATUSES)}    # most severe first
ERROR, INCOMPLETE, REVIEW = Verdict.ERROR, Verdict.INCOMPLETE, Verdict.REVIEW


@dataclass(frozen=True)
class Kind:
    name: str
    status: Verdict
    hint: str = ""


_KINDS = [
    # synccheck: strict protocol and causality (phase A)
    Kind("mbarrier_use_before_init", ERROR, "initialize the mbarrier (mbarrier.init) before any other use"),
    Kind("mbarrier_init_not_happens_before_use", ERROR,
         "publish the init before other warps use the barrier: fence.mbarrier_init.release.cluster, then a CTA "
         "barrier (T.cuda.cta_sync()) between the init and the first use"),
    Kind("cluster_barrier_init_not_visible", ERROR,
         "make the init visible to the cluster before a peer CTA uses the barrier: "
         "fence.mbarrier_init.release.cluster after the init, then a cluster barrier (barrier.cluster.arrive "
         "[.relaxed] + barrier.cluster.wait, or T.cuda.cluster_sync()) that the peer passes before its first use"),
    Kind("cluster_exit_while_peer_access", ERROR,
         "end the kernel with a cluster barrier (T.cuda.cluster_sync(), or barrier.cluster.arrive + wait) after "
         "the last access to a peer CTA's shared memory or barriers, so no CTA exits while a peer still uses its "
         "shared memory"),
    Kind("mbarrier_reinit_without_inval", ERROR, "invalidate the barrier (mbarrier.inval) before initializing it "
                                                  "again, or initialize it once"),
    Kind("mbarrier_invalid_expected_arrivals", ERROR, "use an expected arrival count in [1, 2^20 - 1]"),
    Kind("mbarrier_invalid_phase", ERROR, "wait with parity 0 or 1"),
    Kind("mbarrier_arrival_overflow", ERROR,
         "the barrier received more arrivals than its expected count: check the init count against the number "
         "of arriving threads (an arrive by a whole warp is 32 arrivals; elect one lane or raise the count)"),
    Kind("mbarrier_arrive_before_consumption", ERROR,
         "add back-pressure: wait for the consumer's release before re-arming this barrier"),
    Kind("mbarrier_prior_generation_not_consumed", ERROR,
         "add back-pressure: wait for the consumer's release before re-arming this barrier"),
    Kind("mbarrier_prior_generation_consumption_not_happens_before", ERROR,
         "add back-pressure: wait for the consumer's release before re-arming this barrier"),
    Kind("mbarrier_transaction_over_delivery", ERROR,
         "make the expect_tx byte count match the bytes the async copies complete on this barrier"),
    Kind("named_barrier_contract_mismatch", ERROR,
         "every participant of one named-barrier generation must give the same thread count; use distinct "
         "barrier ids for groups of different sizes"),
    Kind("named_barrier_arrival_overflow", ERROR,
         "more threads reached the named barrier than its count: check the count and which warps participate"),
    Kind("aligned_sync_contract_mismatch", ERROR,
         "do not mix aligned (bar.sync) and unaligned (barrier.sync) waits on one named-barrier generation"),
    Kind("warp_collective_divergence", ERROR,
         "execute .sync collectives (shfl, vote, elect, bar.warp.sync, aligned tcgen05 ops) with every lane of "
         "the member mask active; move them out of lane-divergent branches"),
    Kind("tcgen_partial_warp_participation", ERROR, "execute tcgen05 alloc/dealloc/relinquish with the whole warp"),
    Kind("tcgen_invalid_columns", ERROR, "allocate a power of two of at least 32 TMEM columns"),
    Kind("tcgen_deallocation_mismatch", ERROR, "deallocate exactly a live allocation (same address and columns)"),
    Kind("setmaxnreg_invalid_count", ERROR, "use a register count that is a multiple of 8 in [24, 256]"),
    Kind("setmaxnreg_invalid_direction", ERROR,
         "use .inc to raise the warpgroup's register limit and .dec to lower it"),
    Kind("setmaxnreg_incomplete_warpgroup", ERROR,
         "execute setmaxnreg in all four warps of the warpgroup (it is warpgroup-collective): move it out of the "
         "branch that only some of the warps take"),
    Kind("setmaxnreg_divergence", ERROR, "give every warp of the warpgroup the same register count"),
    Kind("register_oversubscription", ERROR,
         "lower the counts so the warpgroups' limits fit the 64K-register pool (the sum of count x 128 over the "
         "warpgroups), e.g. dec the producer warpgroup further"),
    Kind("tcgen_live_allocations_at_exit", ERROR,
         "deallocate every TMEM allocation before the kernel exits (after a CTA rendezvous)"),
    Kind("tcgen_alloc_after_relinquish", ERROR,
         "allocate TMEM before the CTA executes tcgen05.relinquish_alloc_permit"),
    Kind("tcgen_allocation_size_increase", ERROR,
         "do not allocate more columns than the CTA's previous tcgen05.alloc; allocate the largest first"),
    Kind("tcgen_collective_argument_mismatch", ERROR,
         "give a warp-collective tcgen05 op the same operand (address, column count) on every thread of the warp"),
    Kind("tcgen_cta_pair_misuse", ERROR,
         "issue cta_group::2 MMAs from the even CTA of the pair (%cluster_ctarank bit 0 = 0) in a cluster of an "
         "even number of CTAs, and give both CTAs' pair-collective alloc/dealloc the same column count"),
    Kind("tmem_access_out_of_bounds", ERROR, "keep TMEM addresses inside lanes 0-127 and columns 0-511"),
    Kind("tmem_access_invalid_target", ERROR,
         "address only the TMEM lanes the op may reach: a warp reaches the 32 lanes of its warpgroup quarter "
         "(warp % 4), an MMA's D lane is 0 (M = 128) or 0/16 (M = 64), a shift's lane is a multiple of 32"),
    Kind("invalid_descriptor", ERROR,
         "fix the named field of the tensor map, shared-memory or instruction descriptor so it is valid and "
         "matches the op"),
    Kind("tensormap_proxy_fence_missing", ERROR,
         "after tensormap.replace, execute fence.proxy.tensormap::generic.release in the writing thread and "
         "fence.proxy.tensormap::generic.acquire [map], 128 in the thread that issues the TMA"),
    Kind("invalid_address", ERROR, "take addresses only of shared or global buffers, not of local buffers"),
    Kind("tmem_access_outside_live_allocation", ERROR,
         "access TMEM only inside a live allocation; order the last access before the dealloc with a barrier"),
    Kind("deadlock", ERROR, "check the wait's parity and the producers that should complete the phase"),
    Kind("fixed_sync_protocol_error", ERROR,
         "some schedule of the same program violates the protocol: order the conflicting operations with a "
         "barrier or use separate barriers"),
    Kind("fixed_sync_nonconfluent", ERROR,
         "different schedules end in different protocol states: add the synchronization that fixes the order"),
    Kind("oob", ERROR, "keep indices inside the buffer; guard the access with a bounds check"),
    Kind("misaligned_address", ERROR, "align the address to the access size"),
    Kind("division_by_zero", ERROR, "guard the divisor"),
    Kind("assertion_failed", ERROR, "the kernel's own assertion failed"),
    Kind("async_register_access_before_wait", ERROR,
         "wait for the asynchronous op (tcgen05.wait::ld after tcgen05.ld, wgmma.wait_group after wgmma) before "
         "overwriting its destination registers (or, for wgmma, reading them)"),
    Kind("unsupported_operation", INCOMPLETE, ""),
    Kind("invalid_buffer_shape", ERROR, "give every buffer dimension a size of zero or more"),
    Kind("launch_exceeds_hardware_limits", ERROR,
         "keep the launch within the target's limits: at most 1024 threads per block, block dimensions up to "
         "(1024, 1024, 64), grid dimensions up to (2^31-1, 65535, 65535), and the target's shared memory per "
         "block (227 KB on sm_90/sm_100)"),
    Kind("unsupported_operation_not_reached", REVIEW,
         "the verdict covers only the paths these inputs took; add inputs that reach the operation, or wait for "
         "its model (the analysis would be incomplete there)"),
    # racecheck
    Kind("data_race", ERROR, "order the two accesses with synchronization (see the ordering failure)"),
    Kind("tmem_lifetime_review", REVIEW,
         "inspect the register dependency; otherwise add tcgen05.wait::ld before reusing the TMEM columns"),
    Kind("scope_mismatch", ERROR, "use release/acquire scopes that cover both actors (e.g. .gpu across CTAs)"),
    # both
    Kind("uninitialized_read", REVIEW, "write the bytes before reading them, or ignore padding reads that cannot "
                                         "reach an output"),
    Kind("analysis_incomplete", INCOMPLETE, ""),
    Kind("effect_commit_unobserved", INCOMPLETE,
         "wait for the thread's async groups before it exits (cp.async.bulk.wait_group.read 0 after the last bulk "
         "store, cp.async.wait_group 0 / cp.async.wait_all after the last cp.async)"),
]

KINDS: dict[str, Kind] = {k.name: k for k in _KINDS}


def kind(name: str) -> Kind:
    k = KINDS.get(name)
    if k is None:
        # engine kinds not in the registry are errors; their name still reaches the user
        k = KINDS[name] = Kind(name, Verdict.ERROR, "")
    return k


@dataclass(frozen=True)
class Finding:
    id: str
    status: Verdict               # error, incomplete or review
    kind: str
    message: str
    details: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        return {"id": self.id, "status": self.status, "kind": self.kind, "message": self.message,
                "details": json_safe(self.details)}


_LOCATION_KEYS = {"span", "file", "line", "col", "end_line", "end_col", "source_text", "source_span", "path",
                  "source_excerpt", "seq"}


def _strip_locations(value):
    if isinstance(value, dict):
        return {k: _strip_locations(v) for k, v in sorted(value.items()) if k not in _LOCATION_KEYS}
    if isinstance(value, (list, tuple)):
        return [_strip_locations(v) for v in value]
    return value


def finding_id(checker: str, kind_name: str, details: dict) -> str:
    payload = json.dumps(_strip_locations(json_safe(details)), sort_keys=True, separators=(",", ":"))
    return f"{checker}:{kind_name}:{hashlib.sha256(payload.encode()).hexdigest()[:16]}"


def make(checker: str, kind_name: str, message: str, details: dict | None = None, status: str | None = None) -> Finding:
    details = dict(details or {})
    k = kind(kind_name)
    if k.hint and "hint" not in details:
        details["hint"] = k.hint
    return Finding(finding_id(checker, kind_name, details), Verdict(status or k.status), kind_name, message, details)


class NoSuchFinding(ValueError):
    """`select` found no single finding: `reason` is "range" (a number outside 1..count), "none" or
    "several" (an id or prefix matching no or more than one finding); callers word the message."""

    def __init__(self, which, count: int, reason: str):
        super().__init__(f"{which!r}: {reason}")
        self.which, self.count, self.reason = which, count, reason


def select(findings: list, which) -> Finding:
    """The finding `which` names: a 1-based number in `findings`, or an id or a unique id prefix."""
    if isinstance(which, int) or (isinstance(which, str) and which.isdigit()):
        n = int(which)
        if not 1 <= n <= len(findings):
            raise NoSuchFinding(n, len(findings), "range")
        return findings[n - 1]
    hits = [f for f in findings if f.id == which] or [f for f in findings if f.id.startswith(str(which))]
    if len({f.id for f in hits}) != 1:
        raise NoSuchFinding(which, len(findings), "several" if hits else "none")
    return hits[0]


def sort_findings(findings) -> list[Finding]:
    unique: dict[str, Finding] = {}
    for f in findings:
        unique.setdefault(f.id, f)
    return sorted(unique.values(), key=lambda f: (STATUS_ORDER[f.status], f.kind, f.id))


def json_safe(value):
    """Tuples -> lists, sets -> sorted lists, numpy scalars/arrays -> Python, spans -> dicts."""
    import numpy as np
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(json_safe(v) for v in value)
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "file") and hasattr(value, "line") and hasattr(value, "end_col"):
        return {"file": value.file, "line": value.line, "col": value.col, "end_line": value.end_line,
                "end_col": value.end_col}
    if isinstance(value, float) and (value != value):
        return "nan"
    return value


def operation(sites, warp: int, site: int | None, iters=(), lanes=None, cta: int | None = None, extra=None) -> dict:
    """An operation as finding details show it (span and source text come from the static site)."""
    op = {"warp": warp, "site": site, "iters": list(iters)}
    if cta is not None:
        op["cta"] = cta
    if lanes is not None:
        op["lanes"] = lanes
    if site is not None and site < len(sites):
        s = sites[site]
        op["op"] = s.op
        op["source_text"] = s.text
        if s.span is not None:
            op["span"] = s.span
    if extra:
        op.update(extra)
    return op


def event_operation(sites, ev, extra=None) -> dict:
    lanes = None if ev.lanes is None else [int(i) for i in ev.lanes.nonzero()[0]]
    return operation(sites, ev.warp, ev.site, ev.iters, lanes, ev.cta, extra)
