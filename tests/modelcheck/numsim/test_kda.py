"""The KDA-style fused kernel (kernels/kda_fwd.py) computes the gated linear-attention recurrence.

The reference (kernels/inputs/kda.py:reference) runs the recurrence token by token in float64;
the kernel rounds q~, k~, kh, P and the state copy to bf16 and its output to bf16, so the
comparison is relative to the output's scale.  The tolerance is checked to be tight enough
to see the inter-chunk state: dropping it (or its decay) fails it.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS

TOLERANCE = 1e-2        # max |o - ref| / max |ref|; measured 3.7e-3 at T=128, 4.4e-3 at H=2, T=192


def _inputs_module():
    spec = importlib.util.spec_from_file_location("_inputs_kda", INPUT_BUILDERS / "kda.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


KDA = _inputs_module()


def _run(path, **consts):
    kernel = modelcheck.load(path, **consts)
    result = numsim.run(kernel.func, numsim.default_inputs(kernel.func, KDA.kda_fwd(dict(kernel.constants))))
    return kernel, result


def _relative_error(out, ref):
    return float(np.abs(np.asarray(out, dtype=np.float64) - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("consts", [{"SEQ_LEN": 128}, {"SEQ_LEN": 192, "H": 2}], ids=["T128", "T192_H2"])
def test_kda_fwd_matches_the_token_recurrence(consts):
    kernel, result = _run(KERNELS / "kda_fwd.py", **consts)
    assert result.verdict == "clean" and result.diagnostics == ()
    x = KDA.operands(dict(kernel.constants))
    ref = KDA.reference(x["q"], x["k"], x["v"], x["g"]).reshape(-1, KDA.HEAD_DIM)
    assert _relative_error(result.outputs["o"], ref) < TOLERANCE


def test_tolerance_sees_the_carried_state():
    """Chunks computed from a zero state, or with an undecayed state, miss the tolerance by far."""
    kernel, result = _run(KERNELS / "kda_fwd.py", SEQ_LEN=128)
    x = KDA.operands(dict(kernel.constants))
    chunk = kernel.constants["CHUNK"]
    per_chunk = np.concatenate([KDA.reference(*(x[n][:, c:c + chunk] for n in "qkvg"))
                                for c in range(0, 128, chunk)], axis=1).reshape(-1, KDA.HEAD_DIM)
    undecayed = KDA.reference(x["q"], x["k"], x["v"], np.zeros_like(x["g"])).reshape(-1, KDA.HEAD_DIM)
    assert _relative_error(result.outputs["o"], per_chunk) > 10 * TOLERANCE
    assert _relative_error(result.outputs["o"], undecayed) > 10 * TOLERANCE


def test_reference_recurrence_on_a_hand_example():
    """One channel, two tokens: S_0 = k0 v0, S_1 = e^{g1} S_0 + k1 v1, o_t = q_t S_t."""
    q = np.array([[[1.0], [2.0]]])
    k = np.array([[[3.0], [5.0]]])
    v = np.array([[[7.0], [11.0]]])
    g = np.array([[[0.0], [np.log(0.5)]]])
    out = KDA.reference(q, k, v, g)
    assert out[0, 0, 0] == pytest.approx(21.0)
    assert out[0, 1, 0] == pytest.approx(2.0 * (0.5 * 21.0 + 55.0))
