"""The prover: mbarrier ring protocols for every value of the symbolic sizes (DESIGN §8).

`prove(func, symbolic=["N"], ranges={"N": (1, None)})` extracts each warp's sync
skeleton and lays it out over symbolic sizes (`model`).  The first engine is the
happens-before certificate (`certificate`): every command is given the generation its own
warp's program intends, and small z3 facts -- arithmetic per warp, happens-before paths per
pair of steps, a ranking for acyclicity -- show every schedule keeps that assignment, for
every size; it is decided exactly at the small sizes on concrete executions, and the
smallest size where it fails is confirmed by Synccheck (every schedule of the fixed
program) and replayed.  When the certificate cannot be settled, the transition system over
step counters is searched for an inductive invariant with Houdini (`induction`) and P1-P4
are proved from it; a property it does not settle is searched for a counterexample from the
initial state, confirmed the same way.

`inputs` is what NumSim needs for the concrete runs (TMA byte counts at the smallest sizes,
the refutation sweep and replays at specialized sizes): a dict for one size, or a function
from the kernel's constants at a size to an inputs dict (unlisted buffers are zero-filled),
which is what kernels whose tensor maps depend on the sizes need.
"""
from __future__ import annotations

import time

import ir

from ..common.results import resolve_inputs
from .certificate import certify, family_properties
from .induction import candidates, houdini, prove_all
from .model import Model
from .refute import KIND_PROPERTY, Sweep, confirm_by_replay, families_named, fmt_sizes, refute
from .report import ProofReport, PropertyResult
from .sample import reachable_states, surviving
from .skeleton import OutsideFragment, extract

__all__ = ["prove", "ProofReport"]


METHODS = ("auto", "certificate", "invariant")


def prove(func, symbolic, ranges: dict | None = None, inputs=None, *, max_depth: int = 48,
          max_seconds: float = 60.0, method: str = "auto") -> ProofReport:
    """`method`: "certificate" (the happens-before certificate only), "invariant" (the Houdini invariant
    search only) or "auto" (the certificate, then the invariant search when the certificate cannot be settled)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
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
    except OutsideFragment as err:
        report.incomplete(_fragment_message(err), span=err.span)
        return report.finish(t0)
    smallest = {n: report.ranges[n][0] for n in symbolic}
    try:
        model = Model(skel, ranges, _tma_bytes(func, skel, ranges, inputs))
    except (_FailsSmallest, OutsideFragment) as err:
        # a skeleton the model cannot lay out (arrival counts that change from round to round, a TMA count the
        # run did not observe because it does not complete) is often a kernel that already fails at the smallest
        # sizes: Synccheck there decides
        fragment = err.fragment if isinstance(err, _FailsSmallest) else err
        refuted = _confirm_smallest(func, skel, smallest, _specializer(inputs))
        if refuted is None:
            report.incomplete(_fragment_message(fragment), span=fragment.span)
        else:
            report.properties += refuted
        return report.finish(t0)
    report.skeleton = _describe(model)
    if method != "invariant":
        outcome = _by_certificate(report, model, func, inputs, deadline)
        # (a failure at a concrete size that Synccheck does not confirm is no case for the invariant search either:
        # the property fails there, just not in a way Synccheck reports)
        if outcome != "open" or method == "certificate":
            if outcome != "settled":
                report.incomplete(f"the happens-before certificate {report.stats.get('certificate')}")
            return report.finish(t0)
    _by_invariant(report, model, func, ranges, inputs, deadline, max_depth)
    return report.finish(t0)


def _by_certificate(report: ProofReport, model: Model, func, inputs, deadline: float) -> str:
    """The happens-before certificate's outcome: "settled" (proved, or refuted with Synccheck's confirmation),
    "failed" (it fails at a size where Synccheck reports nothing) or "open"; why, in stats["certificate"]."""
    cert = certify(model, deadline)
    report.stats.update(cert.stats)
    if cert.status == "proved":
        for fam, prop in cert.properties(model):
            report.properties.append(PropertyResult(fam, prop, "proved", cert.seconds[(fam, prop)]))
        return "settled"
    if cert.status == "failed":
        refuted = _confirm(model, func, cert, _specializer(inputs))
        if refuted is not None:
            report.properties += refuted
            report.stats["certificate"] = (f"fails first at {fmt_sizes(cert.failures[0][0])} "
                                           f"({cert.failures[0][1][0].condition})")
            return "settled"
        sizes, failures = cert.failures[0]
        report.stats["certificate"] = (f"fails at {fmt_sizes(sizes)} ({failures[0].condition}), but Synccheck finds no "
                                       f"error there or at the next {len(cert.failures) - 1} failing size(s)")
        note = f"fails at {fmt_sizes(sizes)}: {failures[0].condition}; Synccheck reports no error there"
        for fam, prop in cert.properties(model):
            hit = (fam, prop) == (failures[0].family, failures[0].prop)
            report.properties.append(PropertyResult(fam, prop, "incomplete", cert.seconds.get((fam, prop), 0.0),
                                                    note=note if hit else _open_note(model, sizes)))
        return "failed"
    report.stats["certificate"] = f"is open: {cert.reason}"
    return "open"


def _by_invariant(report: ProofReport, model: Model, func, ranges: dict, inputs, deadline: float,
                  max_depth: int) -> None:
    """Houdini's invariant over the step-counter transition system, P1-P4 from it, refutations for the rest."""
    report.stats["method"] = "invariant"
    try:
        cands = candidates(model)
        samples = reachable_states(model, _sample_sizes(ranges))
        report.stats["sampled_states"] = len(samples)
        invariant, queries = houdini(model, surviving(model, cands, samples), deadline, report.stats, cands)
    except (TimeoutError, RuntimeError) as err:
        report.incomplete(f"no invariant: {err}")
        return
    report.invariant = [c.name for c in invariant]
    report.stats["houdini_queries"] = queries
    outcomes = prove_all(model, invariant, deadline)
    unknown = {k: o for k, o in outcomes.items() if o.status != "proved"}
    if unknown:
        outcomes.update(refute(model, func, ranges, unknown, deadline, _specializer(inputs), max_depth))
    for (fam, prop), out in sorted(outcomes.items()):
        report.properties.append(PropertyResult(fam, prop, out.status, out.seconds, out.model, out.depth, out.note,
                                                out.finding, getattr(out, "replay", None)))


