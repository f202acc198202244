"""The three findings of the reference KDA case study (checker-semantics §7.4) on kernels/kda_fwd*.py.

The manifest checks verdicts and kinds; these tests check that each finding is the case
study's: the right barrier, allocation, ordering failure, message and roles (prep warps
0-1, MMA warp 2, state keepers 4-7), and that the fixed twin has none of it.
"""
from __future__ import annotations

import importlib.util

import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS, load_manifest

PRIOR_GEN = "mbarrier_prior_generation_consumption_not_happens_before"
PREP, MMA, STATE = {0, 1}, {2}, {4, 5, 6, 7}


def _check(checker: str, name: str):
    entry = load_manifest()["kernels"][name]
    spec = importlib.util.spec_from_file_location("_inputs_kda", INPUT_BUILDERS / "kda.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    inputs = numsim.default_inputs(kernel.func, mod.kda_fwd(dict(kernel.constants)))
    return getattr(modelcheck, checker)(kernel.func, inputs=inputs)


@pytest.mark.parametrize("checker", ["synccheck", "racecheck"])
def test_single_stage_m_o_is_a_prior_generation_finding_in_both_checkers(checker):
    found = [f for f in _check(checker, "kda_fwd_single_m_o").findings if f.kind == PRIOR_GEN]
    assert found and all("m_o[0]" in f.message for f in found), [f.message for f in found]


def test_missing_async_fence_is_a_proxy_bridge_race_on_the_operand_ring():
    races = [f for f in _check("racecheck", "kda_fwd_no_async_fence").findings if f.kind == "data_race"]
    assert races
    for f in races:
        d = f.details
        assert "no async->generic proxy bridge from shared::cta to shared::cta" in f.message
        assert d["ordering_failure"] == "missing_proxy_bridge"
        assert d["overlap"]["allocation"] in {"op_q", "op_k", "op_kh", "op_vt"}
        assert d["prior"]["op"] == "tcgen05.mma" and d["prior"]["warp"] in MMA
        assert d["current"]["access"] == "write" and d["current"]["warp"] in PREP


def test_early_decay_vector_store_is_an_unsynchronized_race_on_the_dvec_ring():
    races = [f for f in _check("racecheck", "kda_fwd_dvec_early").findings if f.kind == "data_race"]
    assert races
    for f in races:
        d = f.details
        assert "no synchronization edge orders the actors" in f.message
        assert d["ordering_failure"] == "missing_inter_actor_sync"
        assert d["overlap"]["allocation"] == "dvec"
        assert {d["prior"]["warp"], d["current"]["warp"]} & PREP and {d["prior"]["warp"], d["current"]["warp"]} & STATE


@pytest.mark.parametrize("name,checker", [("kda_fwd", "synccheck"), ("kda_fwd_no_async_fence_fixed", "racecheck"),
                                          ("kda_fwd_dvec_early_fixed", "racecheck")])
def test_fixed_twins_are_clean(name, checker):
    report = _check(checker, name)
    assert report.verdict == "clean", report.format()


def test_dvec_ring_family_kernel_keeps_the_kernels_barrier_code():
    """kernels/kda_ring_dvec.py (the prover's view of one ring family) uses kda_fwd's dvec barrier lines verbatim."""
    def sync_lines(path):
        code = [line.strip() for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]
        return {line for line in code if "dvec_full" in line or "dvec_empty" in line or line.startswith(("if c + LOOK", "if j < NC"))}
    ring, full = sync_lines(KERNELS / "kda_ring_dvec.py"), sync_lines(KERNELS / "kda_fwd.py")
    assert len(ring) >= 8 and ring <= full, sorted(ring - full)
