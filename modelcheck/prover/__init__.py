"""The prover: mbarrier ring protocols for every value of the symbolic sizes (docs/architecture.md#prover).

`prove(func, symbolic=["N"], ranges={"N": (1, None)})` runs four stages:

  extract  each warp's sync skeleton, with closed forms for its loop-carried cursors (`skeleton`);
  layout   the skeleton over the symbolic sizes: per-family parameters, steps in blocks, closed-form
           counts of every command (`model`, `program`);
  certify  the happens-before certificate (`certificate`): every command is given the generation its
           own warp's program intends, and small z3 facts -- arithmetic per warp, happens-before paths per
           pair of steps, a ranking for acyclicity -- show that every schedule keeps that assignment, for
           every size; it is decided exactly at the small sizes on concrete executions;
  confirm  the smallest size where the certificate fails is checked by Synccheck (every schedule of the
           fixed program) and the finding replayed (`confirm`).

Anything outside the fragment, any query z3 does not settle within its budget (`solving`), and any
failure Synccheck does not confirm make the proof `incomplete`, with the reason.

`inputs` is what NumSim needs for the concrete runs (TMA byte counts at the smallest sizes,
Synccheck and replays at specialized sizes): a dict for one size, or a function from the
kernel's constants at a size to an inputs dict (`specialize`).
"""
from __future__ import annotations

import time

import ir

from ..numsim import unmodeled_operations
from .certificate import certify
from .confirm import confirm, confirm_smallest, open_note
from .model import Model
from ..common.verdict import Proof
from .result import ProofResult, PropertyResult, fmt_sizes
from .exprs import OutsideFragment
from .skeleton import extract
from .solving import Ledger
from .specialize import FailsSmallest, specializer, tma_bytes

__all__ = ["prove", "ProofResult"]


def _setmaxnreg_site(func):
    """The span of the first setmaxnreg, if the kernel has one."""
    for node in ir.walk(func.body):
        if isinstance(node, ir.OpCall) and node.op.startswith("setmaxnreg"):
            return node.span
    return None


def _cluster_launch(func, consts: dict) -> str | None:
    """'cluster launch 2x1x1' when the launch groups CTAs into clusters (or may: an extent not known)."""
    dims: list[int | None] = []
    for e in func.launch.cluster:
        if isinstance(e, ir.Const):
            dims.append(int(e.value))
        elif isinstance(e, ir.ConstRef) and isinstance(consts.get(e.name), int):
            dims.append(int(consts[e.name]))
        else:
            dims.append(None)
    if dims == [1, 1, 1]:
        return None
    return "cluster launch " + "x".join("?" if d is None else str(d) for d in dims)


