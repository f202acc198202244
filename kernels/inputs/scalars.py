"""Scalar parameters of the kernels that take them (manifest "inputs_builder")."""
from __future__ import annotations


def negative_extent(consts: dict) -> dict:
    """kernels/negative_extent.py as the buggy caller invokes it: the length computed the wrong way round."""
    return {"n": -4}


def negative_extent_fixed(consts: dict) -> dict:
    return {"n": 4}
