"""The op registry's wgmma forms (ir/ops/wgmma.py): operand layouts of the modeled lines, the reason each
unmodeled line gives, and how the parser reads a kernel that uses them."""
from __future__ import annotations

from pathlib import Path

import pytest

import ir
import modelcheck

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


@pytest.mark.parametrize("form,why", [
    ("wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", "an .f16 accumulator"),
    ("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", ".tf32/.tf32 inputs"),
    ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", ".e4m3/.e4m3 inputs"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.bf16", "one type"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16", "sparse"),
])
def test_unmodeled_forms_say_why(form, why):
    info = ir.classify(form, ("float32",) * 11)
    assert info is not None and not info.supported and why in info.why_unsupported


def test_modeled_forms_and_counts():
    ss = ir.classify("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", ("float32",) * 39)
    assert ss.supported and ss.quals["form"] == "ss" and len(ss.operands) == 39
    assert [o.role for o in ss.operands[32:]] == ["value", "value", "pred", "imm", "imm", "imm", "imm"]
    rs = ir.classify("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ("float32",) * 41)
    assert rs.supported and rs.quals["form"] == "rs"
    with pytest.raises(ir.ops.OperandCountError):
        ir.classify("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ("float32",) * 40)
    assert ir.classify("wgmma.wait_group.sync.aligned", ("int32",)).name == "wgmma.wait_group"
    for action in ("fence", "commit_group"):
        info = ir.classify(f"wgmma.{action}.sync.aligned", ())
        assert info.supported and info.family == "wgmma"


def test_gemm_kernel_parses_and_prints_back():
    func = modelcheck.load(KERNELS / "wgmma_gemm.py").func
    text = ir.print_func(func)
    assert 'T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"](acc[0], ' in text
    assert 'T.ptx["wgmma.wait_group.sync.aligned"](1)' in text
    assert ir.parse(text) == func
