"""Phase A keeps only the sync events its programs are built from (`explorer.is_command`) and their clocks, and
only the async issue clocks a completion reads back: the programs, the findings and the event count are those of a
run that keeps every event and every clock."""
import pytest

import modelcheck
from modelcheck import explorer, numsim
from modelcheck.common.async_effects import UnobservedEffects
from modelcheck.common.phase_a import Causality, StrictProtocol
from modelcheck.synccheck import phase_a
from tests.manifest import KERNELS, load_manifest, manifest_inputs

def _case(name):
    entry = load_manifest()["kernels"][name]
    k = modelcheck.load(KERNELS / entry["file"])
    return k.func, manifest_inputs(k.func, entry, k.constants)


def _program(programs):
    out = {}
    for w, prog in programs.warps.items():
        out[w] = [(c, c.site, c.iters, [c.before[i] for i in programs.warps], [c.after[i] for i in programs.warps])
                  for c in prog]
    return out


def _everything(func, inputs):
    """Phase A as it was: every event in the trace, every event's clocks, every issue's token."""
    strict, causality, effects = StrictProtocol("synccheck"), Causality("synccheck"), UnobservedEffects("synccheck")
    trace = numsim.Trace()
    trace.wants_accesses = False
    engine = numsim.Engine(func, unsupported="incomplete", cohorts=numsim.CHECK_COHORT)
    res = engine.run(inputs, observers=(strict, causality, effects, trace))
    return res, trace, causality, effects


@pytest.mark.parametrize("name", ["gemm_2cta_clc", "cp_async_overtaking", "cp_async_overtaking_fixed"])
def test_phase_a_programs_are_those_of_every_event(name):
    func, inputs = _case(name)
    a = phase_a(func, inputs)
    res, trace, causality, effects = _everything(func, a.inputs)
    assert a.stats["sync_events"] == len(trace.sync) and a.run.termination == res.termination
    assert [(f.kind, f.message) for f in effects.findings()] == [(f.kind, f.message) for f in a.findings
                                                            if f.kind == "effect_commit_unobserved"]
    if a.programs is None:
        return
    full = explorer.build(trace.sync, causality.event_clocks, causality.ctx.name_of)
    assert _program(a.programs) == _program(full)
    assert a.programs.resource_names == full.resource_names


def test_only_commands_are_kept_and_cp_async_issues_are_counted():
    func, inputs = _case("cp_async_overtaking_fixed")
    a = phase_a(func, inputs)
    res, trace, causality, _ = _everything(func, a.inputs)
    issues = [ev for ev in trace.sync if ev.kind == "async.issue" and ev.barrier is None]
    assert issues, "the kernel issues cp.async"
    assert all(not explorer.is_read(ev) and not explorer.is_command(ev) for ev in issues)
    kept = [ev for ev in trace.sync if explorer.is_read(ev)]
    assert a.stats["sync_events"] == len(trace.sync) > len(kept)
