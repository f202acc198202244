"""mov.b128 (PTX ISA 9.7.9.10): copy, pack of two b64 halves (first operand the low half) and unpack."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from ir import ops
from modelcheck import numsim
from modelcheck.numsim.ops.ptx_math import _b128

FIX = Path(__file__).parents[3] / "fixtures" / "ops2" / "mov_b128.py"


@pytest.mark.parametrize("dtypes, supported", [(("uint128", "uint64", "uint64"), True),
                                               (("uint64", "uint64", "uint128"), True),
                                               (("uint128", "uint128"), True),
                                               (("uint128", "uint32", "uint32"), False),
                                               (("uint64", "uint64", "uint64"), False)])
def test_mov_b128_forms(dtypes, supported):
    info = ops.classify("mov.b128", dtypes)
    assert info.supported is supported
    if not supported:
        assert "b128" in info.why_unsupported


def test_pack_copy_unpack_per_lane_matches_numpy():
    kernel = modelcheck.load(FIX)
    x = np.random.default_rng(7).integers(0, 2**64 - 1, 64, dtype=np.uint64)
    res = numsim.run(kernel.func, {"x": x, "out": np.zeros(64, np.uint64)})
    assert res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["out"], x.reshape(32, 2)[:, ::-1].reshape(-1))
    assert ir.parse(ir.print_func(kernel.func)) == kernel.func


def test_uniform_pack_and_byte_order():
    kernel = modelcheck.load(FIX, UNIFORM=1)
    res = numsim.run(kernel.func, {"x": np.zeros(64, np.uint64), "out": np.zeros(64, np.uint64)})
    np.testing.assert_array_equal(res.outputs["out"][:2], [0xFEDCBA9876543210, 0x0123456789ABCDEF])
    # the low half is the first 8 bytes of the register (little-endian, as ld.b128 fills one)
    reg = np.frombuffer(bytes.fromhex("efcdab8967452301") + bytes(8), dtype="V16")
    assert _b128(reg).tolist() == [[0x0123456789ABCDEF, 0]]
