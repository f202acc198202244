"""Narrow-precision tcgen05.mma in NumSim: kind::f8f6f4 and the block-scaled kinds against numpy.

The operand images are packed here from the element codes (one byte per fp8 element; 16 fp6/fp4
elements packed from the start of each 16-byte chunk under the f8f6f4 kinds; two fp4 per byte under
mxf4/mxf4nvf4) and the scale factors placed in the TMEM words the kernel stores, as docs/semantics.md
describes (row i of A: lane i, column i // 32; column j of B: lane 32q + j % 32, column j // 32 in
every lane quarter q; byte = scale-factor id + s).  The reference decodes the codes with ml_dtypes
and sums in float64, rounding once to float32.
"""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "numsim" / "mma_narrow.py"
CODE = {"float8_e4m3fn": 0, "float8_e5m2": 1, "float6_e2m3fn": 3, "float6_e3m2fn": 4, "float4_e2m1fn": 5}
BITS = {"float8_e4m3fn": 8, "float8_e5m2": 8, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4}


def random_codes(rng, dtype: str, shape) -> np.ndarray:
    """Element codes of finite values (no NaN/Inf codes) of `dtype`."""
    bits = BITS[dtype]
    codes = rng.integers(0, 2 ** bits, size=shape).astype(np.uint8)
    vals = codes.view(getattr(ml_dtypes, dtype)).astype(np.float64) if bits == 8 else None
    if vals is not None:
        bad = ~np.isfinite(vals) | (np.abs(vals) > 64)
        codes[bad] = 0x38 if dtype == "float8_e4m3fn" else 0x3C       # 1.0
    return codes


def decode(codes: np.ndarray, dtype: str) -> np.ndarray:
    return codes.view(getattr(ml_dtypes, dtype)).astype(np.float64)


