"""cvt between float32 and f16 / bf16 under .rn by one dtype cast (`ptx_convert._cast_rn`): the bits of the float64
route (`_to_float`) for every 16-bit pattern widened, and for float32 patterns (all exponents, ties, subnormals,
infinities, NaN) narrowed."""
import ml_dtypes
import numpy as np
import pytest

from modelcheck.numsim.ops import ptx_convert as CV

_NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("elem", ["float16", "bfloat16"])
def test_widening_every_half_pattern(elem):
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(_NP[elem]).reshape(-1, 1)
    got = CV._cast_rn(x, "float32")
    with np.errstate(all="ignore"):
        want = CV._to_float(x.astype(np.float64), "float32", "rn", False, False, True)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("elem", ["float16", "bfloat16"])
def test_narrowing_float32_patterns(elem):
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 1 << 32, size=200_000, dtype=np.uint64).astype(np.uint32)
    # ties and their neighbours at every exponent: low 13 (f16) / 16 (bf16) bits at half, half +- 1
    half = np.uint32(1 << (12 if elem == "float16" else 15))
    low = np.uint32(2 * int(half) - 1)
    ties = (bits & ~low) | (half + (rng.integers(-1, 2, size=bits.size).astype(np.int64)).astype(np.uint32))
    x = np.concatenate([bits, ties]).view(np.float32).reshape(-1, 1)
    with np.errstate(all="ignore"):
        want = CV._to_float(x.astype(np.float64), elem, "rn", False, False, True)
    got = CV._cast_rn(x, elem)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint16), want.view(np.uint16))
