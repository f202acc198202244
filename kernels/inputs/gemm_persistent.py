"""Inputs of kernels/gemm_persistent*.py (manifest "inputs_builder") and their numpy reference.

The load maps are 128B-swizzled K-major boxes over A and B; the store map is an unswizzled
fp32 box over D, whose base is the bound `D`, so the kernel's TMA stores land in that
parameter.  `reference` is the plain product in float64 of the same bf16 operands.
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


def reference(consts: dict, seed: int = 0) -> np.ndarray:
    """D = A . B^T in float64 from the bf16 operands."""
    a, b = operands(consts, seed)
    return a.astype(np.float64) @ b.astype(np.float64).T


def gemm_persistent(consts: dict, seed: int = 0) -> dict:
    """128B-swizzled K-major load maps for A and B (boxes BK x BM, BK x BN); an unswizzled store map
    over D (box BN x BM fp32); D filled with NaN so a tile the kernel never stores shows."""
    a, b = operands(consts, seed)
    m, n, k, bm, bn, bk = (consts[x] for x in ("M", "N", "K", "BM", "BN", "BK"))
    d = np.full((m, n), np.nan, dtype=np.float32)
    tmap_a = TensorMap(a.reshape(-1), (k, m), (k * 2,), (bk, bm), (1, 1), "bfloat16", "128B")
    tmap_b = TensorMap(b.reshape(-1), (k, n), (k * 2,), (bk, bn), (1, 1), "bfloat16", "128B")
    tmap_d = TensorMap(d.reshape(-1), (n, m), (n * 4,), (bn, bm), (1, 1), "float32", "none")
    return {"tmap_a": tmap_a.numpy(), "tmap_b": tmap_b.numpy(), "tmap_d": tmap_d.numpy(), "D": d}