def row_image(codes: np.ndarray, dtype: str, packed_pairs: bool = False) -> np.ndarray:
    """The 32 bytes of each row: fp8 as is, fp6/fp4 packed per 16-element chunk, or fp4 two per byte."""
    rows, k = codes.shape
    if BITS[dtype] == 8:
        return codes.copy()
    if packed_pairs:
        return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    out = np.zeros((rows, 32), np.uint8)
    bits = BITS[dtype]
    for chunk in range(k // 16):
        for r in range(rows):
            acc = 0
            for e in range(16):
                acc |= int(codes[r, chunk * 16 + e]) << (bits * e)
            out[r, chunk * 16:chunk * 16 + 16] = np.frombuffer(acc.to_bytes(16, "little"), np.uint8)
    return out


def k_major_words(rows_bytes: np.ndarray) -> np.ndarray:
    """Core-matrix image (8 rows x 16 bytes; LBO 128 B, SBO 256 B) of (rows, 32) bytes, as uint32 words."""
    rows = rows_bytes.shape[0]
    r, c = np.meshgrid(np.arange(rows), np.arange(32), indexing="ij")
    img = np.zeros(rows * 32, np.uint8)
    img[(r % 8) * 16 + (r // 8) * 256 + c % 16 + (c // 16) * 128] = rows_bytes
    return img.view(np.uint32)


def idesc(m, n, a_fmt, b_fmt, *, d=1, scaled=False, sf=1, a_id=0, b_id=0, neg_a=0):
    v = a_fmt << 7 | b_fmt << 10 | neg_a << 13 | (n >> 3) << 17 | (m >> 4) << 24
    return v | (sf << 23 | a_id << 29 | b_id << 4 if scaled else d << 4)


def sf_words(scales_a: np.ndarray, scales_b: np.ndarray, a_id: int, b_id: int):
    """TMEM words of the scale factors: sfa (128, 4) and sfb (128, 2) as the kernel stores them per lane."""
    sfa = np.zeros((128, 4), np.uint32)
    for i in range(128):
        for s in range(scales_a.shape[1]):
            sfa[i, i // 32] |= np.uint32(int(scales_a[i, s]) << (8 * (a_id + s)))
    sfb = np.zeros((128, 2), np.uint32)
    for q in range(4):
        for j in range(scales_b.shape[0]):
            for s in range(scales_b.shape[1]):
                sfb[32 * q + j % 32, j // 32] |= np.uint32(int(scales_b[j, s]) << (8 * (b_id + s)))
    return sfa, sfb


def run(mode: int, value: int, a_img, b_img, sfa=None, sfb=None):
    kernel = modelcheck.load(FIX, MODE=mode, IDESC=value)
    inputs = {"a_img": a_img, "b_img": b_img, "sfa": np.zeros((128, 4), np.uint32) if sfa is None else sfa,
              "sfb": np.zeros((128, 2), np.uint32) if sfb is None else sfb, "D": np.zeros((128, 64), np.float32)}
    res = numsim.run(kernel.func, inputs)
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    return res.outputs["D"]


@pytest.mark.parametrize("a_t, b_t", [("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e4m3fn"),
                                      ("float6_e2m3fn", "float6_e3m2fn"), ("float4_e2m1fn", "float8_e5m2"),
                                      ("float6_e3m2fn", "float4_e2m1fn")])
def test_f8f6f4_matches_numpy(a_t, b_t):
    rng = np.random.default_rng(5)
    a, b = random_codes(rng, a_t, (128, 32)), random_codes(rng, b_t, (64, 32))
    got = run(0, idesc(128, 64, CODE[a_t], CODE[b_t]), k_major_words(row_image(a, a_t)),
              k_major_words(row_image(b, b_t)))
    want = (decode(a, a_t) @ decode(b, b_t).T).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_f8f6f4_negate_a_and_f16_accumulator():
    rng = np.random.default_rng(6)
    a, b = random_codes(rng, "float8_e4m3fn", (128, 32)), random_codes(rng, "float8_e4m3fn", (64, 32))
    got = run(0, idesc(128, 64, 0, 0, neg_a=1), k_major_words(a), k_major_words(b))
    np.testing.assert_array_equal(got, (-decode(a, "float8_e4m3fn") @ decode(b, "float8_e4m3fn").T)
                                  .astype(np.float32))


@pytest.mark.parametrize("mode, kind, a_t, b_t, sf_t, vec, a_id, b_id", [
    (1, "mxf8f6f4", "float8_e4m3fn", "float6_e2m3fn", "float8_e8m0fnu", 32, 2, 1),
    (1, "mxf8f6f4", "float4_e2m1fn", "float8_e5m2", "float8_e8m0fnu", 32, 0, 3),
    (2, "mxf4", "float4_e2m1fn", "float4_e2m1fn", "float8_e8m0fnu", 32, 2, 0),
    (3, "mxf4nvf4", "float4_e2m1fn", "float4_e2m1fn", "float8_e4m3fn", 16, 0, 0),
    (4, "mxf4nvf4", "float4_e2m1fn", "float4_e2m1fn", "float8_e4m3fn", 16, 0, 0),
    (3, "mxf4nvf4", "float4_e2m1fn", "float4_e2m1fn", "float8_e8m0fnu", 16, 0, 0),     # UE8M0 per 16 (NVF4)
])
def test_block_scaled_matches_numpy(mode, kind, a_t, b_t, sf_t, vec, a_id, b_id):
    rng = np.random.default_rng(mode + a_id)
    k = 32 if kind == "mxf8f6f4" else 64
    a, b = random_codes(rng, a_t, (128, k)), random_codes(rng, b_t, (64, k))
    nsf = k // vec
    if sf_t == "float8_e8m0fnu":
        sa, sb = rng.integers(120, 135, (128, nsf)), rng.integers(120, 135, (64, nsf))
    else:      # positive E4M3 codes of normal values
        sa, sb = rng.integers(0x08, 0x70, (128, nsf)), rng.integers(0x08, 0x70, (64, nsf))
    sfa, sfb = sf_words(sa, sb, a_id, b_id)
    pairs = kind != "mxf8f6f4"
    fa, fb = (CODE[a_t], CODE[b_t]) if not pairs else (1, 1)
    value = idesc(128, 64, fa, fb, scaled=True, sf=0 if sf_t == "float8_e4m3fn" else 1, a_id=a_id, b_id=b_id)
    got = run(mode, value, k_major_words(row_image(a, a_t, pairs)), k_major_words(row_image(b, b_t, pairs)),
              sfa, sfb)
    scale_a = np.repeat(decode(sa.astype(np.uint8), sf_t), vec, axis=1)
    scale_b = np.repeat(decode(sb.astype(np.uint8), sf_t), vec, axis=1)
    want = ((decode(a, a_t) * scale_a) @ (decode(b, b_t) * scale_b).T).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode, value, field", [
    (1, idesc(128, 64, 0, 0, scaled=True, sf=0), "sf_type"),        # mxf8f6f4 takes UE8M0 only
    (2, idesc(128, 64, 1, 1, scaled=True, sf=0), "sf_type"),        # mxf4 takes UE8M0 only
    (2, idesc(128, 64, 1, 1, scaled=True, sf=1, a_id=1), "a_sf_id"),  # 2X: ids 0 or 2
    (1, idesc(64, 64, 0, 0, scaled=True), "m"),
    (0, idesc(128, 64, 3, 0) | 1 << 15, "transpose_a"),             # fp6 must be K-major
    (0, idesc(128, 64, 2, 0), "a_type"),
])
def test_invalid_narrow_descriptors_name_the_field(mode, value, field):
    kernel = modelcheck.load(FIX, MODE=mode, IDESC=value)
    zeros = {"a_img": np.zeros(1024, np.uint32), "b_img": np.zeros(512, np.uint32),
             "sfa": np.zeros((128, 4), np.uint32), "sfb": np.zeros((128, 2), np.uint32),
             "D": np.zeros((128, 64), np.float32)}
    res = numsim.run(kernel.func, zeros)
    assert res.verdict == "error"
    diag = res.diagnostics[0]
    assert diag.kind == "invalid_descriptor" and diag.details["field"] == field, diag


def test_block_scaled_mma_records_its_scale_factor_reads():
    """Racecheck sees the TMEM reads of the scale factors: the kernel is clean, and its reads are ordered."""
    kernel = modelcheck.load(FIX, MODE=2, IDESC=idesc(128, 64, 1, 1, scaled=True))
    report = modelcheck.check(kernel)
    assert report.verdict == "clean", report.format()
