"""The hand-optimized float path (`float_arith.float_op`, `ptx_convert._odd64`) agrees bit for bit with its
readable form: broadcast the operands, widen to float64, TwoSum the exact result, round to odd at 53 bits
with the residual, then round once to the target."""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.numsim.ops import ptx_convert as CV
from modelcheck.numsim.ops import float_arith as FLT

_NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _odd64_readable(x, err):
    inexact = np.isfinite(x) & np.isfinite(err) & (err != 0)
    even = (x.view(np.uint64) & np.uint64(1)) == 0
    return np.where(inexact & even, np.nextafter(x, np.where(err > 0, np.inf, -np.inf)), x)


def _readable(head, vals, elem, mode, flags):
    if "ftz" in flags:
        vals = [np.where(np.abs(v) < FLT.F32_TINY, np.copysign(np.float32(0), v), v).astype(v.dtype)
                if v.dtype == np.float32 else v for v in vals]
    xs = [np.asarray(v).astype(np.float64) for v in np.broadcast_arrays(*vals)]
    with np.errstate(all="ignore"):
        if head == "mul":
            x, err = xs[0] * xs[1], np.zeros_like(xs[0])
        elif head == "fma":
            x, err = FLT.two_sum(xs[0] * xs[1], xs[2])
        else:
            x, err = FLT.two_sum(xs[0], xs[1] if head == "add" else -xs[1])
        if mode == "rn":
            odd = _odd64_readable(x, err)
            r = odd.astype(np.float32) if elem == "float32" else CV._odd32(odd).astype(_NP[elem])
        else:
            r = CV.round_float(x, err, elem, mode)
        if "sat" in flags:
            r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
        if "ftz" in flags and r.dtype == np.float32:
            r = np.where(np.abs(r) < FLT.F32_TINY, np.copysign(np.float32(0), r), r).astype(np.float32)
        r = FLT.canonical_nan(r)
        if mode == "rm" and head != "mul":
            terms = (xs[0] * xs[1], xs[2]) if head == "fma" else (xs[0], xs[1] if head == "add" else -xs[1])
            both_pos0 = (terms[0] == 0) & (terms[1] == 0) & ~np.signbit(terms[0]) & ~np.signbit(terms[1])
            r = np.where((x == 0) & (err == 0) & ~both_pos0, r.dtype.type(-0.0), r).astype(r.dtype)
    return r


def _values(rng, elem, shape):
    """Random values of `elem` with zeros, subnormals, infinities, NaN, ties and near-overflow mixed in."""
    bits = rng.integers(0, 1 << (8 * np.dtype(_NP[elem]).itemsize), size=shape, dtype=np.uint64)
    u = {4: np.uint32, 2: np.uint16}[np.dtype(_NP[elem]).itemsize]
    with np.errstate(all="ignore"):
        raw = bits.astype(u).view(_NP[elem]).astype(np.float64)
        pick = rng.integers(0, 4, size=shape)
        nice = rng.standard_normal(shape) * 2.0 ** rng.integers(-30, 30, size=shape)
        return np.where(pick == 0, raw, nice).astype(_NP[elem])


