"""What both checkers do with a NumSim run: resolve inputs, digest them, and turn
NumSim diagnostics (engine errors, incompletes, advisories) into findings."""
from __future__ import annotations

import hashlib

import numpy as np

import ir

from .. import numsim
from ..numsim.inputs import normalize
from . import findings as F
from .verdict import Verdict


def resolve_inputs(func: ir.PrimFunc, inputs, max_memory_mb: float = numsim.budget.DEFAULT_MAX_MEMORY_MB):
    """`None` means the embedded default (zero-filled static-shape buffers); returns (inputs, missing names).
    Raises `numsim.ResourceLimit` when the default buffers would not fit the memory budget."""
    if inputs is None:
        inputs = numsim.default_inputs(func, max_memory_mb=max_memory_mb)
    inputs = normalize(func, inputs)
    missing = [p.name for p in func.params if p.name not in inputs]
    return inputs, missing


def limit_finding(checker: str, err) -> "F.Finding":
    """A budget that ran out before or after the run (inputs, analysis): incomplete, naming it."""
    return F.make(checker, "analysis_incomplete", err.message,
                  {"reason": "resource_limit", "limit": err.limit, **err.details}, status="incomplete")


def digest_inputs(inputs: dict) -> str:
    """sha256 over every input's name, dtype, shape and bytes (scalars: their repr)."""
    h = hashlib.sha256()
    for name in sorted(inputs):
        v = inputs[name]
        h.update(name.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).reshape(-1).view(np.uint8).data)   # its bytes, no copy
        else:
            h.update(repr(v).encode())
    return h.hexdigest()


class InputDigest:
    """`digest_inputs` of a check's inputs, taken when first read.

    The digest is how a serialised report names the inputs it ran on (two reports on the same inputs carry the
    same one). Hashing costs 1-4 s of CPU on a GEMM's inputs and only a serialised report reads it, so it is not
    taken at the end of every check. The value is the same: the engine copies every buffer it writes, so the
    arrays hashed are the ones the check read, unless the caller changes them before the digest is read."""

    __slots__ = ("_inputs", "_hex")

    def __init__(self, inputs: dict):
        self._inputs: dict | None = inputs
        self._hex = ""

    def __str__(self) -> str:
        if self._inputs is not None:
            self._hex, self._inputs = digest_inputs(self._inputs), None
        return self._hex


def scalars_of(func: ir.PrimFunc, inputs: dict) -> dict:
    return {p.name: inputs[p.name].item() if isinstance(inputs.get(p.name), np.generic) else inputs.get(p.name)
            for p in func.params if p.kind == "scalar" and p.name in inputs}


def _site_of(sites, span):
    for s in sites:
        if s.span == span:
            return s.id
    return None


def engine_findings(checker: str, res, events=()) -> list:
    """NumSim diagnostics as findings (deadlocks keep their blocked-warp groups)."""
    out = []
    sites = res.sites
    for d in res.diagnostics:
        details = dict(d.details)
        if d.kind == "uninitialized_read":
            site = details.get("site")
            details = {"operation": F.operation(sites, details["warps"][0] if details.get("warps") else -1, site),
                       "allocation": details.get("allocation"), "count": details.get("count"),
                       "warps": details.get("warps")}
            out.append(F.make(checker, "uninitialized_read", d.message, details))
            continue
        if d.kind == "async_register_access_before_wait":
            warp, iters = details["warp"], details["iters"]
            details = {"operation": F.operation(sites, warp, details["site"], iters, cta=details["cta"]),
                       "related_operations": [F.operation(sites, warp, details["issue_site"],
                                                          details["issue_iters"], cta=details["cta"])],
                       "access": details["access"], "registers": details["registers"], "count": details["count"],
                       "warps": details["warps"]}
            out.append(F.make(checker, d.kind, d.message, details))
            continue
        if d.status == Verdict.INCOMPLETE:
            out.append(F.make(checker, "analysis_incomplete", d.message, details, status="incomplete"))
            continue
        if d.kind == "deadlock":
            blocked = []
            for b in details.get("blocked", []):
                item = {"warp": b["warp"], "awaits": b["awaits"],
                        "operation": F.operation(sites, b["warp"], b.get("site"), b.get("iters", ()))}
                if b.get("state"):
                    item["state"] = b["state"]
                blocked.append(item)
            out.append(F.make(checker, "deadlock", d.message, {"verification": "execution", "blocked": blocked}))
            continue
        site = _site_of(sites, d.span) if d.span is not None else None
        op = F.operation(sites, details.pop("warp", -1), site, details.pop("iters", ()), cta=details.pop("cta", None))
        if site is None and d.span is not None:
            op["span"] = d.span
        details["operation"] = op
        out.append(F.make(checker, d.kind, d.message, details))
    return out


__all__ = ["resolve_inputs", "digest_inputs", "InputDigest", "engine_findings", "scalars_of", "numsim"]
