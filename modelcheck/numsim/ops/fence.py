"""Fences: they change no state in NumSim; observers (race and causality checks) read the events."""
from __future__ import annotations

from .tmap import fence_tensormap


def _fence(kind_of):
    def compile_(ctx, call, info):
        kind, details = kind_of(info)
        site = ctx.site(call, kind)

        def run(w):
            w.eng.sync(w, kind, site, details=details)
        return run, False
    return compile_


HANDLERS = {
    "fence.proxy.async": _fence(lambda info: ("fence.proxy.async",
                                              {"space": info.quals.get("space", "all")})),
    "fence.acq_rel": _fence(lambda info: ("fence.acq_rel", {"scope": info.quals.get("scope", "gpu")})),
    "fence.sc": _fence(lambda info: ("fence.sc", {"scope": info.quals.get("scope", "gpu")})),
    # the tensormap proxy's fences on maps held in memory (ops/tmap.py)
    "fence.proxy.tensormap": fence_tensormap,
    "cuda.thread_fence": _fence(lambda info: ("fence.sc", {"scope": "gpu"})),
}
