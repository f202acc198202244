"""Inputs of the tcgen05 shared-operand kernels (manifest "inputs_builder").

`race_tcgen05_mma_smem_reuse[_fixed]` stage A0, A1 (M x K) and B (N x K), bf16, in the
canonical K-major no-swizzle layout the kernels' shared descriptors describe (8 x 16-byte
core matrices; LBO = 128 bytes between K-adjacent core matrices, SBO = 256 bytes between
8-row groups), as uint32 words the kernel copies into shared memory.  `operands` gives the
matrices themselves, for the tests' numpy reference D = A0 . B^T + A1 . B^T.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

LBO, SBO = 128, 256


def operands(consts: dict, seed: int = 0):
    """A (ROUNDS x M x K) and B (N x K), bf16."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((consts["ROUNDS"], consts["M"], consts["K"])).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((consts["N"], consts["K"])).astype(ml_dtypes.bfloat16)
    return a, b


def k_major_image(mat: np.ndarray) -> np.ndarray:
    """The shared bytes of a bf16 (rows x K) matrix in the K-major no-swizzle layout, as uint32 words."""
    rows, k = mat.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    offs = (r % 8) * 16 + (r // 8) * SBO + (c % 8) * 2 + (c // 8) * LBO
    img = np.zeros(rows * k * 2, dtype=np.uint8)
    raw = mat.view(np.uint8).reshape(rows, k, 2)
    img[offs[..., None] + np.arange(2)] = raw
    return img.view(np.uint32)


def mma_smem_reuse(consts: dict, seed: int = 0) -> dict:
    a, b = operands(consts, seed)
    return {"a_img": np.stack([k_major_image(x) for x in a]), "b_img": k_major_image(b),
            "D": np.zeros((consts["M"], consts["N"]), dtype=np.float32)}