@pytest.mark.parametrize("elem", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("head", ["add", "sub", "mul", "fma"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_float_op_agrees_with_its_readable_form(elem, head, mode):
    rng = np.random.default_rng(zlib.crc32(f"{elem} {head} {mode}".encode()))
    n = 3 if head == "fma" else 2
    for flags in (frozenset(), frozenset({"ftz"}), frozenset({"sat"})):
        for shapes in ([(32, 1)] * n, [(1, 1)] + [(32, 1)] * (n - 1), [(32, 2)] * n):
            vals = [_values(rng, elem, s) for s in shapes]
            got = FLT.float_op(head, vals, elem, mode, flags)
            want = _readable(head, vals, elem, mode, flags)
            assert got.shape == want.shape and got.dtype == want.dtype
            u = {4: np.uint32, 2: np.uint16}[got.dtype.itemsize]
            assert np.array_equal(got.view(u), want.view(u)), (elem, head, mode, flags, shapes)


@pytest.mark.parametrize("elem", ["float16", "bfloat16"])
def test_half_products_in_float32_are_the_correctly_rounded_ones(elem):
    """mul.rn of f16/bf16 pairs through `_half_product` (float32, one cast) gives the float64 route's bits: random
    pairs, and bf16 products around float32's smallest normal (which the fast path must leave to float64)."""
    rng = np.random.default_rng(zlib.crc32(elem.encode()))
    taken = 0
    for k in range(400):
        shape = (32, 2)
        if k % 4 == 0:
            e = rng.integers(-90, -36, size=shape)
            a = (rng.standard_normal(shape) * 2.0 ** e).astype(_NP[elem])
            b = (rng.standard_normal(shape) * 2.0 ** (-126 - e + rng.integers(-12, 12, size=shape))).astype(_NP[elem])
        else:
            a, b = _values(rng, elem, shape), _values(rng, elem, shape)
        taken += FLT._half_product(a, b, elem) is not None
        got = FLT.float_op("mul", [a, b], elem, "rn", frozenset())
        want = _readable("mul", [a, b], elem, "rn", frozenset())
        assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), (elem, k)
    assert taken > 50          # (random bit patterns are often NaN: those take the float64 route)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.sampled_from(["float16", "bfloat16"]))
def test_half_product_bits(x, y, elem):
    a = np.array([[x, y]], np.uint16).view(_NP[elem])
    b = np.array([[y, x ^ 0x8001]], np.uint16).view(_NP[elem])
    got = FLT.float_op("mul", [a, b], elem, "rn", frozenset())
    want = _readable("mul", [a, b], elem, "rn", frozenset())
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_fma_f32_midpoints_and_broadcast_operands():
    """`_fma_f32` gives the readable form's bits where a product that is a float32 midpoint meets a tiny addend (the
    float64 sum lands on the midpoint: a cast alone would round it to even, the wrong way), declines results below
    2^-126, and keeps numpy's broadcasting of operands of different shapes (a uniform register beside lane vectors)."""
    a = np.array([[1 + 2.0 ** -12, -(1 + 2.0 ** -12)]], np.float32)
    for tiny in (2.0 ** -80, -2.0 ** -80, 0.0):
        c = np.array([[tiny, -tiny]], np.float32)
        got = FLT.float_op("fma", [a, a, c], "float32", "rn", frozenset())
        want = _readable("fma", [a, a, c], "float32", "rn", frozenset())
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), tiny
    small = np.array([[2.0 ** -70, 3 * 2.0 ** -70]], np.float32)
    assert FLT._fma_f32([small, small, np.zeros((1, 2), np.float32)], frozenset()) is None
    rng = np.random.default_rng(7)
    taken = 0
    for k in range(300):
        shapes = [(32, 2), (1, 2), (32, 2)] if k % 2 else [(32, 1)] * 3
        vals = [_values(rng, "float32", s) for s in shapes]
        taken += FLT._fma_f32(vals, frozenset()) is not None
        got = FLT.float_op("fma", vals, "float32", "rn", frozenset())
        want = _readable("fma", vals, "float32", "rn", frozenset())
        assert got.shape == want.shape and np.array_equal(got.view(np.uint32), want.view(np.uint32)), k
    assert taken > 30


def test_fma_f32_in_float64_rounds_once():
    """fma.rn.f32 through `_fma_f32` (one float64 sum, one cast): its residual and round to odd where the float64
    sum lands on a float32 midpoint, float_op's route below float32's normal range, and float_op's bits."""
    # (1 + 2^-23) + 2^-24 (1 + 2^-23)(1 - 2^-23) is 2^-70 below the midpoint 1 + 2^-23 + 2^-24, which its float64
    # sum lands on (ties to even would give 1 + 2^-22); the correctly rounded result is 1 + 2^-23
    a, b, c = (np.array([[v]], np.float32) for v in (2.0 ** -24 * (1 + 2.0 ** -23), 1 - 2.0 ** -23, 1 + 2.0 ** -23))
    assert FLT._fma_f32([a, b, c], frozenset()) == np.float32(1 + 2.0 ** -23)
    # an exact midpoint (25 bits): ties to even
    a, b, c = (np.array([[v]], np.float32) for v in (2.0 ** -24, 1.0, 1 + 2.0 ** -23))
    assert FLT._fma_f32([a, b, c], frozenset()) == np.float32(1 + 2.0 ** -22)
    # 2^-126 - 2^-150: below float32's normal range, refused (with .ftz: the flush follows the rounding)
    a, b, c = (np.array([[v]], np.float32) for v in (2.0 ** -126, 1 - 2.0 ** -24, 0.0))
    for flags in (frozenset(), frozenset({"ftz"})):
        assert FLT._fma_f32([a, b, c], flags) is None
        want = _readable("fma", [a, b, c], "float32", "rn", flags)
        assert FLT.float_op("fma", [a, b, c], "float32", "rn", flags).view(np.uint32) == want.view(np.uint32)
    rng = np.random.default_rng(7)
    taken = 0
    for k in range(200):
        vals = [rng.standard_normal((64, 1)).astype(np.float32) for _ in range(3)]
        if k % 2:
            vals = [_values(rng, "float32", (64, 1)) for _ in range(3)]
        for flags in (frozenset(), frozenset({"ftz"})):
            taken += FLT._fma_f32(vals, flags) is not None
            got = FLT.float_op("fma", vals, "float32", "rn", flags)
            want = _readable("fma", vals, "float32", "rn", flags)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (k, flags)
    assert taken >= 150
