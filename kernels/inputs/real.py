"""Inputs and numpy references of the real-syntax corpus (kernels/real/, manifest "inputs_builder").

Those kernels take their dimensions from their buffers (module-level `TypeVar` dims in the
printed pre-lowering form, `T.int64()` dims in the lowered form), so their inputs are built
here at fixed sizes; `reference(name, inputs)` gives the expected outputs for `modelcheck run`.
"""
from __future__ import annotations

import numpy as np

def _arg(inputs: dict, name: str) -> np.ndarray:
    """An input by buffer name, or by the lowered form's parameter name (`x_ptr` for buffer `x`)."""
    return inputs[name] if name in inputs else inputs[f"{name}_ptr"]


ROWS = 64          # rows of the 32-column float32 tiles the TMA rings stream (8 tiles of 8 rows)


def tiles(consts: dict, seed: int = 3) -> dict:
    """x (ROWS x 32) float32 random, out zero: the TMA rings' out = 2 * x + 1."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((ROWS, 32)).astype(np.float32),
            "out": np.zeros((ROWS, 32), np.float32)}


def tiles_reference(inputs: dict) -> dict:
    return {"out": 2 * _arg(inputs, "x") + 1}


def rows8(consts: dict, seed: int = 5) -> dict:
    """x (8 x 32) float32 random, out zero: the one-slot ring's out = 3 * x."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 32)).astype(np.float32), "out": np.zeros((8, 32), np.float32)}


def rows8_reference(inputs: dict) -> dict:
    return {"out": 3 * _arg(inputs, "x")}


def rows_int(consts: dict, seed: int = 7) -> dict:
    """x (8 x 128) int32 in [-50, 50): warp_reduce_pre's row sums and total."""
    rng = np.random.default_rng(seed)
    return {"x": rng.integers(-50, 50, (8, 128)).astype(np.int32), "rowsum": np.zeros(8, np.int32),
            "total": np.zeros(1, np.int32)}


def rows_int_reference(inputs: dict) -> dict:
    sums = _arg(inputs, "x").sum(axis=1).astype(np.int32)
    return {"rowsum": sums, "total": np.array([sums.sum()], np.int32)}


def persistent(consts: dict, seed: int = 9) -> dict:
    """x (32 x 32) float32 random (8 tiles of 4 rows), out and the tile counter zero."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((32, 32)).astype(np.float32), "out": np.zeros((32, 32), np.float32),
            "counter": np.zeros(1, np.int32)}


def persistent_reference(inputs: dict) -> dict:
    return {"out": 3 * _arg(inputs, "x") - 1, "counter": np.array([_arg(inputs, "x").shape[0] // 4 + 2], np.int32)}


def rows128(consts: dict, seed: int = 11) -> dict:
    """x (4 x 128) float32 random, out zero: named_bar_wg_lowered's out = 2 * (x + 1)."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((4, 128)).astype(np.float32), "out": np.zeros((4, 128), np.float32)}


def rows128_reference(inputs: dict) -> dict:
    return {"out": 2 * (_arg(inputs, "x") + 1)}
