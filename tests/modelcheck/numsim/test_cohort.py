"""CTA cohorts (numsim/cohort.py): a launch run in cohorts gives exactly what the per-CTA engine gives --
verdict, diagnostics, final memory and the same observer events, CTA by CTA, in the same order -- for the
manifest kernels and SIMT grids whose CTAs diverge, talk through global memory, or fault."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.trace import Trace
from tests.manifest import KERNELS, entries, manifest_inputs

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cohort"


def _branches_inputs(seed: int = 0, ctas: int = 40, threads: int = 48) -> dict:
    rng = np.random.default_rng(seed)
    n = ctas * threads
    return {"x": rng.integers(-60, 60, n).astype(np.int32), "out": np.zeros(n, np.int32),
            "acc": np.zeros(n, np.int32), "per_cta": np.zeros(ctas, np.int32)}


def _warp_math_inputs(seed: int = 1, ctas: int = 12) -> dict:
    rng = np.random.default_rng(seed)
    n = ctas * 128
    return {"x": rng.standard_normal(n).astype(np.float32), "c": rng.standard_normal(ctas).astype(np.float32),
            "y": np.zeros(n, np.float32), "z": np.zeros(n, np.uint16), "lead": np.zeros(n, np.float32)}


FIXTURES = {
    "grid_register_holes": lambda: {"x": np.arange(6 * 32, dtype=np.float32), "y": np.zeros(6 * 32, np.float32)},
    "grid_warp_math": _warp_math_inputs,
    "grid_branches": _branches_inputs,
    "grid_neighbours": lambda: {"x": np.arange(24 * 32, dtype=np.int32), "y": np.zeros(25 * 32, np.int32)},
    "grid_oob": lambda: {"x": np.arange(20 * 64, dtype=np.int32), "out": np.zeros(20 * 64, np.int32)},
}


def _lanes(lanes) -> np.ndarray:
    return np.arange(32) if lanes is None else np.flatnonzero(lanes)


def _events(trace: Trace) -> list:
    """Every access record and sync event, in delivery order, with lanes as the active lane ids and offsets
    as one value per active lane (a uniform offset and a vector of equal ones are the same accesses)."""
    out = []
    for r in trace.accesses:
        lanes = _lanes(r.lanes)
        offs = np.broadcast_to(np.asarray(r.offsets), (32,))[lanes] if np.ndim(r.offsets) else \
            np.full(lanes.size, int(r.offsets))
        out.append(("access", r.seq, r.cta, r.warp, r.site, tuple(r.iters), tuple(lanes), r.space, r.alloc_name,
                    tuple(int(o) for o in offs), r.size, r.kind, r.proxy, r.order, r.scope, r.actor))
    for e in trace.sync:
        out.append(("sync", e.seq, e.kind, e.cta, e.warp, e.site, tuple(_lanes(e.lanes)), tuple(e.iters)))
    return out


def _per_cta(events: list) -> dict:
    """Each CTA's events in delivery order, without sequence numbers: what a cohort keeps exactly when CTAs
    block or poll (the per-CTA scheduler interleaves resident CTAs; the checkers order two CTAs' accesses only
    through sync, see numsim/cohort.py)."""
    out: dict = {}
    for e in sorted(events, key=lambda e: e[1]):
        cta = e[2] if e[0] == "access" else e[3]
        out.setdefault(cta, []).append(e[:1] + e[2:])
    return out


def _diagnostics(res) -> list:
    return [(d.kind, d.status, d.message, repr(sorted(d.details.items()))) for d in res.diagnostics]


def _both(func, make_inputs, size: int, **limits):
    runs = []
    for cohorts in (0, size):
        trace = Trace()
        res = numsim.Engine(func, unsupported="incomplete", cohorts=cohorts, **limits).run(make_inputs(),
                                                                                          observers=(trace,))
        runs.append((res, trace))
    return runs


def _assert_same(runs, per_cta: bool = False) -> None:
    """`per_cta`: each CTA's events equal, in order (else the whole stream, sequence numbers included)."""
    (a, ta), (b, tb) = runs
    assert a.termination == b.termination
    assert a.verdict == b.verdict
    assert _diagnostics(a) == _diagnostics(b)
    assert a.outputs.keys() == b.outputs.keys()
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name]), name
    if per_cta:
        assert _per_cta(_events(ta)) == _per_cta(_events(tb))
    else:
        assert _events(ta) == _events(tb)


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("size", [2, 7, 64])
def test_fixture_grids_run_the_same_in_cohorts(name, size):
    func = modelcheck.load(FIX / f"{name}.py").func
    runs = _both(func, FIXTURES[name], size)
    _assert_same(runs)
    stats = runs[1][0].stats.get("cohorts")
    if name in ("grid_branches", "grid_warp_math"):
        assert stats["split"] == 0 and stats["ctas_in_cohorts"] == runs[0][0].stats["ctas"]   # divergence: no split
    elif name == "grid_register_holes":
        assert stats["split"] > 0 and runs[0][0].diagnostics_of("uninitialized_read")
    elif name == "grid_neighbours":
        assert stats["ctas_in_cohorts"] == 0 and stats["split"] > 0       # every cohort conflicts: rolled back
    else:
        assert runs[1][0].termination == "error"


