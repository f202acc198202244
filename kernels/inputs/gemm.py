"""Inputs of the tcgen05 kernels (manifest "inputs_builder").

`gemm_ws` binds tensor maps only: their base arrays are not kernel parameters, so the engine
gives each map's snapshot of its base its own global allocation.  `operands` is what the
builders (and the tests' numpy references) draw from.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from modelcheck.numsim import TensorMap


def operands(consts: dict, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A (M x K) and B (N x K), bf16, K contiguous."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((consts["M"], consts["K"])).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((consts["N"], consts["K"])).astype(ml_dtypes.bfloat16)
    return a, b


def gemm_ws(consts: dict, seed: int = 0) -> dict:
    """kernels/gemm_ws.py: 128B-swizzled K-major tensor maps for A and B, D zero."""
    a, b = operands(consts, seed)
    m, n, k, bm, bn, bk = (consts[x] for x in ("M", "N", "K", "BM", "BN", "BK"))
    tmap_a = TensorMap(a.reshape(-1), (k, m), (k * 2,), (bk, bm), (1, 1), "bfloat16", "128B")
    tmap_b = TensorMap(b.reshape(-1), (k, n), (k * 2,), (bk, bn), (1, 1), "bfloat16", "128B")
    return {"tmap_a": tmap_a.numpy(), "tmap_b": tmap_b.numpy(), "D": np.zeros((m, n), dtype=np.float32)}


def mma_ts(consts: dict, seed: int = 0) -> dict:
    """kernels/mma_ts.py: A packed two bf16 per uint32 (even k low), a 64B-swizzled tensor map for B."""
    a, b = operands(consts, seed)
    n, k = consts["N"], consts["K"]
    tmap_b = TensorMap(b.reshape(-1), (k, n), (k * 2,), (k, n), (1, 1), "bfloat16", "64B")
    return {"a_packed": np.ascontiguousarray(a).view(np.uint32), "tmap_b": tmap_b.numpy(),
            "D": np.zeros((consts["M"], n), dtype=np.float32)}
