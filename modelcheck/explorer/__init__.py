"""The fixed-sync-state explorer (Synccheck phase B).

Entry point: `verify(programs, ...)`.  The whole program is split into one
projection per resource (an mbarrier or a named barrier); happens-before gating
from phase A's clocks keeps the order other resources impose.  Each projection is
settled by a causal certificate when one applies, else by explicit-state search
with sleep sets.  `verify_whole(programs)` searches the unprojected product of all
warps' programs (no certificates, optionally no sleep sets): the brute-force oracle
the reduced search is tested against.  Stops at the first failing projection.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..numsim.budget import now
from . import certificates, choices
from .program import Command, Programs, build, gating, is_command, is_read
from .search import Model, SearchResult, search

__all__ = ["verify", "verify_whole", "Verification", "build", "is_command", "is_read", "Programs", "Command", "choices"]


@dataclass
class Verification:
    status: str                   # complete | deadlock | protocol_error | nonconfluent | limit | skipped
    states: int = 0
    transitions: int = 0
    projections: int = 0
    certified: int = 0
    searched: int = 0
    resource: tuple | None = None
    resource_name: str = ""
    failure: SearchResult | None = None
    limit: str = ""
    wall_time_s: float = 0.0
    per_resource: list = field(default_factory=list)
    deviation: dict | None = None  # when a projection left the run's generation assignment (then: whole search)


def project(programs: Programs, resource, index: dict | None = None) -> dict[int, list[Command]]:
    """The commands of `resource`, per warp, renumbered (`index`: `programs.by_resource()`, made once)."""
    per_warp = (index if index is not None else programs.by_resource()).get(resource, {})
    return {w: [replace(c, index=k) for k, c in enumerate(cmds)] for w, cmds in per_warp.items()}


def verify(programs: Programs, *, certificates_on: bool = True, sleep_sets: bool = True,
           max_states: int = 200_000, max_transitions: int = 2_000_000, max_seconds: float = 60.0) -> Verification:
    t0, b0 = time.perf_counter(), now()
    result = Verification("complete")
    index = programs.by_resource()
    for resource in programs.resources():
        proj = project(programs, resource, index)
        commands = [c for cs in proj.values() for c in cs]
        result.projections += 1
        name = programs.resource_names.get(resource, str(resource))
        if certificates_on:
            ok = certificates.mbarrier(commands) if resource[0] == "mbarrier" else certificates.named(commands)
            if ok:
                result.certified += 1
                result.states += 1
                result.transitions += len(commands)
                result.per_resource.append({"resource": name, "method": "certificate", "states": 1,
                                            "transitions": len(commands)})
                continue
        model = Model(proj, gating(proj), programs.resource_names)
        model.check_generations = True
        res = search(model, max_states=max_states, max_transitions=max_transitions,
                     max_seconds=max(max_seconds - (now() - b0), 0.1), sleep_sets=sleep_sets)
        result.searched += 1
        result.states += res.states
        result.transitions += res.transitions
        result.per_resource.append({"resource": name, "method": "search", "states": res.states,
                                    "transitions": res.transitions, "status": res.status})
        if model.deviation is not None and res.status != "limit":
            # some schedule gives a command of this resource another generation than the run did: the
            # gating of every projection (the run's happens-before) may not hold in it, so no projection's
            # verdict can be trusted -- search the whole program instead
            whole = verify_whole(programs, sleep_sets=sleep_sets, max_states=max(max_states - result.states, 1),
                                 max_transitions=max(max_transitions - result.transitions, 1),
                                 max_seconds=max(max_seconds - (now() - b0), 0.1), components=True)
            whole.per_resource = result.per_resource + [{"resource": "whole program", "method": "search",
                                                         "states": whole.states, "transitions": whole.transitions,
                                                         "status": whole.status, "deviation": model.deviation}]
            whole.projections, whole.certified, whole.searched = result.projections, result.certified, result.searched
            whole.states += result.states
            whole.transitions += result.transitions
            whole.deviation = model.deviation
            whole.wall_time_s = time.perf_counter() - t0
            return whole
        if res.status != "complete":
            result.status = res.status
            result.resource = resource
            result.resource_name = name
            result.failure = res
            result.limit = res.limit
            break
    result.wall_time_s = time.perf_counter() - t0
    return result


def verify_whole(programs: Programs, *, sleep_sets: bool = False, max_states: int = 200_000,
                 max_transitions: int = 2_000_000, max_seconds: float = 60.0, components: bool = False) -> Verification:
    """The unprojected search.  `components`: search each set of warps that share a resource on its own (the
    product of independent components fails iff one of them does: a component's reachable stuck state, protocol
    error or second final state combines with any terminal state of the others), so a state is as large as one
    component, not the grid; off, the one search of the product (the brute-force oracle)."""
    t0, b0 = time.perf_counter(), now()
    parts = _components(programs) if components else [sorted(programs.warps)]
    out = Verification("complete", projections=1, searched=1)
    for warps in parts:
        model = Model({w: list(programs.warps[w]) for w in warps}, None, programs.resource_names)
        res = search(model, max_states=max(max_states - out.states, 1),
                     max_transitions=max(max_transitions - out.transitions, 1),
                     max_seconds=max(max_seconds - (now() - b0), 0.1), sleep_sets=sleep_sets)
        out.states += res.states
        out.transitions += res.transitions
        if res.status != "complete":
            out.status, out.failure, out.limit = res.status, res, res.limit
            last = next((step for step in reversed(res.witness) if step.get("barrier")), None)
            out.resource_name = last["barrier"] if last else "whole program"
            break
    out.wall_time_s = time.perf_counter() - t0
    return out


def _components(programs: Programs) -> list[list[int]]:
    """The warps in sets that share no resource with each other, each sorted, in order of their first warp."""
    parent = {w: w for w in programs.warps}

    def root(w):
        while parent[w] != w:
            parent[w] = parent[parent[w]]
            w = parent[w]
        return w
    first: dict = {}
    for w, prog in programs.warps.items():
        for c in prog:
            o = first.setdefault(c.resource, w)
            a, b = root(o), root(w)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for w in sorted(programs.warps):
        groups.setdefault(root(w), []).append(w)
    return sorted(groups.values())
