"""Operand layouts of the PTX forms apache-tvm 0.27 prints (issue 17, Part A), and what NumSim makes of them:
modeled ones run, the others parse and are reported `incomplete` naming the op and its line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from ir import ops
from modelcheck import numsim

FIX = Path(__file__).parent.parent / "fixtures" / "ops"
I32 = "int32"


@pytest.mark.parametrize("op, dtypes, names, supported", [
    # tcgen05.mma syntax lines: block_scale (scale-factor TMEM addresses), .ws (zero-column mask), masks
    ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32", ("uint32", "uint64", "uint64", "uint32",
     "uint32", "uint32", "bool"), ["d_tmem", "a_desc", "b_desc", "idesc", "sfa_tmem", "sfb_tmem", "enable_input_d"],
     True),
    ("tcgen05.mma.ws.cta_group::1.kind::f16", ("uint32", "uint64", "uint64", "uint32", "bool", "uint64"),
     ["d_tmem", "a_desc", "b_desc", "idesc", "enable_input_d", "zero_col_mask"], True),
    ("tcgen05.mma.ws.cta_group::1.kind::f16", ("uint32", "uint64", "uint64", "uint32", "bool"),
     ["d_tmem", "a_desc", "b_desc", "idesc", "enable_input_d"], True),
    ("tcgen05.mma.cta_group::1.kind::f16", ("uint32", "uint64", "uint64", "uint32") + ("uint32",) * 4 + ("bool",),
     ["d_tmem", "a_desc", "b_desc", "idesc"] + [f"disable_output_lane{i}" for i in range(4)] + ["enable_input_d"],
     True),
    # tcgen05.ld.red: 32 registers, the reduction value, taddr
    ("tcgen05.ld.red.sync.aligned.32x32b.x32.max.f32", (I32,) * 34,
     [f"r{i}" for i in range(32)] + ["redval", "taddr"], True),
    ("tcgen05.ld.sync.aligned.32x32b.x32.b32", (I32,) * 33, [f"r{i}" for i in range(32)] + ["taddr"], True),
    # fence.proxy.tensormap acquire [addr], 128 (TVM may leave the literal size out); release has no operand
    ("fence.proxy.tensormap::generic.acquire.gpu", ("handle",), ["addr"], True),
    ("fence.proxy.tensormap::generic.acquire.gpu", ("handle", I32), ["addr", "size"], True),
    ("fence.proxy.tensormap::generic.release.gpu", (), [], True),
    # mbarrier.arrive with a state register
    ("mbarrier.arrive.shared::cta.b64", ("uint64", "handle", "uint32"), ["state", "addr", "count"], True),
    ("mbarrier.arrive.expect_tx.shared::cta.b64", ("uint64", "handle", "uint32"), ["state", "addr", "tx_count"],
     True),
    # TMA gather4: a column and four rows
    ("cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes",
     ("handle",) * 2 + (I32,) * 5 + ("handle",), ["dst", "tmap", "c0", "c1", "c2", "c3", "c4", "mbar"], True),
    ("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group",
     ("handle",) + (I32,) * 5 + ("handle",), ["tmap", "c0", "c1", "c2", "c3", "c4", "src"], False),
    # vector atomics: a destination and a value per element
    ("atom.global.add.v4.f32", (I32,) * 9, ["d0", "d1", "d2", "d3", "addr", "b0", "b1", "b2", "b3"], False),
    ("add.rn.f32x2", (I32,) * 3, ["d", "a0", "a1"], False),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", (I32,) * 5, ["d0", "d1", "d2", "d3", "addr"], True),
    ("prefetch.tensormap", ("handle",), ["addr"], True),
    # bulk L2 prefetches: a tensor map and its coordinates (gather4: a column and four rows), or an address
    ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4.L2::cache_hint", ("handle",) + (I32,) * 5 +
     ("uint64",), ["tmap", "c0", "c1", "c2", "c3", "c4", "cache_policy"], True),
    ("cp.async.bulk.prefetch.tensor.3d.L2.global", ("handle",) + (I32,) * 3, ["tmap", "c0", "c1", "c2"], True),
    ("cp.async.bulk.prefetch.L2.global", ("handle", I32), ["src", "size"], True),
    ("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col", ("handle",) + (I32,) * 3, ["tmap", "c0", "c1", "c2"],
     False),
])
def test_layouts_follow_the_ptx_syntax(op, dtypes, names, supported):
    info = ops.classify(op, dtypes)
    assert [o.name for o in info.operands] == names
    assert info.supported is supported
    if not supported:
        assert info.why_unsupported


@pytest.mark.parametrize("op, n", [("tcgen05.mma.cta_group::1.kind::f16", 7), ("atom.global.add.v4.f32", 3),
                                   ("fence.proxy.tensormap::generic.release.gpu", 1), ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 2)])
def test_wrong_counts_still_name_the_layout(op, n):
    with pytest.raises(ops.OperandCountError) as err:
        ops.classify(op, (I32,) * n)
    assert err.value.layout


def test_modeled_forms_run():
    kernel = modelcheck.load(FIX / "modeled_027_forms.py")
    res = numsim.run(kernel.func, {"out": np.zeros(8, np.uint32)})
    assert res.termination == "completed"
    out = res.outputs["out"]
    assert out[0] == 0 and out[1] == 1          # the state tokens: generations 0 and 1
    assert out[2] == ((0x20 + 3) << 16 | (0x10 + 5))
    assert out[3] == 0 and out[4] == 1          # cluster_ctarank of a one-CTA cluster; one active lane
    assert modelcheck.synccheck(kernel).verdict == "clean"
    assert modelcheck.racecheck(kernel).verdict == "clean"


@pytest.mark.parametrize("mode, line, name", [(0, 15, "copysign.f32"), (1, 17, "atom.global.add.v4.f32"),
                                              (2, 19, "tanh.approx.f16")])
def test_unmodeled_forms_are_incomplete_naming_op_and_line(mode, line, name):
    kernel = modelcheck.load(FIX / "unmodeled_027_forms.py", MODE=mode)
    report = modelcheck.synccheck(kernel)
    assert report.verdict == "incomplete"
    text = "\n".join(str(f.message) for f in report.findings)
    assert name in text and f":{line}:" in text


@pytest.mark.parametrize("op, n, first", [("cuda.tcgen05.encode_matrix_descriptor", 5, ["desc", "addr", "ldo"]),
                                          ("cuda.tcgen05.encode_instr_descriptor", 14, ["desc", "d_dtype"]),
                                          ("cuda.tcgen05.encode_instr_descriptor_block_scaled", 17,
                                           ["desc", "d_dtype", "a_dtype", "b_dtype", "sfa_dtype"]),
                                          ("cuda.runtime_instr_desc", 2, ["desc", "sf_id"])])
def test_descriptor_encoders_are_modeled_with_tvm_argument_order(op, n, first):
    info = ops.classify(op, ("handle",) * n)
    assert info.supported and [o.name for o in info.operands][:len(first)] == first
    with pytest.raises(ops.OperandCountError):
        ops.classify(op, ("handle",) * (n - 1))


def test_keyword_encoder_call_is_the_positional_one():
    """TVM's parser takes encode_instr_descriptor's fields by keyword; the IR is the printed positional call."""
    import ir

    kernel = modelcheck.load(Path(__file__).parents[2] / "kernels" / "real" / "tcgen05_fp8_encode_pre.py")
    call = next(n for n in ir.walk(kernel.func.body)
                if isinstance(n, ir.OpCall) and n.op == "cuda.tcgen05.encode_instr_descriptor")
    values = [getattr(o, "value", None) for o in call.operands[1:]]
    assert values == ["float32", "float8_e4m3fn", "float8_e4m3fn", 128, 64, 32, False, False, 1, False, False, False,
                      False]
    short = modelcheck.load(FIX / "encode_keywords.py").func
    call = next(n for n in ir.walk(short.body) if isinstance(n, ir.OpCall) and n.op.endswith("instr_descriptor"))
    assert [getattr(o, "value", None) for o in call.operands[-5:]] == [1, False, False, False, False]   # defaults
    res = numsim.run(short, {"out": np.zeros(1, np.uint32)})
    assert res.outputs["out"][0] == 0x08100010          # f16 x f16 -> f32, M 128, N 64
    with pytest.raises(modelcheck.ParseError, match="needs its argument 'K'"):
        modelcheck.load(FIX / "encode_keywords_missing.py")


@pytest.mark.parametrize("op, supported", [
    ("discard.global.L2", True), ("discard.L2", True), ("discard.global.L1", False),
    ("applypriority.global.L2::evict_normal", True), ("applypriority.global.L2::evict_last", False),
])
def test_l2_line_hints_classify(op, supported):
    info = ops.classify(op, ("handle",))
    assert info.supported is supported
    assert info.effects == (frozenset({"writes"}) if op.startswith("discard") else frozenset())
    if not supported:
        assert "[a], 128" in info.why_unsupported
    with pytest.raises(ops.OperandCountError):
        ops.classify(op, ("handle", "int32"))
