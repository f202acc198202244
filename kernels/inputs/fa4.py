"""Inputs of the FlashAttention-4-style kernels kernels/fa4_*.py (manifest "inputs_builder").

`operands` draws Q (BM x D), K and V (NKV * BN x D) in bf16, row-major with D contiguous;
`fa4_fwd` gives them with a zero O (the kernel encodes its 128B-swizzled tensor maps over
Q, K and V in its host prelude).  `reference` is the attention the kernel computes, in float64
from the same bf16 values, written directly from its definition (one softmax over all keys,
no tiling and no running max).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


def operands(consts: dict, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q (BM x D), K and V (NKV * BN x D), bf16.  Q is scaled up so the softmax is far from uniform."""
    rng = np.random.default_rng(seed)
    bm, d, keys = consts["BM"], consts["D"], consts["NKV"] * consts["BN"]
    q = (2.0 * rng.standard_normal((bm, d))).astype(ml_dtypes.bfloat16)
    k = rng.standard_normal((keys, d)).astype(ml_dtypes.bfloat16)
    v = rng.standard_normal((keys, d)).astype(ml_dtypes.bfloat16)
    return q, k, v


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(D)) V in float64."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    logits = q64 @ k64.T / np.sqrt(q64.shape[1])
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v64


def fa4_fwd(consts: dict, seed: int = 0) -> dict:
    """kernels/fa4_fwd.py (and its twin): Q, K, V; O zero."""
    q, k, v = operands(consts, seed)
    return {"Q": q, "K": k, "V": v, "O": np.zeros((consts["BM"], consts["D"]), dtype=np.float32)}
