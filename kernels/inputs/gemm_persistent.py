"""Inputs of kernels/gemm_persistent*.py (manifest "inputs_builder") and their numpy reference.

The kernels encode their tensor maps over A, B and D in their host prelude (128B-swizzled
K-major load boxes, an unswizzled fp32 store box over D, so the TMA stores land in D).  `reference` is the plain product in float64 of the same bf16 operands.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


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
    """A, B, and D filled with NaN so a tile the kernel never stores shows."""
    a, b = operands(consts, seed)
    return {"A": a, "B": b, "D": np.full((consts["M"], consts["N"]), np.nan, dtype=np.float32)}