def _confirm(model: Model, func, cert, specialize) -> list | None:
    """The first of the certificate's failing sizes at which Synccheck finds an error: the property results, or
    None when Synccheck finds none at any of them."""
    sweep = Sweep(func, specialize)
    for sizes, failures in cert.failures:
        errs = sweep.errors(sizes)
        if isinstance(errs, Exception) or not errs:
            continue
        # the certificate's failure that Synccheck's finding speaks of (its property, its family), if any
        finding = errs[0]
        prop = KIND_PROPERTY.get(finding.kind)
        named = families_named(finding, model.families)
        failure = next((f for f in failures if f.prop == prop and f.family in named), None) or \
            next((f for f in failures if f.prop == prop), None) or failures[0]
        finding = next((f for f in errs if KIND_PROPERTY.get(f.kind) == failure.prop and
                        failure.family in families_named(f, model.families)), finding)
        replay = confirm_by_replay(func, specialize, sizes, finding)
        first = cert.failures[0][0]
        report_open = _open_note(model, sizes)
        notes = []
        if sizes != first:
            notes.append(f"the certificate already fails at {fmt_sizes(first)} ({cert.failures[0][1][0].condition}), "
                         f"where Synccheck finds no error")
        out = []
        for fam, p in cert.properties(model):
            secs = cert.seconds.get((fam, p), 0.0) + (sweep.seconds if (fam, p) == (failure.family, failure.prop)
                                                      else 0.0)
            if (fam, p) == (failure.family, failure.prop):
                note = "; ".join([f"{failure.condition}; confirmed on NumSim at {fmt_sizes(sizes)}: {finding.kind}: "
                                  f"{finding.message}"] + notes)
                out.append(PropertyResult(fam, p, "refuted", secs, sizes, None, note, finding, replay, failure.events))
            else:
                out.append(PropertyResult(fam, p, "incomplete", secs, note=report_open))
        return out
    return None


def _open_note(model: Model, sizes: dict) -> str:
    """What is known of the other properties of a refuted kernel: they hold at the smaller sizes (the certificate
    was decided there) and are open from the failing size on."""
    below = {n: v - 1 for n, v in sizes.items() if v - 1 >= model.ranges[n][0]}
    if len(sizes) == 1 and below:
        (n, v), = sizes.items()
        lo = model.ranges[n][0]
        held = f"{n}={lo}" if v - 1 == lo else f"{n} in [{lo}, {v - 1}]"
        return f"holds for {held}; open from {fmt_sizes(sizes)} on"
    return f"open: the kernel fails at {fmt_sizes(sizes)}"


class _FailsSmallest(Exception):
    """The concrete run at the smallest sizes did not complete, so a TMA byte count stayed unobserved."""

    def __init__(self, fragment: OutsideFragment):
        super().__init__(fragment.construct)
        self.fragment = fragment


def _confirm_smallest(func, skel, sizes: dict, specialize) -> list | None:
    """Synccheck at the smallest sizes, for a kernel whose run there fails: the property results, or None."""
    errs = Sweep(func, specialize).errors(sizes)
    if isinstance(errs, Exception) or not errs:
        return None
    finding = errs[0]
    fams = sorted(skel.family_size)
    named = families_named(finding, fams) or set(fams[:1])
    prop = KIND_PROPERTY.get(finding.kind, "P4")
    replay = confirm_by_replay(func, specialize, sizes, finding)
    out = []
    for fam in fams:
        for p in family_properties(fam):
            if fam in named and p == prop:
                out.append(PropertyResult(fam, p, "refuted", 0.0, sizes, None,
                                          f"the kernel's run at {fmt_sizes(sizes)} does not complete; Synccheck there: "
                                          f"{finding.kind}: {finding.message}", finding, replay))
            else:
                out.append(PropertyResult(fam, p, "incomplete", 0.0,
                                          note=f"open: the kernel fails at {fmt_sizes(sizes)}"))
    return out if any(r.status == "refuted" for r in out) else None



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
    if res.termination != "completed":
        missing = _unobserved_tma(skel, out)
        if missing is not None:
            raise _FailsSmallest(OutsideFragment("a TMA copy whose byte count the concrete run did not "
                                                        "observe (the run does not complete)", missing))
    return out


def _unobserved_tma(skel, observed: dict):
    """The span of a TMA command of the skeleton whose site has no observed byte count, or None."""
    from .skeleton import Command, Guarded, Loop

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
    from .skeleton import Command, Guarded, Loop
    for it in items:
        if isinstance(it, Command) and it.kind == "tma":
            return True
        if isinstance(it, (Guarded, Loop)) and _has_tma(it.body):
            return True
    return False
