"""Inputs and numpy references of the real-syntax corpus (kernels/real/, manifest "inputs_builder").

Those kernels take their dimensions from their buffers (module-level `TypeVar` dims in the
printed pre-lowering form, `T.int64()` dims in the lowered form), so their inputs are built
here at fixed sizes; `reference(name, inputs)` gives the expected outputs for `modelcheck run`.
"""
from __future__ import annotations

import numpy as np

ROWS = 64          # rows of the 32-column float32 tiles the TMA rings stream (8 tiles of 8 rows)


def tiles(consts: dict, seed: int = 3) -> dict:
    """x (ROWS x 32) float32 random, out zero: the TMA rings' out = 2 * x + 1."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((ROWS, 32)).astype(np.float32),
            "out": np.zeros((ROWS, 32), np.float32)}


def tiles_reference(inputs: dict) -> dict:
    return {"out": 2 * inputs["x"] + 1}


def rows8(consts: dict, seed: int = 5) -> dict:
    """x (8 x 32) float32 random, out zero: the one-slot ring's out = 3 * x."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 32)).astype(np.float32), "out": np.zeros((8, 32), np.float32)}


def rows8_reference(inputs: dict) -> dict:
    return {"out": 3 * inputs["x"]}
