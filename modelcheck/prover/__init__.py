"""The prover: mbarrier ring protocols for every value of the symbolic sizes (DESIGN §8).

`prove(func, symbolic=["N"], ranges={"N": (1, None)})` extracts each warp's sync
skeleton, builds the transition system over step counters (`model`), finds an inductive
invariant with Houdini (`induction`), and proves P1–P4 per barrier family.  A property
the invariant does not settle is searched for a counterexample from the initial state;
a counterexample is then confirmed on NumSim: the kernel is specialized to each size up
to the one found and checked by Synccheck (every schedule of the fixed program), and the
smallest size with a finding is reported with that finding's witness.

`inputs` is what NumSim needs for the concrete runs (TMA byte counts at the smallest sizes,
the refutation sweep and replays at specialized sizes): a dict for one size, or a function
from the kernel's constants at a size to an inputs dict (unlisted buffers are zero-filled),
which is what kernels whose tensor maps depend on the sizes need.
"""
from __future__ import annotations

import time

import ir

from ..common.results import resolve_inputs
from .induction import candidates, houdini, prove_all
from .model import Model
from .refute import refute
from .report import ProofReport, PropertyResult
from .sample import reachable_states, surviving
from .skeleton import OutsideFragment, extract

__all__ = ["prove", "ProofReport"]


def prove(func, symbolic, ranges: dict | None = None, inputs=None, *, max_depth: int = 48,
          max_seconds: float = 60.0) -> ProofReport:
    t0 = time.perf_counter()
    deadline = time.monotonic() + max_seconds
    func = ir.as_func(func)
    consts = {c.name: c.value for c in func.constants}
    symbolic = tuple(symbolic)
    ranges = dict(ranges or {})
    report = ProofReport(func.name, symbolic, {n: ranges.get(n, (1, None)) for n in symbolic})
    unknown = [n for n in symbolic if n not in consts]
    if unknown:
        report.incomplete(f"{', '.join(unknown)} {'is not a module constant' if len(unknown) == 1 else 'are not module constants'} "
                          f"of {func.name} (module constants: {', '.join(sorted(consts)) or 'none'})")
        return report.finish(t0)
    for n in symbolic:
        lo, _ = report.ranges[n]
        ranges[n] = report.ranges[n]
        consts[n] = lo
    try:
        skel = extract(func, symbolic, consts)
        tma_bytes = _tma_bytes(func, skel, ranges, inputs)
        model = Model(skel, ranges, tma_bytes)
    except OutsideFragment as err:
        report.incomplete(_fragment_message(err), span=err.span)
        return report.finish(t0)
    report.skeleton = _describe(model)
    try:
        cands = candidates(model)
        samples = reachable_states(model, _sample_sizes(ranges))
        report.stats["sampled_states"] = len(samples)
        invariant, queries = houdini(model, surviving(model, cands, samples), deadline, report.stats, cands)
    except (TimeoutError, RuntimeError) as err:
        report.incomplete(f"no invariant: {err}")
        return report.finish(t0)
    report.invariant = [c.name for c in invariant]
    report.stats["houdini_queries"] = queries
    outcomes = prove_all(model, invariant, deadline)
    unknown = {k: o for k, o in outcomes.items() if o.status != "proved"}
    if unknown:
        outcomes.update(refute(model, func, ranges, unknown, deadline, _specializer(inputs), max_depth))
    for (fam, prop), out in sorted(outcomes.items()):
        report.properties.append(PropertyResult(fam, prop, out.status, out.seconds, out.model, out.depth, out.note,
                                                out.finding, getattr(out, "replay", None)))
    return report.finish(t0)


def _sample_sizes(ranges: dict) -> list[dict]:
    """Small sizes for the sampled runs: the lower bound and a few above it."""
    out = []
    for k in (0, 1, 2, 3, 5, 8):
        env = {}
        for n, (lo, hi) in ranges.items():
            env[n] = lo + k if hi is None else min(lo + k, hi)
        if env not in out:
            out.append(env)
    return out


def _fragment_message(err: OutsideFragment) -> str:
    where = ""
    if err.span is not None:
        where = f"{getattr(err.span, 'file', None) or '<kernel>'}:{err.span.line}:{err.span.col}: "
    hint = f"; {err.hint}" if err.hint else ""
    return f"{where}outside the prover's fragment: {err.construct}{hint}"


def _describe(model: Model) -> dict:
    return {"warps": [p.warp for p in model.procs], "families": dict(model.families),
            "async_commands": len(model.async_steps),
            "counts": {fam: prm.count for fam, prm in model.params.items()}}


def _specialize(func: ir.PrimFunc, sizes: dict) -> ir.PrimFunc:
    """The kernel with `sizes` substituted; the other constants keep the values `func` was loaded with."""
    from .. import kernel as kernel_mod
    if func.source is None:
        raise OutsideFragment("the kernel has no source text to specialize")
    consts = {c.name: c.value for c in func.constants}
    return kernel_mod.parse(func.source, path=func.path or "<kernel>", **(consts | sizes))


def _inputs_at(small: ir.PrimFunc, inputs):
    """Inputs for the specialized kernel: a function of its constants is called; a dict is used as given."""
    if not callable(inputs):
        return inputs
    from .. import numsim
    return numsim.default_inputs(small, dict(inputs({c.name: c.value for c in small.constants})))


def _specializer(inputs):
    """specialize(func, sizes) -> (kernel at those sizes, its inputs), for the refutation sweep and replay."""
    def specialize(func, sizes):
        small = _specialize(func, sizes)
        return small, _inputs_at(small, inputs)
    return specialize


def _tma_bytes(func, skel, ranges, inputs) -> dict:
    """Bytes per TMA site, observed on a concrete run at the smallest sizes (tensor maps are runtime data)."""
    if not any(_has_tma(items) for items in skel.warps.values()):
        return {}
    from .. import numsim
    sizes = {n: lo for n, (lo, _) in ranges.items()}
    small = _specialize(func, sizes)
    ins, missing = resolve_inputs(small, _inputs_at(small, inputs))
    if missing:
        raise OutsideFragment(f"TMA byte counts need inputs for {', '.join(missing)}")
    trace = numsim.Trace()
    res = numsim.run(small, ins, observers=(trace,))
    by_pos = {}
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
    return out


def _has_tma(items) -> bool:
    from .skeleton import Command, Guarded, Loop
    for it in items:
        if isinstance(it, Command) and it.kind == "tma":
            return True
        if isinstance(it, (Guarded, Loop)) and _has_tma(it.body):
            return True
    return False
