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
    """x (ROWS x 32) float32 random, out zero (ROWS: the kernel's constant if it has one): the TMA rings'
    out = 2 * x + 1, tma_pipeline_authored's out = max(x, 0)."""
    rows = consts.get("ROWS", ROWS)
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((rows, 32)).astype(np.float32), "out": np.zeros((rows, 32), np.float32)}


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


def squares(consts: dict, seed: int = 13) -> dict:
    """x (6 x 32) float32 random, out zero: mbar_ring2_lowered's out = (x + 0.5) ** 2."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((6, 32)).astype(np.float32), "out": np.zeros((6, 32), np.float32)}


def squares_reference(inputs: dict) -> dict:
    return {"out": (_arg(inputs, "x") + np.float32(0.5)) ** 2}


# --------------------------------------------------------------------------- tcgen05 MMA operands

def _k_major_words(mat: np.ndarray) -> np.ndarray:
    """The shared image of a bf16 (rows x 16) matrix in the K-major no-swizzle canonical layout (core
    matrices of 8 rows x 16 bytes; K-adjacent core matrices 128 bytes apart, 8-row groups 256 bytes
    apart), as uint32 words."""
    rows, k = mat.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    offset = (r % 8) * 16 + (r // 8) * 256 + (c % 8) * 2 + (c // 8) * 128
    image = np.zeros(rows * k * 2, np.uint8)
    image[offset[..., None] + np.arange(2)] = mat.view(np.uint8).reshape(rows, k, 2)
    return image.view(np.uint32)


def mma(consts: dict, seed: int = 17) -> dict:
    """A (128 x 16) and B (64 x 16) bf16 as the shared images the kernel copies, D zero."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    return {"a_img": _k_major_words(a), "b_img": _k_major_words(b), "D": np.zeros(8192, np.float32)}


def _from_k_major_words(words: np.ndarray, rows: int) -> np.ndarray:
    import ml_dtypes

    r, c = np.meshgrid(np.arange(rows), np.arange(16), indexing="ij")
    offset = (r % 8) * 16 + (r // 8) * 256 + (c % 8) * 2 + (c // 8) * 128
    raw = words.view(np.uint8)[offset[..., None] + np.arange(2)]
    return raw.copy().view(ml_dtypes.bfloat16).reshape(rows, 16).astype(np.float32)


def mma_reference(inputs: dict) -> dict:
    a = _from_k_major_words(_arg(inputs, "a_img"), 128)
    b = _from_k_major_words(_arg(inputs, "b_img"), 64)
    return {"D": (a @ b.T).reshape(-1)}


def relu_reference(inputs: dict) -> dict:
    """tma_pipeline_authored on `tiles`: out = max(x, 0)."""
    return {"out": np.maximum(_arg(inputs, "x"), 0)}


def store_rows(consts: dict, seed: int = 19) -> dict:
    """x (16 x 32) float32 random, out zero: tma_store_authored's out = 2 * x + round."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((16, 32)).astype(np.float32), "out": np.zeros((16, 32), np.float32)}


def store_rows_reference(inputs: dict) -> dict:
    x = _arg(inputs, "x")
    return {"out": 2 * x + (np.arange(x.shape[0]) // 4)[:, None].astype(np.float32)}


def colsum(consts: dict, seed: int = 23) -> dict:
    """x (ROUNDS x 128) float32 random, out zero: the ping-pong kernel's out = column sums of x."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((consts.get("ROUNDS", 6), 128)).astype(np.float32), "out": np.zeros(128, np.float32)}


def colsum_reference(inputs: dict) -> dict:
    return {"out": _arg(inputs, "x").sum(axis=0)}


def elect_reference(inputs: dict) -> dict:
    """elect_arrive_function (x random 4 x 32): out = (x + round) * 0.5."""
    x = _arg(inputs, "x")
    return {"out": (x + np.arange(x.shape[0], dtype=np.float32)[:, None]) * np.float32(0.5)}


def elect(consts: dict, seed: int = 29) -> dict:
    """x (ROUNDS x 32) float32 random, out zero: elect_arrive_function's out = (x + round) * 0.5."""
    rounds = consts.get("ROUNDS", 4)
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((rounds, 32)).astype(np.float32), "out": np.zeros((rounds, 32), np.float32)}


