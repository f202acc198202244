"""The in-kernel tcgen05 descriptor encoders (numsim/encoders.py, ops/encode.py).

Each value is checked three ways: against the bit formula written out here from TVM 0.27's device helpers
(tvm/backend/cuda/cpp/descriptors.py with the bitfields of codegen/header.py) and the PTX descriptor tables
(reference/ptx-encodings.md §4-5); against values apache-tvm 0.27's own compile-time folds
(`encode_instr_descriptor_dense_uint32`, `..._block_scaled_uint32`, `encode_smem_descriptor_base_uint64`)
returned when run in that package's interpreter; and through the decoders of numsim/descriptors.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim import encoders as E
from modelcheck.numsim.descriptors import (BlockScaledInstrDescriptor, InstrDescriptor, SmemDescriptor,
                                           wgmma_descriptor)

FIX = Path(__file__).parents[2] / "fixtures" / "numsim"


def smem_formula(addr, ldo, sdo, swizzle):
    layout = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}[swizzle]
    return (addr >> 4) % 2**14 + (ldo % 2**14) * 2**16 + (sdo % 2**14) * 2**32 + 2**46 + layout * 2**61


def dense_formula(m, n, d, a, b, ta=0, tb=0, na=0, nb=0, sat=0, sparse=0):
    return (sparse * 4 + sat * 8 + d * 16 + a * 128 + b * 1024 + na * 2**13 + nb * 2**14 + ta * 2**15 + tb * 2**16
            + (n // 8) * 2**17 + (m // 16) * 2**24)


# (arguments of the printed call after desc, value TVM 0.27's fold returns)
TVM_DENSE = [
    (("float32", "float8_e4m3fn", "float8_e4m3fn", 128, 128, 32, False, False, 1, False, False, False, False),
     0x08200010),
    (("float32", "float8_e5m2", "float6_e2m3fn", 128, 64, 32, False, False, 1, True, False, False, False),
     0x08102C90),
    (("float16", "float4_e2m1fn", "float6_e3m2fn", 64, 256, 32, False, False, 1, False, False, False, False),
     0x04401280),
    (("float32", "bfloat16", "bfloat16", 128, 192, 16, False, True, 1, False, False, False, False), 0x08310490),
]
TVM_SCALED = [
    (("float32", "float4_e2m1fn", "float4_e2m1fn", "float8_e8m0fnu", "float8_e8m0fnu", 0, 0, 128, 128, 64, False,
      False, 1, False, False, False), 0x08A00480),
    (("float32", "float4_e2m1fn", "float4_e2m1fn", "float8_e4m3fn", "float8_e4m3fn", 0, 0, 128, 64, 64, False,
      False, 1, False, False, False), 0x08100480),
    (("float32", "float8_e4m3fn", "float6_e3m2fn", "float8_e8m0fnu", "float8_e8m0fnu", 0, 0, 128, 256, 32, True,
      False, 1, False, False, False), 0x08C09000),
]
TVM_SMEM_BASE = [((8, 32, 0), 0x0000402000080000), ((0, 64, 3), 0x4000404000000000),
                 ((512, 64, 3), 0x4000404002000000), ((64, 8, 0), 0x0000400800400000),
                 ((1, 2, 4), 0x2000400200010000)]


def _named(op, values):
    return dict(zip(E.CALLS[op].args, values))


@pytest.mark.parametrize("args, tvm", TVM_DENSE)
def test_dense_instr_descriptor_equals_tvm_and_the_formula(args, tvm):
    value = E.encode("cuda.tcgen05.encode_instr_descriptor", _named("cuda.tcgen05.encode_instr_descriptor", args))
    d, a, b, m, n, _k, ta, tb, _cta, na, nb, sat, sp = args
    assert value == tvm == dense_formula(m, n, E.FORMAT[d], E.FORMAT[a], E.FORMAT[b], ta, tb, na, nb, sat, sp)
    back = InstrDescriptor.decode(value)
    assert (back.m, back.n, back.a_type, back.b_type, back.transpose_b, back.negate_a) == \
        (m, n, E.FORMAT[a], E.FORMAT[b], int(tb), int(na))


@pytest.mark.parametrize("args, tvm", TVM_SCALED)
def test_block_scaled_instr_descriptor_equals_tvm_and_the_formula(args, tvm):
    op = "cuda.tcgen05.encode_instr_descriptor_block_scaled"
    value = E.encode(op, _named(op, args))
    d, a, b, sfa, _sfb, _sa, _sb, m, n, k, ta, tb, _cta, na, nb, sp = args
    mx = a != "float4_e2m1fn" or b != "float4_e2m1fn"
    fa, fb = (E.FORMAT[a], E.FORMAT[b]) if mx else (1, 1)
    assert value == tvm == dense_formula(m, n, 0, fa, fb, ta, tb, na, nb) + E.SF_FORMAT[sfa] * 2**23 + (k == 96) * 2**31
    back = BlockScaledInstrDescriptor.decode(value)
    assert (back.m, back.n, back.a_type, back.b_type, back.sf_type, back.a_sf_id, back.b_sf_id) == \
        (m, n, fa, fb, E.SF_FORMAT[sfa], 0, 0)


@pytest.mark.parametrize("args, tvm", TVM_SMEM_BASE)
@pytest.mark.parametrize("addr", [0, 0x400, 0x12340, 0x3FFF0])
def test_matrix_descriptor_equals_tvm_and_the_formula(args, tvm, addr):
    value = E.matrix_descriptor(addr, *args)
    assert value == tvm | (addr >> 4) == smem_formula(addr, *args)
    back = SmemDescriptor.decode(value)
    assert (back.start, back.lbo, back.sbo, back.version, back.base_offset, back.lbo_mode) == \
        (addr, (args[0] % 2**14) * 16, (args[1] % 2**14) * 16, 1, 0, 0)
    assert back.layout == {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}[args[2]]


@pytest.mark.parametrize("swizzle, layout", [(0, 0), (1, 3), (2, 2), (3, 1)])
@pytest.mark.parametrize("addr, ldo, sdo", [(0x400, 1, 64), (0x3FFF0, 2**14 + 3, 16), (0x12340, 8, 0)])
def test_wgmma_matrix_descriptor_fills_the_hopper_fields(addr, ldo, sdo, swizzle, layout):
    """GmmaDescriptor (TVM codegen/header.py; PTX 9.7.15.5.1.2.2): no version bits, the layout in 62-63."""
    value = E.encode("cuda.wgmma.encode_matrix_descriptor", {"addr": addr, "ldo": ldo, "sdo": sdo, "swizzle": swizzle})
    assert value == (addr >> 4) % 2**14 + (ldo % 2**14) * 2**16 + (sdo % 2**14) * 2**32 + layout * 2**62
    back = wgmma_descriptor(value)
    assert (back.start, back.lbo, back.sbo) == (addr, (ldo % 2**14) * 16, (sdo % 2**14) * 16)
    assert back.layout == {0: 0, 1: 6, 2: 4, 3: 2}[swizzle]      # as the UMMA layout of the same swizzle


@pytest.mark.parametrize("desc, sf", [(0x08A00480, 3), (0xFFFFFFFF, 0), (0x08A00480 | 0x60000030, 1), (0, 7)])
def test_runtime_instr_desc_patches_both_scale_factor_ids(desc, sf):
    want = ((desc & ~0x60000030) | (sf << 29) | (sf << 4)) % 2**32    # 32-bit C arithmetic
    assert E.runtime_instr_desc(desc, sf) == want
    if sf < 4:
        back = BlockScaledInstrDescriptor.decode(want)
        assert back.a_sf_id == back.b_sf_id == sf


@pytest.mark.parametrize("op, change, field", [
    ("cuda.tcgen05.encode_instr_descriptor", {"a_dtype": "int8"}, "dtype"),
    ("cuda.tcgen05.encode_instr_descriptor", {"M": 96}, "M"),
    ("cuda.tcgen05.encode_instr_descriptor", {"N": 72}, "N"),           # M = 128 needs N % 16 == 0
    ("cuda.tcgen05.encode_instr_descriptor", {"K": 16}, "K"),
    ("cuda.tcgen05.encode_instr_descriptor", {"a_dtype": "float4_e2m1fn", "trans_a": True}, "trans_a"),
    ("cuda.tcgen05.encode_instr_descriptor", {"sat_d": True}, "sat_d"),
    ("cuda.tcgen05.encode_instr_descriptor", {"n_cta_groups": 3}, "n_cta_groups"),
    ("cuda.tcgen05.encode_instr_descriptor_block_scaled", {"sfa_dtype": "float8_e4m3fn"}, "dtype"),
    ("cuda.tcgen05.encode_instr_descriptor_block_scaled", {"M": 64}, "M"),
    ("cuda.tcgen05.encode_matrix_descriptor", {"swizzle": 5}, "swizzle"),
    ("cuda.wgmma.encode_matrix_descriptor", {"swizzle": 4}, "swizzle"),
])
def test_rejected_arguments_name_the_field(op, change, field):
    base = {"cuda.tcgen05.encode_instr_descriptor": TVM_DENSE[0][0],
            "cuda.tcgen05.encode_instr_descriptor_block_scaled": TVM_SCALED[0][0],
            "cuda.tcgen05.encode_matrix_descriptor": (0x400, 8, 32, 0),
            "cuda.wgmma.encode_matrix_descriptor": (0x400, 8, 32, 0)}[op]
    if op == "cuda.tcgen05.encode_instr_descriptor_block_scaled" and "sfa_dtype" in change:
        base = ("float32", "float8_e4m3fn", "float8_e4m3fn") + base[3:]       # mxf8f6f4 takes UE8M0 only
    args = {**_named(op, base), **change}
    with pytest.raises(E.EncodeError) as err:
        E.encode(op, args)
    assert err.value.field == field


def test_kernel_encoders_write_through_the_pointer():
    kernel = modelcheck.load(FIX / "encode_descriptors.py")
    res = numsim.run(kernel.func, {"out": np.zeros(8, np.uint32)})
    assert res.verdict == "clean", res.diagnostics
    out = res.outputs["out"]
    smem = (int(out[2]) << 32) | int(out[1])
    assert out[0] == 0x08200010
    start = (smem & 0x3FFF) << 4
    assert smem == smem_formula(start, 0, 64, 3) and start % 1024 == 0 and start >= 1024   # buffer_1[1, 0]
    assert out[3] == (0x08A00480 | (2 << 29) | (2 << 4))          # encoded block-scaled, then patched sf_id 2
    assert out[4] == 0x08100480


def test_kernel_encoder_with_a_rejected_field_names_op_line_and_field():
    kernel = modelcheck.load(FIX / "encode_descriptors.py", SWIZZLE=7)
    with pytest.raises(numsim.UnsupportedTIRxError, match="swizzle 7") as err:
        numsim.run(kernel.func, {"out": np.zeros(8, np.uint32)})
    assert "encode_matrix_descriptor" in str(err.value) and err.value.span.line == 22
