"""`T.call_pure_extern(dtype, name, ...)` in TVM's lowered form: CUDA math functions are the TIRx math
intrinsics (same values as numpy), `__popc`/`__clz` the bit counts; any other external function stays
unmodeled and named."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "extern" / "extern_calls_lowered.py"
BIT_COUNTS = FIXTURE.with_name("bit_counts.py")
WORDS = np.array([0, 1, 3, 7, 0xFFFFFFFF, 0x80000000, 0x0F0F0F0F, 0xFFFF, *range(100, 124)], dtype=np.uint32)


def _inputs():
    x = np.linspace(-2, 2, 32, dtype=np.float32)
    return {"x_ptr": x, "out_ptr": np.zeros(32, np.float32), "bits_ptr": WORDS.copy(),
            "counts_ptr": np.zeros(64, np.int32)}


def _popc(values) -> np.ndarray:
    return np.array([bin(int(v)).count("1") for v in values], dtype=np.int64)


def _trailing_ones(values) -> np.ndarray:
    return np.array([len(bin(int(v))) - len(bin(int(v)).rstrip("1")) for v in values], dtype=np.int64)


def test_cuda_math_externs_compute_as_numpy():
    res = numsim.run(ir.parse_file(FIXTURE), _inputs())
    x = _inputs()["x_ptr"]
    np.testing.assert_allclose(res.outputs["out_ptr"], np.exp(x) + np.abs(x) * np.float32(0.5), rtol=1e-6)


def test_other_externs_stay_named_and_unmodeled():
    func = ir.parse_file(FIXTURE)
    names = [n.name for n in ir.walk(func.body) if isinstance(n, ir.Unsupported)]
    assert names == ["call_pure_extern __brev"]
    report = modelcheck.synccheck(func, _inputs())      # never reached on these inputs: review, named
    assert "unsupported_operation_not_reached" in {f.kind for f in report.findings}
    assert any("__brev" in f.message for f in report.findings)


def test_popc_and_clz_externs_count_bits():
    res = numsim.run(ir.parse_file(FIXTURE), _inputs())
    counts = res.outputs["counts_ptr"]
    np.testing.assert_array_equal(counts[:32], _trailing_ones(WORDS))
    np.testing.assert_array_equal(counts[32:], [32 - int(v).bit_length() for v in WORDS])


def test_popcount_and_clz_intrinsics_count_bits():
    wide = np.array([-1, 0, 1, 2**40 + 3, *range(-14, 14)], dtype=np.int64)
    res = numsim.run(ir.parse_file(BIT_COUNTS), {"words": WORDS.copy(), "wide": wide,
                                                   "counts": np.zeros((4, 32), np.int32)})
    counts = res.outputs["counts"]
    np.testing.assert_array_equal(counts[0], _popc(WORDS))
    np.testing.assert_array_equal(counts[1], _trailing_ones(WORDS))
    np.testing.assert_array_equal(counts[2], [32 - int(v).bit_length() for v in WORDS])
    np.testing.assert_array_equal(counts[3], _popc(wide.view(np.uint64)))


def test_bit_counts_round_trip_and_reject_floats():
    for path in (FIXTURE, BIT_COUNTS):
        func = ir.parse_file(path)
        assert ir.parse(ir.print_func(func)) == func
    bad = BIT_COUNTS.read_text().replace("T.popcount(w)", "T.popcount(T.float32(1))")
    with pytest.raises(ir.ParseError, match="T.popcount takes one integer"):
        ir.parse(bad)
