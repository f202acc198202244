"""Narrow-precision tcgen05.mma operands: element bytes -> values, and block scale factors (no engine state).

Shared-memory images, one row of an operand at a time (`raw`: uint8, shape (rows, bytes)):
- E4M3 / E5M2: one byte per element (ml_dtypes float8_e4m3fn / float8_e5m2).
- E2M3 / E3M2 / E2M1 under kind::f8f6f4 and kind::mxf8f6f4: every 16 elements take one 16-byte chunk,
  packed from its first byte and padded at its end: E2M1 element e of a chunk in bits [4e, 4e + 4) of
  bytes 0-7 (the `b4x16_p64` format), E2M3 / E3M2 element e in bits [6e, 6e + 6) of bytes 0-11
  (`b6x16_p32`).  Model choice: the packed-then-padded order follows the names of these PTX formats
  and of CUTLASS's `16U4_ALIGN16B` / `16U6_ALIGN16B` tensor-map types; the figures are not in the
  cited text (docs/semantics.md#tcgen05-and-tmem).
- E2M1 under kind::mxf4 / kind::mxf4nvf4: two elements per byte, element k in the low nibble of byte
  k // 2 when k is even, the high nibble when odd (`float4_e2m1fn_x2`).
Scale factors (one byte each): UE8M0 is 2^(e - 127) (0xFF NaN), ml_dtypes float8_e8m0fnu; UE4M3 is
E4M3 without a sign (the top bit is ignored).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

_BYTE_TYPES = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
_SUB_BYTE = {"float6_e2m3fn": (ml_dtypes.float6_e2m3fn, 6), "float6_e3m2fn": (ml_dtypes.float6_e3m2fn, 6),
             "float4_e2m1fn": (ml_dtypes.float4_e2m1fn, 4)}


def row_bytes(dtype: str, k: int) -> int:
    """Bytes of one K-row of `k` elements in shared memory."""
    return k // 2 if dtype == "float4_e2m1fn_x2" else k


def _codes(raw: np.ndarray, bits: int, k: int) -> np.ndarray:
    """Element codes of padded chunks: (rows, k) uint8."""
    rows = raw.shape[0]
    chunks = raw.reshape(rows, k // 16, 16).astype(np.uint64)
    # the packed bits of each chunk as one little-endian integer (at most 96 bits: two 64-bit halves)
    lo = (chunks[:, :, :8] << (8 * np.arange(8, dtype=np.uint64))).sum(axis=2, dtype=np.uint64)
    hi = (chunks[:, :, 8:12] << (8 * np.arange(4, dtype=np.uint64))).sum(axis=2, dtype=np.uint64)
    out = np.empty((rows, k // 16, 16), dtype=np.uint8)
    mask = (1 << bits) - 1
    for e in range(16):
        start = bits * e
        if start + bits <= 64:
            v = lo >> np.uint64(start)
        elif start >= 64:
            v = hi >> np.uint64(start - 64)
        else:            # an element across the two halves
            v = (lo >> np.uint64(start)) | (hi << np.uint64(64 - start))
        out[:, :, e] = (v & np.uint64(mask)).astype(np.uint8)
    return out.reshape(rows, k)


_TABLES: dict = {}


def _table(np_t) -> np.ndarray:
    """float64 value of every byte code of `np_t` (the same conversion, done once: decoding is a table look-up)."""
    t = _TABLES.get(np_t)
    if t is None:
        t = _TABLES[np_t] = np.arange(256, dtype=np.uint8).view(np_t).astype(np.float64)
    return t


def element_type(dtype: str):
    """The ml_dtypes type of one element of a narrow operand type."""
    if dtype in _BYTE_TYPES:
        return _BYTE_TYPES[dtype]
    return ml_dtypes.float4_e2m1fn if dtype == "float4_e2m1fn_x2" else _SUB_BYTE[dtype][0]


def values(raw: np.ndarray, dtype: str, k: int) -> np.ndarray:
    """The float64 (rows, k) matrix of a narrow operand's shared-memory rows."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if dtype in _BYTE_TYPES:
        return _table(_BYTE_TYPES[dtype]).take(raw)
    if dtype == "float4_e2m1fn_x2":
        codes = np.stack([raw & 0xF, raw >> 4], axis=2).reshape(raw.shape[0], k)
        return _table(ml_dtypes.float4_e2m1fn).take(codes)
    np_t, bits = _SUB_BYTE[dtype]
    return _table(np_t).take(_codes(raw, bits, k))


def scales(codes: np.ndarray, sf_dtype: str) -> np.ndarray:
    """Scale-factor bytes -> float64 factors."""
    codes = np.asarray(codes, dtype=np.uint8)
    if sf_dtype == "float8_e8m0fnu":
        return _table(ml_dtypes.float8_e8m0fnu).take(codes)
    return _table(ml_dtypes.float8_e4m3fn).take(codes & np.uint8(0x7F))
