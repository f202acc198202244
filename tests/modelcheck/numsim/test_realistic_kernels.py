"""Realistic kernels of issue 8 against numpy references written from the math.

- kernels/gemm_persistent.py (K1 grown up): D = A . B^T of bf16 operands, compared with the
  float64 product; each output element is one fp32 rounding per MMA (K / 16 of them) away from
  the exact sum, so the bound is (K / 16 + 1) eps_fp32 |A| |B|^T elementwise.
- kernels/gdn_prefill.py (K6 slice): the gated delta rule, compared with the token-by-token
  float64 recurrence of kernels/inputs/gdn.py:reference (not the kernel's chunked form).
"""
from __future__ import annotations

import difflib
import importlib.util

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS


def _inputs_module(name: str):
    spec = importlib.util.spec_from_file_location(f"_inputs_{name}", INPUT_BUILDERS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEMM = _inputs_module("gemm_persistent")


def _body(path, fname: str) -> list[str]:
    text = path.read_text()
    return text[text.index("from tvm_tirx.script"):].replace(f"def {fname}(", "def NAME(").splitlines()


# --------------------------------------------------------------------------- persistent GEMM

@pytest.mark.parametrize("consts", [{}, {"NUM_CTAS": 1, "TILES_PER_CTA": 4, "K_TILES": 3, "STAGES": 2}],
                         ids=["default", "one_cta_4_tiles"])
def test_gemm_persistent_matches_the_fp64_product(consts):
    kernel = modelcheck.load(KERNELS / "gemm_persistent.py", **consts)
    c = kernel.constants
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, GEMM.gemm_persistent(dict(c), seed=3)))
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    a, b = (x.astype(np.float64) for x in GEMM.operands(dict(c), seed=3))
    ref = GEMM.reference(dict(c), seed=3)
    got = res.outputs["D"]
    # every tile was stored (D starts as NaN) and each CTA walked TILES_PER_CTA of them
    assert not np.isnan(got).any()
    assert c["TILES_M"] * c["TILES_N"] == c["NUM_CTAS"] * c["TILES_PER_CTA"]
    bound = (c["K"] // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b).T)
    assert (np.abs(got - ref) <= bound).all()


def test_gemm_persistent_bound_sees_a_swapped_accumulator():
    """The bound is tight enough to tell tiles apart: D with two of its tiles exchanged fails it."""
    c = modelcheck.load(KERNELS / "gemm_persistent.py").constants
    ref = GEMM.reference(dict(c), seed=3)
    a, b = (x.astype(np.float64) for x in GEMM.operands(dict(c), seed=3))
    bound = (c["K"] // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b).T)
    swapped = ref.copy()
    bm, bn = c["BM"], c["BN"]
    swapped[:bm, :bn], swapped[:bm, bn:2 * bn] = ref[:bm, bn:2 * bn], ref[:bm, :bn]
    assert not (np.abs(swapped - ref) <= bound).all()


def _diff(clean: list[str], buggy: list[str]) -> tuple[list[str], list[str]]:
    """(lines only in clean, lines only in buggy), stripped, from a line diff."""
    out = ([], [])
    for line in difflib.ndiff(clean, buggy):
        if line[:2] in ("- ", "+ "):
            out[line[0] == "+"].append(line[2:].strip())
    return out


def test_gemm_persistent_bug_twin_only_drops_the_tmem_empty_wait():
    removed, added = _diff(_body(KERNELS / "gemm_persistent.py", "gemm_persistent"),
                           _body(KERNELS / "gemm_persistent_acc_reuse.py", "gemm_persistent_acc_reuse"))
    assert removed == ["# accumulator t % 2 is free once the epilogue drained the tile two back",
                       "T.cuda.mbarrier_wait(tmem_empty.ptr_to([t % ACC_STAGES]), (t // ACC_STAGES + 1) % 2)",
                       "T.ptx.tcgen05.fence__after_thread_sync()"]
    assert added == ["# BUG: no tmem_empty wait: accumulator t % 2 may still be drained for tile t - 2"]



def test_gemm_persistent_early_release_twins():
    """The fixed twin is gemm_persistent.py itself (the manifest names its function); the buggy one moves
    the wait::ld after the release."""
    clean = _body(KERNELS / "gemm_persistent.py", "gemm_persistent")
    removed, added = _diff(clean, _body(KERNELS / "gemm_persistent_early_release.py", "gemm_persistent_early_release"))
    assert removed == ["T.ptx.tcgen05.wait__ld.sync.aligned()"]
    assert added == ["# BUG: the accumulator is released before its loads completed",
                     "T.ptx.tcgen05.wait__ld.sync.aligned()"]

# --------------------------------------------------------------------------- GDN prefill slice

GDN = _inputs_module("gdn")
GDN_TOLERANCE = 1e-5     # max |o - ref| / max |ref|; measured 2.5e-7 (fp32 kernel math on bf16 inputs)


def _gdn_run(name: str, **consts):
    kernel = modelcheck.load(KERNELS / f"{name}.py", **consts)
    c = dict(kernel.constants)
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, GDN.gdn_prefill(c, seed=5)))
    x = GDN.operands(c, seed=5)
    return c, res, x


