"""Inputs of the gated-activation grid kernels (kernels/real/gated_act_grid_pre*.py): x [TOKENS, 2 * D]
float16 and out [TOKENS, D] zeros (their dimensions come from the buffers), and the numpy reference of out."""
from __future__ import annotations

import numpy as np


def rows(consts: dict, seed: int = 5) -> dict:
    tokens, d = int(consts.get("TOKENS", 1024)), int(consts.get("D", 4096))
    x = np.random.default_rng(seed).standard_normal((tokens, 2 * d)).astype(np.float16)
    return {"x": x, "out": np.zeros((tokens, d), np.float16)}


def reference(inputs: dict) -> dict:
    x = inputs["x"].astype(np.float32)
    d = x.shape[1] // 2
    g, u = x[:, :d], x[:, d:]
    return {"out": (g / (1 + np.exp2(-2.4554669595930157 * g)) * u).astype(np.float16)}
