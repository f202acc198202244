"""Which PTX register-arithmetic forms the registry classifies as modeled (ir/ops/arith_forms.py)."""
from __future__ import annotations

import pytest

from ir import ops
from ir.ops import arith_forms as AF

F, U16, U32, U64 = "float32", "uint16", "uint32", "uint64"


@pytest.mark.parametrize("op, dtypes", [
    ("mov.b64", (U64, F, F)), ("mov.b64", (F, F, U64)), ("mov.b32", (U32, U16, U16)), ("mov.b32", ("int32", F)),
    ("cvt.rn.bf16x2.f32", (U32, F, F)), ("ex2.approx.ftz.f32", (F, F)), ("fma.rn.f32x2", (U64,) * 4),
    ("mul.rz.ftz.f32x2", (U64,) * 3), ("add.rn.f32.bf16", (F, U16, F)), ("cvt.f32.bf16", (F, U16)),
    ("max.NaN.f32", (F,) * 4), ("setp.lt.s32", (U32, "int32", "int32")), ("selp.f32", (F, F, F, "bool")),
    ("cvt.rp.satfinite.ue8m0x2.f32", (U16, F, F)), ("cvt.rn.satfinite.e2m1x2.f32", ("uint8", F, F)),
    ("cvt.rn.f16x2.e4m3x2", (U32, U16)), ("mul.hi.u32", (U32,) * 3), ("shl.b32", (F, F, U32)),
    ("cuda.make_float2", (F, F)), ("cuda.float2_x", (U64,)), ("mov.b128", ("uint128", U64, U64)),
    ("mov.b128", (U64, U64, "uint128")),
])
def test_census_forms_are_modeled(op, dtypes):
    info = ops.classify(op, dtypes)
    assert info is not None and info.supported, info and info.why_unsupported


@pytest.mark.parametrize("op, dtypes, why", [
    ("and.b128", ("uint128",) * 3, "128-bit"),
    ("mov.b128", ("uint128", U32, U32), "two 64-bit registers"),
    ("add.rz.f64", ("float64",) * 3, "directed"),
    ("cvt.rn.f32.f16", (F, "float16"), "exact widening"),
    ("cvt.bf16.f32", (U16, F), "rounding modifier"),
    ("add.rn.f32x2", ("int32",) * 3, "64-bit"),
    ("setp.lt.and.s32", (U32, U32, "int32", "int32"), ".and is not modeled"),
    ("rem.s32", ("int32",) * 3, "rem is not simulated"),
    ("cvta.to.global.u64", (U64, "handle"), "cvta"),
])
def test_other_forms_stay_unsupported_with_a_reason(op, dtypes, why):
    info = ops.classify(op, dtypes)
    assert info is not None and not info.supported and why in info.why_unsupported


def test_mov_orientation_from_the_wide_register():
    assert not AF.parse("mov.b64", (U64, F, F)).unpack
    assert AF.parse("mov.b64", (F, F, U64)).unpack
    assert "cannot be told apart" in AF.parse("mov.b64", (F, F, F))
