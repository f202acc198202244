"""Every Synccheck error with a witness and every data race of the manifest's buggy kernels replays.

Small launches only: kernels whose default NumSim run exceeds SMALL warp-instructions are left to the
benchmarks (the checkers alone take seconds on them)."""
from __future__ import annotations

import pytest

import modelcheck
from modelcheck import numsim
from modelcheck import replay   # the ReplayReport: result and its renderings
from tests.manifest import KERNELS, entries
from tests.test_manifest import manifest_inputs

SMALL = 20_000
OUTCOMES = {"reproduced", "no_difference", "schedule_not_followed"}


def _buggy():
    return [(name, entry) for name, entry in entries()
            if entry.get("bug") and any(entry["expect"].get(s) for s in ("synccheck", "racecheck"))]


def _replayable(f) -> bool:
    return f.status == "error" and (f.kind == "data_race" or "witness" in f.details or "witnesses" in f.details)


def _check_replay(kernel, inputs, f) -> None:
    r = replay(kernel.func, inputs, f)
    assert r.outcome in OUTCOMES, (f.kind, r.outcome)
    assert r.steps and r.format() and r.to_json()
    if f.kind in ("deadlock", "fixed_sync_protocol_error"):
        # an explorer witness is a schedule of the same program: NumSim can follow it, and it fails
        assert r.outcome == "reproduced", (f.kind, r.format())
        assert all(s["done"] for s in r.steps) or r.forced.termination == "error"
    if f.kind == "data_race" and r.outcome == "schedule_not_followed":
        assert r.note, "a race that cannot be reversed says why"


# The edit-loop suite replays each kernel's first finding of every (checker, kind); the slow step replays
# the others (a racy kernel has dozens of races of one kind, each replay a full NumSim run or two).
@pytest.mark.parametrize("which", ["first_of_each_kind", pytest.param("the_rest", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name,entry", _buggy(), ids=lambda x: x if isinstance(x, str) else "")
def test_replays_of_a_buggy_kernel_run(name, entry, which):
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    inputs = manifest_inputs(kernel.func, entry, {c.name: c.value for c in kernel.func.constants})
    size = numsim.run(kernel.func, inputs, unsupported="incomplete").stats["warp_instructions"]
    if size > SMALL:
        pytest.skip(f"{size} warp-instructions: not a small launch")
    for stage in ("synccheck", "racecheck"):
        if not entry["expect"].get(stage):
            continue
        seen: set[str] = set()
        for f in getattr(modelcheck, stage)(kernel.func, inputs).findings:
            if not _replayable(f):
                continue
            first = f.kind not in seen
            seen.add(f.kind)
            if first == (which == "first_of_each_kind"):
                _check_replay(kernel, inputs, f)


def test_the_sweep_covers_witnesses_and_races():
    """The parametrized sweep is not vacuous: the corpus has both kinds among its small kernels."""
    kinds = set()
    for name in ("mbar_partial_backpressure", "named_barrier_rendezvous", "race_write_write"):
        k = modelcheck.load(KERNELS / f"{name}.py")
        for f in modelcheck.synccheck(k.func).findings + modelcheck.racecheck(k.func).findings:
            if _replayable(f):
                kinds.add("witness" if "witness" in f.details else f.kind)
    assert kinds == {"witness", "data_race"}
