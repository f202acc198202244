"""Inputs of the GDN prefill kernels (kernels/gdn_prefill*.py) and an independent numpy reference.

`operands` draws bf16 q, k, v of shape (H, SEQ_LEN, DK|DV) with L2-normalized keys (as GDN
normalizes them), fp32 log-gates g in [-0.3, -0.01] and write strengths beta in [0.1, 0.9].
`gdn_prefill` gives them as the kernel takes them (token-major, (H * SEQ_LEN, 16)) with the
fp32 output `o` filled with NaN; the kernel encodes its tensor maps over these buffers itself.  `reference` is the token-by-token gated delta rule, written from
its definition and not from the kernel's chunked algorithm:

    S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T,   o_t = S_t^T q_t,   S_{-1} = 0.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


def operands(consts: dict, seed: int = 0) -> dict:
    """q, k, v (bf16, (H, SEQ_LEN, DK|DV)), g and beta (fp32, (H, SEQ_LEN))."""
    rng = np.random.default_rng(seed)
    h, t, dk, dv = consts["H"], consts["SEQ_LEN"], consts["DK"], consts["DV"]
    q = (rng.standard_normal((h, t, dk)) * 0.5).astype(ml_dtypes.bfloat16)
    k = rng.standard_normal((h, t, dk))
    k = (k / np.linalg.norm(k, axis=-1, keepdims=True)).astype(ml_dtypes.bfloat16)
    v = rng.standard_normal((h, t, dv)).astype(ml_dtypes.bfloat16)
    g = rng.uniform(-0.3, -0.01, (h, t)).astype(np.float32)
    beta = rng.uniform(0.1, 0.9, (h, t)).astype(np.float32)
    return {"q": q, "k": k, "v": v, "g": g, "beta": beta}


def gdn_prefill(consts: dict, seed: int = 0) -> dict:
    """q, k, v (bf16, (H * SEQ_LEN, DK|DV)), the gates and write strengths, and `o` filled with NaN."""
    x = operands(consts, seed)
    rows = consts["H"] * consts["SEQ_LEN"]
    return {"q": x["q"].reshape(rows, -1), "k": x["k"].reshape(rows, -1), "v": x["v"].reshape(rows, -1),
            "g": x["g"].reshape(-1), "beta": x["beta"].reshape(-1),
            "o": np.full((rows, consts["DV"]), np.nan, dtype=np.float32)}


def reference(q, k, v, g, beta) -> np.ndarray:
    """o (H, SEQ_LEN, DV) in float64 from the per-token recurrence."""
    q, k, v, g, beta = (np.asarray(a, dtype=np.float64) for a in (q, k, v, g, beta))
    n_heads, seq, dk = k.shape
    out = np.zeros((n_heads, seq, v.shape[2]))
    for h in range(n_heads):
        state = np.zeros((dk, v.shape[2]))
        for t in range(seq):
            kt = k[h, t][:, None]
            state = np.exp(g[h, t]) * (state - beta[h, t] * kt @ (kt.T @ state)) + beta[h, t] * kt @ v[h, t][None, :]
            out[h, t] = state.T @ q[h, t]
    return out
