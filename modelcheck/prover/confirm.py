"""Confirmation: a size at which the certificate fails is checked by Synccheck and replayed.

The certificate's conditions (P1-P4 on the intended execution) are sufficient, not necessary:
Synccheck's semantics differ in places (a partial generation at exit hangs nothing; a wait
that only some mutations follow may still work).  So a failing size is a candidate.  The
kernel is specialized to it and checked by Synccheck (every schedule of the fixed program
at that size); the first candidate Synccheck finds an error at is the counterexample, the
finding is attributed to a property by its kind and to a family by the barriers it names,
and it is replayed on NumSim at that size (`modelcheck.replay`: its schedule next to the
default one) so the report shows what goes wrong -- the stuck warps, the wrong-round reads.
A failure Synccheck confirms at none of the candidates leaves the proof incomplete.
"""
from __future__ import annotations

import re
import time

from ..synccheck import check as synccheck
from .certificate import Certificate, family_properties
from .model import Model
from ..common.verdict import Proof, Verdict
from .result import PropertyResult, fmt_sizes

# finding kind -> the property it breaks
KIND_PROPERTY = {
    "deadlock": "P4", "named_barrier_leftover": "P4",
    "mbarrier_arrive_before_consumption": "P3",
    "mbarrier_prior_generation_consumption_not_happens_before": "P3",
    "mbarrier_prior_generation_not_consumed": "P3",
    "mbarrier_arrival_overflow": "P1", "mbarrier_transaction_over_delivery": "P1",
    "named_barrier_arrival_overflow": "P1", "named_barrier_contract_mismatch": "P1",
    "mbarrier_invalid_phase": "P2",
}


class Sweep:
    """Synccheck of the kernel specialized to given sizes, each size checked once."""

    def __init__(self, func, specialize):
        self.func = func
        self.specialize = specialize
        self.results: dict = {}
        self.seconds = 0.0

    def errors(self, sizes: dict):
        """Synccheck's error findings at `sizes`, or the exception that kept it from checking them."""
        key = tuple(sorted(sizes.items()))
        if key not in self.results:
            t0 = time.process_time()
            try:
                small, inputs = self.specialize(self.func, sizes)
                result = synccheck(small, inputs)
                errors = [f for f in result.findings if f.status is Verdict.ERROR]
                if not errors and result.verdict is Verdict.INCOMPLETE:
                    why = "; ".join(f.message for f in result.findings
                                    if f.status is Verdict.INCOMPLETE) or "incomplete"
                    raise RuntimeError(f"Synccheck could not check {fmt_sizes(sizes)}: {why}")
                self.results[key] = errors
            except Exception as err:      # noqa: BLE001 - a size that cannot be specialized is reported as such
                self.results[key] = err
            self.seconds += time.process_time() - t0
        return self.results[key]


def families_named(finding, families) -> set:
    text = repr(finding.details) + " " + finding.message
    return {f for f in families if re.search(rf"\b{re.escape(f)}\[", text)}


def confirm_by_replay(func, specialize, sizes: dict, finding) -> dict:
    """Replay the confirming finding on the kernel specialized to `sizes`: a summary of what it shows."""
    from ..replay import PlanError, replay
    try:
        small, inputs = specialize(func, sizes)
        return replay(small, inputs, finding).summary()
    except PlanError as err:
        return {"outcome": "not_replayable", "headline": f"not replayable: {err}"}


def confirm(model: Model, func, cert: Certificate, specialize) -> list | None:
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
        report_open = open_note(model, sizes)
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
                out.append(PropertyResult(fam, p, Proof.REFUTED, secs, sizes, note, finding, replay, failure.events))
            else:
                out.append(PropertyResult(fam, p, Proof.INCOMPLETE, secs, note=report_open))
        return out
    return None


def confirm_smallest(func, skel, sizes: dict, specialize) -> list | None:
    """Synccheck at the smallest sizes, for a kernel whose run there fails before the model is laid out: the
    property results, or None."""
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
                out.append(PropertyResult(fam, p, Proof.REFUTED, 0.0, sizes,
                                          f"the kernel's run at {fmt_sizes(sizes)} does not complete; Synccheck there: "
                                          f"{finding.kind}: {finding.message}", finding, replay))
            else:
                out.append(PropertyResult(fam, p, Proof.INCOMPLETE, 0.0,
                                          note=f"open: the kernel fails at {fmt_sizes(sizes)}"))
    return out if any(r.status == "refuted" for r in out) else None


def open_note(model: Model, sizes: dict) -> str:
    """What is known of the other properties of a refuted kernel: they hold at the smaller sizes (the certificate
    was decided there) and are open from the failing size on."""
    below = {n: v - 1 for n, v in sizes.items() if v - 1 >= model.ranges[n][0]}
    if len(sizes) == 1 and below:
        (n, v), = sizes.items()
        lo = model.ranges[n][0]
        held = f"{n}={lo}" if v - 1 == lo else f"{n} in [{lo}, {v - 1}]"
        return f"holds for {held}; open from {fmt_sizes(sizes)} on"
    return f"open: the kernel fails at {fmt_sizes(sizes)}"
