"""Inputs of the TMA kernels (manifest "inputs_builder"): tensor maps over seeded random data.

Each builder takes the kernel's constants (module constants with overrides) and returns the
inputs dict; the tensor maps' base is the bound `src`/`out` array, so the engine resolves them
to those parameters' global buffers.
"""
from __future__ import annotations

import numpy as np

from modelcheck.numsim import TensorMap

SWIZZLE_NAMES = {0: "none", 32: "32B", 64: "64B", 128: "128B"}


def tma_copy(consts: dict, seed: int = 0) -> dict:
    """kernels/tma_copy_{none,32b,64b,128b}.py: a (GY, GX) float32 tensor and a box tensor map over it."""
    gx, gy = consts["GX"], consts["GY"]
    src = np.random.default_rng(seed).standard_normal((gy, gx)).astype(np.float32)
    tmap = TensorMap(src.reshape(-1), (gx, gy), (gx * 4,), (consts["BOX_X"], consts["BOX_Y"]), (1, 1), "float32",
                     SWIZZLE_NAMES[consts["SWIZZLE"]])
    return {"src": src, "tmap": tmap.numpy(), "out": np.zeros(consts["BOX_X"] * consts["BOX_Y"], np.float32)}


def tma_store(consts: dict) -> dict:
    """kernels/tma_store.py: `out` filled with -1 and a box tensor map over it (128B swizzle)."""
    gx, gy = consts["GX"], consts["GY"]
    out = np.full((gy, gx), -1.0, dtype=np.float32)
    tmap = TensorMap(out.reshape(-1), (gx, gy), (gx * 4,), (consts["BOX_X"], consts["BOX_Y"]), (1, 1), "float32",
                     "128B")
    return {"out": out, "tmap": tmap.numpy()}
