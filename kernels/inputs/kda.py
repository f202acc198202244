"""Inputs of the KDA-style kernels (kernels/kda_fwd*.py) and an independent numpy reference.

`operands` draws bf16 q, k, v of shape (H, SEQ_LEN, 64) and fp32 per-channel log-decay gates
g < 0 (KDA's fine-grained forget gate, log of a sigmoid).  `kda_fwd` gives them as the kernel
takes them (q, k, v as (H * SEQ_LEN, 64): rows = head-major tokens) with a zero bf16 `o`; the
kernel encodes its tensor maps over these buffers itself (its host prelude).  `reference` is the token-by-token recurrence, written from its
definition and not from the kernel's chunked algorithm:

    S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,     o_t = q_t S_t,     S_{-1} = 0.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

HEAD_DIM = 64


def operands(consts: dict, seed: int = 0) -> dict:
    """q, k, v (bf16) and g (fp32, in [-0.08, -0.005]), each (H, SEQ_LEN, 64)."""
    rng = np.random.default_rng(seed)
    shape = (consts["H"], consts["SEQ_LEN"], HEAD_DIM)
    q = (rng.standard_normal(shape) * 0.25).astype(ml_dtypes.bfloat16)
    k = (rng.standard_normal(shape) * 0.25).astype(ml_dtypes.bfloat16)
    v = rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    g = rng.uniform(-0.08, -0.005, shape).astype(np.float32)
    return {"q": q, "k": k, "v": v, "g": g}


def kda_fwd(consts: dict, seed: int = 0) -> dict:
    """Inputs of kernels/kda_fwd*.py: q, k, v (bf16, (H * SEQ_LEN, 64)), the gates and a zero bf16 `o`."""
    x = operands(consts, seed)
    rows = consts["H"] * consts["SEQ_LEN"]
    return {"q": x["q"].reshape(rows, HEAD_DIM), "k": x["k"].reshape(rows, HEAD_DIM),
            "v": x["v"].reshape(rows, HEAD_DIM), "g": x["g"],
            "o": np.zeros((rows, HEAD_DIM), dtype=ml_dtypes.bfloat16)}


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """o (H, SEQ_LEN, 64) in float64 from the per-token recurrence."""
    q, k, v, g = (np.asarray(a, dtype=np.float64) for a in (q, k, v, g))
    n_heads, seq, dk = q.shape
    out = np.zeros((n_heads, seq, v.shape[2]))
    for h in range(n_heads):
        state = np.zeros((dk, v.shape[2]))
        for t in range(seq):
            state = np.exp(g[h, t])[:, None] * state + np.outer(k[h, t], v[h, t])
            out[h, t] = q[h, t] @ state
    return out
