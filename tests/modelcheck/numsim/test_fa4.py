"""The FlashAttention-4-style forward kernel (kernels/fa4_fwd.py) on NumSim.

Numerics against softmax(Q K^T / sqrt(D)) V computed in float64 from the same bf16 inputs
(kernels/inputs/fa4.py:reference, one softmax over all keys); the sync trace follows the
roles' protocol: the softmax/correction named-barrier pair, the K/V ring, the MMA order.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS

SPEC = importlib.util.spec_from_file_location("_inputs_fa4", INPUT_BUILDERS / "fa4.py")
FA4 = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(FA4)


def softmax_weights(q, k) -> np.ndarray:
    logits = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def bf16_bound(q, k, v) -> np.ndarray:
    """Per-element error bound.  The kernel rounds each probability to bf16 before the PV MMA
    (relative error <= 2^-9) while the row sum uses the fp32 values, so |O - ref| is at most
    2^-9 * sum_k w_k |v_k|; the exp, the fp32 accumulations and the rescales add ~1e-6
    relative.  Allow twice the rounding term."""
    return 2.0 ** -8 * (softmax_weights(q, k) @ np.abs(v.astype(np.float64))) + 1e-5


def run(consts: dict, seed: int, observers=()):
    kern = modelcheck.load(KERNELS / "fa4_fwd.py", **consts)
    res = numsim.run(kern.func, FA4.fa4_fwd(kern.constants, seed=seed), observers=observers)
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    return kern.constants, res


@pytest.mark.parametrize("consts,seed", [({}, 5), ({"NKV": 1}, 6), ({"NKV": 3, "KV_STAGES": 3}, 7),
                                         ({"NKV": 5}, 8)])
def test_fa4_fwd_matches_fp64_attention_within_bf16_rounding_of_p(consts, seed):
    c, res = run(consts, seed)
    q, k, v = FA4.operands(c, seed=seed)
    ref = FA4.reference(q, k, v)
    got = res.outputs["O"]
    assert got.dtype == np.float32 and got.shape == (c["BM"], c["D"])
    err = np.abs(got - ref)
    assert (err <= bf16_bound(q, k, v)).all(), float(err.max())
    assert err.max() > 0          # P really went through bf16


def test_the_bound_rejects_an_output_without_the_correction_rescale():
    """Without the correction role's rescale each tile's PV stays weighted by the running max
    of its own time; the tolerance must see that (else the numerics test proves little)."""
    c = modelcheck.load(KERNELS / "fa4_fwd.py", NKV=3).constants
    q, k, v = FA4.operands(c, seed=9)
    logits = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(c["D"])
    bn = c["BN"]
    m = np.full((c["BM"], 1), -np.inf)
    l = np.zeros((c["BM"], 1))
    o = np.zeros((c["BM"], c["D"]))
    for j in range(c["NKV"]):
        s = logits[:, j * bn:(j + 1) * bn]
        m_new = np.maximum(m, s.max(axis=1, keepdims=True))
        p = np.exp(s - m_new)
        l = l * np.exp(m - m_new) + p.sum(axis=1, keepdims=True)
        o = o + p @ v[j * bn:(j + 1) * bn].astype(np.float64)       # missing: o * exp(m - m_new)
        m = m_new
    unrescaled = o / l
    ref = FA4.reference(q, k, v)
    assert (np.abs(unrescaled - ref) > bf16_bound(q, k, v)).any()


def test_fa4_fwd_sync_trace_follows_the_roles():
    trace = numsim.Trace()
    c, res = run({"NKV": 3}, 1, observers=[trace])
    nkv = c["NKV"]
    # named barrier 1: NKV + 1 generations (one alpha per tile, then the row sum), each made of
    # the four softmax warps' bar.arrive and the four correction warps' bar.sync
    nb1 = [e for e in trace.sync if e.barrier == ("named", 0, 1) and e.kind in ("bar.arrive", "bar.sync")]
    for gen in range(nkv + 1):
        got = sorted((e.kind, e.warp) for e in nb1 if e.generation == gen)
        assert got == [("bar.arrive", w) for w in range(4)] + [("bar.sync", w) for w in range(4, 8)], gen
    assert {e.generation for e in nb1} == set(range(nkv + 1))
    # the MMA warp: NKV QK^T groups then PV groups, 4 MMAs each (K = 16 of D = 64 / BN = 64)
    mmas = [e for e in trace.sync if e.kind == "async.issue" and e.details.get("kind") == "tcgen05.mma"]
    assert {e.warp for e in mmas} == {9} and len(mmas) == 8 * nkv
    assert all(e.details["form"] == "ss" for e in mmas)
    qk = [e for e in mmas if e.details["n"] == c["BN"] and e.details["d_tmem"] & 0xFFFF == c["S_COL"]]
    pv = [e for e in mmas if e.details["d_tmem"] & 0xFFFF == c["O_COL"]]
    assert [e.details["accumulate"] for e in qk] == [False, True, True, True] * nkv
    assert [e.details["accumulate"] for e in pv] == [False] + [True] * (4 * nkv - 1)
    # software pipelining: S_1 = Q K_1^T is issued before PV_0
    assert qk[4].seq < pv[0].seq
    # the ring: Q plus 2 NKV K/V tiles land through complete_tx
    assert sum(e.kind == "mbarrier.complete_tx" for e in trace.sync) == 1 + 2 * nkv
    # P goes through shared memory: generic stores by the softmax warps, async-proxy reads by the MMAs
    p_recs = [r for r in trace.accesses if r.alloc_name == "p_s"]
    assert {(r.kind, r.proxy) for r in p_recs} == {("write", "generic"), ("read", "async")}
    assert {r.warp for r in p_recs if r.kind == "write"} == {0, 1, 2, 3}
