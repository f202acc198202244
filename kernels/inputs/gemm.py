"""Inputs of the tcgen05 kernels (manifest "inputs_builder").

`gemm_ws` gives A and B (the kernel encodes its tensor maps over them in its host prelude).
`mma_ts` takes a tensor-map parameter for B, built here with `TensorMap`: its base array is
not a kernel parameter, so the engine gives the map's snapshot of its base its own global
allocation.  `operands` is what the builders (and the tests' numpy references) draw from.
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
    """kernels/gemm_ws.py: A, B and a zero D."""
    a, b = operands(consts, seed)
    return {"A": a, "B": b, "D": np.zeros((consts["M"], consts["N"]), dtype=np.float32)}


def mma_ts(consts: dict, seed: int = 0) -> dict:
    """kernels/mma_ts.py: A packed two bf16 per uint32 (even k low), a 64B-swizzled tensor map for B."""
    a, b = operands(consts, seed)
    n, k = consts["N"], consts["K"]
    tmap_b = TensorMap(b.reshape(-1), (k, n), (k * 2,), (k, n), (1, 1), "bfloat16", "64B")
    return {"a_packed": np.ascontiguousarray(a).view(np.uint32), "tmap_b": tmap_b.numpy(),
            "D": np.zeros((consts["M"], n), dtype=np.float32)}
