"""The kernel at concrete sizes: specialized from its source, with its inputs, and run once for TMA byte counts.

The prover keeps some module constants symbolic; Synccheck, replay and NumSim need them
concrete.  `inputs` (of `prove`) is a dict for one size, or a function from the kernel's
constants at a size to an inputs dict (unlisted buffers are zero-filled), which is what
kernels whose tensor maps depend on the sizes need.
"""
from __future__ import annotations

import ir

from .. import kernel as kernel_mod
from .. import numsim
from ..common.results import resolve_inputs
from .exprs import OutsideFragment
from .skeleton import Command, Guarded, Loop, Skeleton


class FailsSmallest(Exception):
    """The concrete run at the smallest sizes did not complete, so a TMA byte count stayed unobserved."""

    def __init__(self, fragment: OutsideFragment):
        super().__init__(fragment.construct)
        self.fragment = fragment


def specialize(func: ir.PrimFunc, sizes: dict) -> ir.PrimFunc:
    """The kernel with `sizes` substituted; the other constants keep the values `func` was loaded with."""
    if func.source is None:
        raise OutsideFragment("the kernel has no source text to specialize")
    consts = {c.name: c.value for c in func.constants}
    return kernel_mod.parse(func.source, path=func.path or "<kernel>", **(consts | sizes))


def inputs_at(small: ir.PrimFunc, inputs):
    """Inputs for the specialized kernel: a function of its constants is called; a dict is used as given."""
    if not callable(inputs):
        return inputs
    return numsim.default_inputs(small, dict(inputs({c.name: c.value for c in small.constants})))


def specializer(inputs):
    """specialize(func, sizes) -> (kernel at those sizes, its inputs), for Synccheck and replay."""
    def at(func, sizes):
        small = specialize(func, sizes)
        return small, inputs_at(small, inputs)
    return at


def tma_bytes(func: ir.PrimFunc, skel: Skeleton, ranges: dict, inputs) -> dict:
    """Bytes per TMA site, observed on a concrete run at the smallest sizes (tensor maps are runtime data).
    Raises FailsSmallest when the run does not complete and a TMA command's count stays unobserved."""
    if not any(_has_tma(items) for items in skel.warps.values()):
        return {}
    sizes = {n: lo for n, (lo, _) in ranges.items()}
    small = specialize(func, sizes)
    ins, missing = resolve_inputs(small, inputs_at(small, inputs))
    if missing:
        raise OutsideFragment(f"TMA byte counts need inputs for {', '.join(missing)}")
    trace = numsim.Trace()
    res = numsim.run(small, ins, observers=(trace,))
    by_pos: dict = {}
    for ev in trace.sync:
        if ev.kind == "async.issue" and ev.tx:
            span = res.sites[ev.site].span
            by_pos.setdefault((span.line, span.col), set()).add(int(ev.tx))
    out = {}
    for site, (span, _) in enumerate(skel.sites):
        vals = by_pos.get((span.line, span.col)) if span is not None else None
        if vals:
            if len(vals) != 1:
                raise OutsideFragment(f"a TMA copy whose byte count varies ({sorted(vals)})", span)
            out[site] = vals.pop()
    if res.termination != "completed":
        missing_span = _unobserved_tma(skel, out)
        if missing_span is not None:
            raise FailsSmallest(OutsideFragment("a TMA copy whose byte count the concrete run did not observe (the "
                                                "run does not complete)", missing_span))
    return out


def _unobserved_tma(skel: Skeleton, observed: dict):
    """The span of a TMA command of the skeleton whose site has no observed byte count, or None."""
    def walk(items):
        for it in items:
            if isinstance(it, Command) and it.kind == "tma" and it.site not in observed:
                return it.span
            if isinstance(it, (Guarded, Loop)):
                hit = walk(it.body)
                if hit is not None:
                    return hit
        return None
    for items in skel.warps.values():
        hit = walk(items)
        if hit is not None:
            return hit
    return None


def _has_tma(items) -> bool:
    for it in items:
        if isinstance(it, Command) and it.kind == "tma":
            return True
        if isinstance(it, (Guarded, Loop)) and _has_tma(it.body):
            return True
    return False
