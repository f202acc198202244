"""Inputs and the numpy reference of the Hopper wgmma GEMM (kernels/wgmma_gemm*.py; manifest "inputs_builder"
and "reference").  The kernel encodes its tensor maps over A and B in its host prelude."""
from __future__ import annotations

import ml_dtypes
import numpy as np


def gemm(consts: dict, seed: int = 0) -> dict:
    """A (M x K) and B (N x K) bf16, K contiguous, and a zero D (M x N) fp32."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((consts["M"], consts["K"])).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((consts["N"], consts["K"])).astype(ml_dtypes.bfloat16)
    return {"A": a, "B": b, "D": np.zeros((consts["M"], consts["N"]), dtype=np.float32)}


def gemm_reference(inputs: dict) -> dict:
    """D = A . B^T, summed in float64 (the bf16 products are exact) and rounded to fp32."""
    a = np.asarray(inputs["A"]).astype(np.float64)
    b = np.asarray(inputs["B"]).astype(np.float64)
    return {"D": (a @ b.T).astype(np.float32)}