def test_waves_and_partial_warps_run_the_same_in_cohorts():
    func = modelcheck.load(FIX / "grid_branches.py").func
    runs = _both(func, _branches_inputs, 16, resident_ctas=3)
    _assert_same(runs)
    assert runs[1][0].stats["cohorts"]["cohorts"] == 3


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 41), ctas=st.integers(1, 30),
       threads=st.sampled_from([1, 31, 32, 33, 48, 96]))
def test_random_grids_and_data_run_the_same_in_cohorts(seed, size, ctas, threads):
    func = modelcheck.load(FIX / "grid_branches.py", CTAS=ctas, THREADS=threads).func
    _assert_same(_both(func, lambda: _branches_inputs(seed, ctas, threads), size))


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_checkers_find_the_same_in_cohorts(name, monkeypatch):
    func = modelcheck.load(FIX / f"{name}.py").func
    plain = modelcheck.check(func, FIXTURES[name]())
    base = numsim.Engine

    class Cohorts(base):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("cohorts", 8)
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(numsim, "Engine", Cohorts)
    batched = modelcheck.check(func, FIXTURES[name]())
    assert batched.verdict == plain.verdict
    assert [(f.id, f.status, f.kind, f.message) for f in batched.findings] == \
        [(f.id, f.status, f.kind, f.message) for f in plain.findings]


def _manifest_cases():
    return [(n, e) for n, e in entries() if not e.get("slow")]


@pytest.mark.parametrize("name,entry", _manifest_cases(), ids=[n for n, _ in _manifest_cases()])
def test_manifest_kernels_run_the_same_in_cohorts(name, entry):
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    func = kernel.func
    try:
        manifest_inputs(func, entry, kernel.constants)
    except Exception as err:     # a kernel whose inputs the manifest leaves to its checker stage
        pytest.skip(f"no NumSim inputs: {err}")
    trace = Trace()
    res = numsim.Engine(func, unsupported="incomplete", cohorts=8, max_seconds=60).run(
        manifest_inputs(func, entry, kernel.constants), observers=(trace,))
    if "off" in res.stats.get("cohorts", {"off": ""}):
        return          # not cohort-capable: the per-CTA engine ran it, unchanged
    _assert_same(_both(func, lambda: manifest_inputs(func, entry, kernel.constants), 8, max_seconds=60), per_cta=True)


def test_cohorts_are_off_by_default_and_say_why_they_do_not_apply():
    func = modelcheck.load(FIX / "grid_branches.py").func
    assert "cohorts" not in numsim.Engine(func).run(_branches_inputs()).stats
    mma = modelcheck.load(Path(__file__).parent.parent.parent / "fixtures" / "numsim" / "mma_narrow.py").func
    res = numsim.Engine(mma, cohorts=4, unsupported="incomplete").run(numsim.default_inputs(mma, {}))
    assert res.stats["cohorts"] == {"off": "operation tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"}
    with pytest.raises(ValueError):
        numsim.Engine(func, cohorts=-1)