def prove(func, symbolic, ranges: dict | None = None, inputs=None, *, max_seconds: float = 60.0) -> ProofResult:
    """Prove P1-P4 of every barrier family for every value of the `symbolic` module constants in `ranges`
    (name -> (lo, hi or None); default 1..).  `max_seconds` is a wall-clock safety net only: the solver's
    budgets are resource counts (`solving`), so a verdict does not depend on the machine's load; a proof that
    outlives the safety net is incomplete."""
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = time.monotonic() + max_seconds
    func = ir.as_func(func)
    consts = {c.name: c.value for c in func.constants}
    symbolic = tuple(symbolic)
    ranges = dict(ranges or {})
    report = ProofResult(func.name, symbolic, {n: ranges.get(n, (1, None)) for n in symbolic})
    if func.origin:          # a real tvm object: where its spans and constants came from
        report.stats["source"] = func.origin
    unknown = [n for n in symbolic if n not in consts]
    if unknown:
        what = "is not a module constant" if len(unknown) == 1 else "are not module constants"
        whence = f"; kernel read from {func.origin}" if func.origin else ""
        report.incomplete(f"{', '.join(unknown)} {what} "
                          f"of {func.name} (module constants: {', '.join(sorted(consts)) or 'none'}{whence})")
        return report.finish(t0, c0)
    unmodeled = unmodeled_operations(func)
    if unmodeled:
        # whatever the sizes, the concrete runs the proof relies on cannot execute it: never `proved`
        name, why, span = unmodeled[0]
        more = f" (and {len(unmodeled) - 1} more)" if len(unmodeled) > 1 else ""
        report.incomplete(f"{name} is outside the modeled set ({why}){more}", span=span)
        return report.finish(t0, c0)
    regs = _setmaxnreg_site(func)
    if regs is not None:
        # a setmaxnreg a warpgroup issues partially, or an inc the pool cannot satisfy, hangs: not in P1-P4
        report.incomplete("setmaxnreg (warpgroup register accounting) is outside the prover's fragment; "
                          "Synccheck checks it for given sizes", span=regs)
        return report.finish(t0, c0)
    cluster = _cluster_launch(func, consts)
    if cluster:
        # the fragment is one CTA's barriers: peers' arrivals and cluster barriers are outside it
        report.incomplete(f"thread block clusters ({cluster}) are outside the prover's fragment: it proves one "
                          "CTA's barrier protocols, not cluster barriers or a peer CTA's remote arrivals",
                          span=func.launch.span)
        return report.finish(t0, c0)
    for n in symbolic:
        ranges[n] = report.ranges[n]
        consts[n] = report.ranges[n][0]
    specialize = specializer(inputs)
    ledger = Ledger(deadline)
    # extract
    try:
        skel = extract(func, symbolic, consts, ledger)
    except OutsideFragment as err:
        report.incomplete(_fragment_message(err), span=err.span)
        return report.finish(t0, c0, ledger)
    # layout
    smallest = {n: report.ranges[n][0] for n in symbolic}
    try:
        model = Model(skel, ranges, tma_bytes(func, skel, ranges, inputs), ledger)
    except (FailsSmallest, OutsideFragment) as err:
        # a skeleton the model cannot lay out (arrival counts that change from round to round, a TMA count the
        # run did not observe because it does not complete) is often a kernel that already fails at the smallest
        # sizes: Synccheck there decides
        fragment = err.fragment if isinstance(err, FailsSmallest) else err
        refuted = confirm_smallest(func, skel, smallest, specialize)
        if refuted is None:
            report.incomplete(_fragment_message(fragment), span=fragment.span)
        else:
            report.properties += refuted
        return report.finish(t0, c0, ledger)
    report.skeleton = _describe(model)
    # certify
    cert = certify(model, deadline)
    report.stats.update(cert.stats)
    if cert.status == "proved":
        for fam, prop in cert.properties(model):
            report.properties.append(PropertyResult(fam, prop, Proof.PROVED, cert.seconds[(fam, prop)]))
        return report.finish(t0, c0, ledger)
    if cert.status != "failed":
        report.stats["certificate"] = f"is open: {cert.reason}"
        report.incomplete(f"the happens-before certificate {report.stats['certificate']}")
        return report.finish(t0, c0, ledger)
    # confirm
    refuted = confirm(model, func, cert, specialize)
    sizes, failures = cert.failures[0]
    if refuted is not None:
        report.properties += refuted
        report.stats["certificate"] = f"fails first at {fmt_sizes(sizes)} ({failures[0].condition})"
        return report.finish(t0, c0, ledger)
    report.stats["certificate"] = (f"fails at {fmt_sizes(sizes)} ({failures[0].condition}), but Synccheck finds no "
                                   f"error there or at the next {len(cert.failures) - 1} failing size(s)")
    report.incomplete(f"the happens-before certificate {report.stats['certificate']}")
    note = f"fails at {fmt_sizes(sizes)}: {failures[0].condition}; Synccheck reports no error there"
    for fam, prop in cert.properties(model):
        hit = (fam, prop) == (failures[0].family, failures[0].prop)
        report.properties.append(PropertyResult(fam, prop, Proof.INCOMPLETE, cert.seconds.get((fam, prop), 0.0),
                                                note=note if hit else open_note(model, sizes)))
    return report.finish(t0, c0, ledger)


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