def mma_ws(consts: dict, seed: int = 31) -> dict:
    """Two K steps of A (128 x 16) and B (64 x 16) bf16 as shared images, D zero: tcgen05_ws_authored."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    a = [rng.standard_normal((128, 16)).astype(ml_dtypes.bfloat16) for _ in range(2)]
    b = [rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16) for _ in range(2)]
    return {"a_img": np.stack([_k_major_words(m) for m in a]), "b_img": np.stack([_k_major_words(m) for m in b]),
            "D": np.zeros((128, 64), np.float32)}


def mma_ws_reference(inputs: dict) -> dict:
    a_img, b_img = _arg(inputs, "a_img"), _arg(inputs, "b_img")
    d = sum(_from_k_major_words(a_img[s], 128) @ _from_k_major_words(b_img[s], 64).T for s in range(a_img.shape[0]))
    return {"D": d}


def blocks(consts: dict, seed: int = 37) -> dict:
    """x (64 x 64) int32 random, blockmax zero, gmax at INT_MIN: redux_max_pre."""
    rng = np.random.default_rng(seed)
    return {"x": rng.integers(-10**6, 10**6, (64, 64)).astype(np.int32), "blockmax": np.zeros((2, 2), np.int32),
            "gmax": np.full(1, np.iinfo(np.int32).min, np.int32)}


def blocks_reference(inputs: dict) -> dict:
    x = _arg(inputs, "x")
    return {"blockmax": x.reshape(2, 32, 2, 32).max(axis=(1, 3)), "gmax": np.array([x.max()], np.int32)}


def rows_int96(consts: dict, seed: int = 41) -> dict:
    """x (8 x 96) int32: warp_reduce_pre_divergent, whose lanes 24-31 have no columns."""
    rng = np.random.default_rng(seed)
    return {"x": rng.integers(-50, 50, (8, 96)).astype(np.int32), "rowsum": np.zeros(8, np.int32),
            "total": np.zeros(1, np.int32)}


def tiles_map(consts: dict, seed: int = 3) -> dict:
    """tma_ring2_lowered: the tensor map over x (64 x 32 float32, 8 x 32 boxes) as a T.TensorMap()
    argument (the device function does not see x itself), out zero."""
    from modelcheck.numsim import TensorMap

    x = tiles(consts, seed)["x"]
    tmap = TensorMap(x.reshape(-1), (32, x.shape[0]), (128,), (32, 8), (1, 1), "float32", "none")
    return {"x_map": tmap.numpy(), "out": np.zeros(x.size, np.float32)}


def tiles_map_reference(inputs: dict) -> dict:
    return {"out": (2 * tiles({})["x"] + 1).reshape(-1)}


def fragments(consts: dict, seed: int = 43) -> dict:
    """A (16 x 16) and B (16 x 8) float16 random, D and dmax zero: ldmatrix_mma_pre's D = A^T B."""
    rng = np.random.default_rng(seed)
    return {"A": rng.standard_normal((16, 16)).astype(np.float16), "B": rng.standard_normal((16, 8)).astype(np.float16),
            "D": np.zeros((16, 8), np.float32), "dmax": np.zeros(1, np.float32)}


def fragments_reference(inputs: dict) -> dict:
    d = _arg(inputs, "A").T.astype(np.float32) @ _arg(inputs, "B").astype(np.float32)
    return {"D": d, "dmax": np.array([d.max()], np.float32)}


def _fp8_k_major_words(x: np.ndarray) -> np.ndarray:
    """The K-major no-swizzle shared image of an fp8 (rows x 64) matrix, as uint32 words: byte (r, k) at
    (r % 8) * 16 + (r // 8) * 512 + k % 16 + (k // 16) * 128 (LBO 128 B, SBO 512 B)."""
    rows, k = x.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    offset = (r % 8) * 16 + (r // 8) * 512 + c % 16 + (c // 16) * 128
    img = np.zeros(rows * k, np.uint8)
    img[offset] = x.view(np.uint8)
    return img.view(np.uint32)


def _fp8_from_words(words: np.ndarray, rows: int) -> np.ndarray:
    import ml_dtypes

    r, c = np.meshgrid(np.arange(rows), np.arange(64), indexing="ij")
    offset = (r % 8) * 16 + (r // 8) * 512 + c % 16 + (c // 16) * 128
    return words.view(np.uint8)[offset].copy().view(ml_dtypes.float8_e4m3fn).astype(np.float64)


def mma_fp8(consts: dict, seed: int = 29) -> dict:
    """A (128 x 64) and B (64 x 64) float8_e4m3fn as the shared images tcgen05_fp8_encode_pre copies, D zero."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((64, 64)).astype(ml_dtypes.float8_e4m3fn)
    return {"a_img": _fp8_k_major_words(a), "b_img": _fp8_k_major_words(b), "D": np.zeros((128, 64), np.float32)}


def mma_fp8_reference(inputs: dict) -> dict:
    """Each K-step of 32 summed exactly, rounded to fp32 once per MMA (the model's documented numerics)."""
    a = _fp8_from_words(_arg(inputs, "a_img"), 128)
    b = _fp8_from_words(_arg(inputs, "b_img"), 64)
    first = (a[:, :32] @ b[:, :32].T).astype(np.float32)
    return {"D": (first.astype(np.float64) + a[:, 32:] @ b[:, 32:].T).astype(np.float32)}


def softmax_rows_reference(inputs: dict) -> dict:
    """dyn_pool_softmax_lowered: out = exp(x) / sum(exp(x)) per row of 128 (the sum in thread 0's order)."""
    e = np.exp(_arg(inputs, "x").astype(np.float32))
    return {"out": e / e.sum(axis=1, keepdims=True, dtype=np.float32)}
