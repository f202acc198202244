"""Vector dtypes (`uint32x4` ...: TVM's DataType with lanes > 1): a buffer of them addresses 16-byte elements,
a vector value moves as its bytes, and arithmetic on one is kept as an unmodeled operation, named."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from ir import dtypes as dt
from modelcheck import numsim

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vector" / "uint32x4_view.py"


@pytest.mark.parametrize("name, bits, parts", [("uint32x4", 128, ("uint32", 4)), ("float16x8", 128, ("float16", 8)),
                                               ("int8x4", 32, ("int8", 4)), ("float32x2", 64, ("float32", 2))])
def test_vector_dtypes_are_known_with_their_width(name, bits, parts):
    assert dt.canonical(name) == name
    assert dt.bits(name) == bits
    assert dt.vector_parts(name) == parts
    assert dt.vector_parts("uint32") is None


def test_a_vector_view_moves_sixteen_bytes_per_element():
    func = ir.parse_file(FIX)
    assert ir.parse(ir.print_func(func)) == func
    src = np.arange(256, dtype=np.float32)
    res = numsim.run(func, {"src": src, "dst": np.zeros(256, np.float32)})
    assert res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["dst"], src)
    inputs = {"src": src, "dst": np.zeros(256, np.float32)}
    assert modelcheck.racecheck(func, inputs).verdict == "clean"


def test_arithmetic_on_a_vector_is_named_and_incomplete():
    text = FIX.read_text().replace("dv[tx + 32] = sv[tx + 32]", "dv[tx + 32] = sv[tx + 32] + sv[tx]")
    func = ir.parse(text, path=str(FIX))
    names = [n.name for n in ir.walk(func.body) if isinstance(n, ir.Unsupported)]
    assert names == ["'+' on a uint32x4 vector value"]
    report = modelcheck.synccheck(func, {"src": np.zeros(256, np.float32), "dst": np.zeros(256, np.float32)})
    assert report.verdict == "incomplete"
    assert any("uint32x4" in f.message for f in report.findings)


def test_unknown_vector_spellings_stay_errors():
    text = FIX.read_text().replace('"uint32x4", data=src.data', '"uint32x3", data=src.data')
    with pytest.raises(ir.ParseError, match="unknown dtype 'uint32x3'"):
        ir.parse(text)
