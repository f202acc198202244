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
    """kernels/tma_copy_{none,32b,64b,128b,128b_atom32b}.py: a (GY, GX) float32 tensor and a box tensor map
    over it."""
    gx, gy = consts["GX"], consts["GY"]
    src = np.random.default_rng(seed).standard_normal((gy, gx)).astype(np.float32)
    mode = "128B_atom_32B" if consts.get("ATOM") == 32 else SWIZZLE_NAMES[consts["SWIZZLE"]]
    tmap = TensorMap(src.reshape(-1), (gx, gy), (gx * 4,), (consts["BOX_X"], consts["BOX_Y"]), (1, 1), "float32",
                     mode)
    return {"src": src, "tmap": tmap.numpy(), "out": np.zeros(consts["BOX_X"] * consts["BOX_Y"], np.float32)}


def tma_store(consts: dict) -> dict:
    """kernels/tma_store.py: `out` filled with -1 and a box tensor map over it (128B swizzle)."""
    gx, gy = consts["GX"], consts["GY"]
    out = np.full((gy, gx), -1.0, dtype=np.float32)
    tmap = TensorMap(out.reshape(-1), (gx, gy), (gx * 4,), (consts["BOX_X"], consts["BOX_Y"]), (1, 1), "float32",
                     "128B")
    return {"out": out, "tmap": tmap.numpy()}


def tmap_workspace(consts: dict, seed: int = 13) -> dict:
    """kernels/tmap_workspace.py: x (32 x 32) float32 random; `maps` holds two tensor maps as data: the
    template at byte 0 (rows 0.. of x, 32 rows) and, at byte 128, the stale map a previous launch left in the
    workspace slot (the same map: a kernel that loads through it without the edit gets rows 0..)."""
    from modelcheck.numsim.tensormap import TensorMap, with_maps
    x = np.random.default_rng(seed).standard_normal((32, 32)).astype(np.float32)
    box = consts.get("BOX_Y", 8)
    template = TensorMap(x.reshape(-1), (32, 32), (128,), (32, box), (1, 1), "float32")
    maps = with_maps(np.zeros(32, np.int64), {0: template, 128: template})
    return {"x": x, "maps": maps, "out": np.zeros((box, 32), np.float32)}


def tmap_workspace_reference(inputs: dict) -> dict:
    x = inputs["x"]
    return {"out": x[8:16]}