def _rel(out, ref) -> float:
    return float(np.abs(np.asarray(out, dtype=np.float64) - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("consts", [{}, {"H": 2, "NUM_CHUNKS": 3, "SINP_STAGES": 1, "IN_STAGES": 2}],
                         ids=["default", "two_heads_3_chunks"])
def test_gdn_prefill_matches_the_token_recurrence(consts):
    c, res, x = _gdn_run("gdn_prefill", **consts)
    assert res.verdict == "clean" and res.diagnostics == ()
    ref = GDN.reference(x["q"], x["k"], x["v"], x["g"], x["beta"]).reshape(-1, c["DV"])
    assert not np.isnan(res.outputs["o"]).any()
    assert _rel(res.outputs["o"], ref) < GDN_TOLERANCE


def test_gdn_tolerance_sees_the_delta_rule_and_the_carried_state():
    """Outputs of a plain gated linear recurrence (no delta correction), or of chunks started from a
    zero state, miss the tolerance by far."""
    c, res, x = _gdn_run("gdn_prefill")
    chunk = c["CHUNK"]
    # the linear recurrence writes beta k v^T without the delta correction -beta k k^T S
    q, k, v, g, beta = (np.asarray(x[n], dtype=np.float64) for n in ("q", "k", "v", "g", "beta"))
    no_delta = np.zeros((1, c["SEQ_LEN"], c["DV"]))
    state = np.zeros((c["DK"], c["DV"]))
    for t in range(c["SEQ_LEN"]):
        state = np.exp(g[0, t]) * state + beta[0, t] * np.outer(k[0, t], v[0, t])
        no_delta[0, t] = state.T @ q[0, t]
    per_chunk = np.concatenate([GDN.reference(*(x[n][:, s:s + chunk] for n in ("q", "k", "v", "g", "beta")))
                                for s in range(0, c["SEQ_LEN"], chunk)], axis=1)
    out = res.outputs["o"]
    assert _rel(out, no_delta.reshape(-1, c["DV"])) > 100 * GDN_TOLERANCE
    assert _rel(out, per_chunk.reshape(-1, c["DV"])) > 100 * GDN_TOLERANCE


def test_gdn_reference_on_a_hand_example():
    """One key/value channel, two tokens: S_0 = b0 k0 v0, S_1 = a1 (1 - b1 k1^2) S_0 + b1 k1 v1, o_t = q_t S_t."""
    q = np.array([[[2.0], [3.0]]])
    k = np.array([[[1.0], [0.5]]])
    v = np.array([[[4.0], [8.0]]])
    g = np.array([[0.0, np.log(0.5)]])
    beta = np.array([[0.5, 0.25]])
    out = GDN.reference(q, k, v, g, beta)
    s0 = 0.5 * 1.0 * 4.0
    s1 = 0.5 * (1 - 0.25 * 0.25) * s0 + 0.25 * 0.5 * 8.0
    assert out[0, 0, 0] == pytest.approx(2.0 * s0)
    assert out[0, 1, 0] == pytest.approx(3.0 * s1)


def test_gdn_bug_twin_only_changes_the_sinp_full_parity():
    removed, added = _diff(_body(KERNELS / "gdn_prefill.py", "gdn_prefill"),
                           _body(KERNELS / "gdn_prefill_sinp_parity.py", "gdn_prefill_sinp_parity"))
    assert removed == ["T.cuda.mbarrier_wait(sinp_full.ptr_to([c % SINP_STAGES]), (c // SINP_STAGES) % 2)"]
    assert added == ["# BUG: producer parity on the consumer side",
                     "T.cuda.mbarrier_wait(sinp_full.ptr_to([c % SINP_STAGES]), (c // SINP_STAGES + 1) % 2)"]


def test_gdn_no_acquire_twins():
    clean = _body(KERNELS / "gdn_prefill.py", "gdn_prefill")     # also the fixed twin (manifest "function")
    removed, added = _diff(clean, _body(KERNELS / "gdn_prefill_sinp_no_acquire.py", "gdn_prefill_sinp_no_acquire"))
    assert removed == ["# publish S0 of chunk c once the compute warp released the slot's previous state",
                       "T.cuda.mbarrier_wait(sinp_empty.ptr_to([c % SINP_STAGES]), (c // SINP_STAGES + 1) % 2)"]
    assert added == ["# BUG: the slot is republished without acquiring its empty generation"]
