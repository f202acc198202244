"""Compile-time Python in kernel files (ir/meta.py, ir/meta_expand.py and the builder's T.* forms real kernels use).

Fixtures are kernel files in tests/fixtures/meta/; each test checks the IR built and, where the
construct changes what runs, a NumSim output or a checker verdict.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from ir import Address, Const, ConstRef, OpCall, UsageError
from modelcheck import numsim

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "meta"


def load(name: str, **consts) -> ir.PrimFunc:
    return ir.parse_file(FIXTURES / f"{name}.py", **consts)


walk = ir.walk       # every IR node under a statement list, expressions included


def test_module_values_are_spliced_in_and_numbers_stay_constants():
    func = load("module_values")
    consts = {c.name: c.value for c in func.constants}
    # numbers (also from tuple assignment, dict lookup and dtype attributes) are module constants ...
    assert consts == {"BM": 32, "BN": 4, "STAGES": 2, "ELEM_BYTES": 4}
    # ... tuples, dicts, dtypes and strings are not: they are spelled where they are used
    (out,) = func.params
    assert out.buffer.dtype == "float32" and [getattr(e, "name", getattr(e, "value", None))
                                             for e in out.buffer.shape] == ["BM", "BN"]
    inits = [n for n in walk(func.body) if isinstance(n, OpCall) and n.op.startswith("mbarrier.init")]
    assert [n.op for n in inits] == ["mbarrier.init.shared::cta.b64"]     # the f-string, formatted
    assert len(inits[0].operands) == 2 and inits[0].operands[1].value == 1    # *ARRIVE_COUNT splatted
    res = numsim.run(func, {"out": np.zeros((32, 4), np.float32)})
    expected = np.arange(32)[:, None] * 4 + np.arange(4)[None, :]
    np.testing.assert_array_equal(res.outputs["out"], expected.astype(np.float32))


def test_an_override_of_a_tuple_assigned_constant_reaches_every_use():
    func = load("module_values", BM=64)
    assert {c.name: c.value for c in func.constants}["BM"] == 64
    assert func.params[0].buffer.shape[0] == ConstRef("BM", "int32")
    res = numsim.run(func, {"out": np.zeros((64, 4), np.float32)})
    assert res.outputs["out"][63, 3] == 63 * 4 + 3


def test_inline_helpers_expand_and_findings_point_into_the_helper():
    assert modelcheck.synccheck(modelcheck.load(FIXTURES / "inline_helpers.py")).verdict == "clean"
    report = modelcheck.synccheck(modelcheck.load(FIXTURES / "inline_helpers_wrong_parity.py"))
    assert report.verdict == "error"
    (finding,) = report.findings
    assert finding.kind == "deadlock"
    span = finding.to_dict()["details"]["blocked"][0]["operation"]["span"]
    assert span["file"].endswith("inline_helpers_wrong_parity.py") and span["line"] == 10   # inside wait_slot


def test_inline_helper_locals_do_not_capture_the_callers_names():
    func = load("inline_hygiene")
    res = numsim.run(func, {"out": np.zeros((2, 32), np.int32)})
    tx = np.arange(32)
    np.testing.assert_array_equal(res.outputs["out"][0], (tx + 100) * 2)
    np.testing.assert_array_equal(res.outputs["out"][1], tx + 100)


def test_a_recursive_inline_helper_is_an_error_at_the_call():
    with pytest.raises(ir.ParseError) as err:
        load("inline_recursive")
    assert "expands more than 32 levels deep" in err.value.what and err.value.span.line == 8


def test_constexpr_and_jit_keyword_parameters_are_overridable_constants():
    func = load("jit_constexpr")
    assert [p.name for p in func.params] == ["a"]
    assert {c.name: c.value for c in func.constants} == {"N": 64, "SCALE": 3}
    res = numsim.run(func, {"a": np.zeros(128, np.int32)})
    np.testing.assert_array_equal(res.outputs["a"], np.arange(128) * 3)
    res = numsim.run(load("jit_constexpr", N=32, SCALE=1), {"a": np.zeros(128, np.int32)})
    np.testing.assert_array_equal(res.outputs["a"], np.arange(128))


def test_static_assert_is_decided_while_reading():
    with pytest.raises(ir.ParseError) as err:
        load("jit_constexpr", N=48)
    assert err.value.what == "static assertion failed: N must divide 128" and err.value.span.line == 10


def test_a_compile_time_parameter_without_default_needs_a_value_and_says_where():
    with pytest.raises(UsageError) as err:
        load("jit_constexpr_required")
    assert str(err.value).startswith(f"{FIXTURES / 'jit_constexpr_required.py'}:7:")
    assert "compile-time parameter SCALE of kernel jit_constexpr_required has no default value: pass --const " \
        "SCALE=VALUE" in str(err.value)
    res = numsim.run(load("jit_constexpr_required", SCALE=2), {"a": np.zeros(128, np.int32)})
    np.testing.assert_array_equal(res.outputs["a"], np.arange(128) * 2)


def test_an_unknown_override_is_still_a_usage_error():
    with pytest.raises(UsageError, match="unknown constant"):
        load("jit_constexpr", M=3)


def test_thread_binding_loops_launch_and_shared_scalars_read_by_name():
    func = load("thread_binding")
    assert "blockIdx.x" in ir.print_func(func) and "threadIdx.x" in ir.print_func(func)
    a = np.arange(64, dtype=np.int32).reshape(2, 32)
    res = numsim.run(func, {"a": a, "out": np.zeros(2, np.int32)})
    np.testing.assert_array_equal(res.outputs["out"], a.sum(axis=1))
    assert modelcheck.racecheck(modelcheck.load(FIXTURES / "thread_binding.py"),
                                {"a": a, "out": np.zeros(2, np.int32)}).verdict == "clean"


def test_access_ptr_is_the_element_at_the_flat_offset():
    func = load("access_ptr")
    addrs = [n for n in walk(func.body) if isinstance(n, Address) and n.buffer in ("stage", "src")]
    assert addrs, "access_ptr built no address"
    src = np.arange(128, dtype=np.float32).reshape(4, 32)
    res = numsim.run(func, {"src": src, "out": np.zeros((4, 32), np.float32)})
    np.testing.assert_array_equal(res.outputs["out"][2:], src[2:])
    assert modelcheck.synccheck(modelcheck.load(FIXTURES / "access_ptr.py")).verdict == "clean"


def test_an_unmodeled_layout_is_incomplete_naming_it():
    report = modelcheck.synccheck(modelcheck.load(FIXTURES / "layout_unmodeled.py"))
    assert report.verdict == "incomplete"
    assert any("T.TileLayout" in f.message for f in report.findings)


def test_an_fstring_field_must_be_a_compile_time_value(tmp_path):
    src = (FIXTURES / "module_values.py").read_text().replace(
        'T.ptx[INIT](T.address_of(bar[s]), *ARRIVE_COUNT)', 'T.ptx[f"mbarrier.init.shared::cta.b{s}"](T.address_of(bar[s]), 1)')
    path = tmp_path / "fstring_runtime.py"
    path.write_text(src)
    with pytest.raises(ir.ParseError) as err:
        ir.parse_file(path)
    assert "'s'" in err.value.what


def test_module_values_keep_python_semantics_and_bounds(tmp_path):
    base = (FIXTURES / "module_values.py").read_text()
    for line, what in (("HUGE = (0,) * 10 ** 9", "too large"), ("BAD = CFG['nope']", "'nope' is not in"),
                       ("A, B = (1, 2, 3)", "cannot unpack")):
        path = tmp_path / "bad.py"
        path.write_text(base.replace("ARRIVE_COUNT = [1]\n", f"ARRIVE_COUNT = [1]\n{line}\n"))
        with pytest.raises(ir.ParseError) as err:
            ir.parse_file(path)
        assert what in err.value.what, err.value.what


def test_reading_a_tensor_maps_bytes_as_numbers_is_incomplete():
    # the map's bytes are readable (a kernel copies them to patch the copy), but they hold the model's tokens,
    # not the undocumented CUtensorMap layout: words left in an output outside a whole map make the run
    # incomplete, never a silent result (numsim/tmap_values.py)
    from modelcheck.numsim import TensorMap
    func = load("tensormap_bytes")
    assert not any(n.name.startswith("pointer arithmetic") for n in walk(func.body) if isinstance(n, ir.Unsupported))
    src = np.zeros(64, np.float32)
    inputs = {"tmap": TensorMap(src, (64,), (), (32,), (1,), "float32", "none").numpy(),
              "out": np.zeros(4, np.uint64)}
    report = modelcheck.synccheck(func, inputs)
    assert report.verdict == "incomplete"
    [f] = [f for f in report.findings if f.kind == "analysis_incomplete"]
    assert "bytes of a tensor map outside any whole map (out bytes 0-15 (bytes 32-47 of map #0 (tmap)))" in f.message


def test_reading_a_tensor_map_at_its_own_address_is_incomplete_not_oob():
    from modelcheck.numsim import TensorMap
    func = load("tensormap_bytes_direct")
    src = np.zeros(64, np.float32)
    inputs = {"tmap": TensorMap(src, (64,), (), (32,), (1,), "float32", "none").numpy(),
              "out": np.zeros(4, np.uint64)}
    for report in (modelcheck.synccheck(func, inputs), modelcheck.racecheck(func, inputs)):
        assert report.verdict == "incomplete", [f.message for f in report.findings]
        assert "oob" not in {f.kind for f in report.findings}
        [f] = [f for f in report.findings if f.kind == "analysis_incomplete"]
        assert "(out bytes 0-31 (bytes 0-31 of map #0 (tmap)))" in f.message and "CUtensorMap byte layout is not modeled" in f.message


def test_a_swizzled_tile_puts_each_element_where_the_hardware_does():
    func = load("swizzled_layout")
    res = numsim.run(func, {"out": np.zeros(512, np.float16), "back": np.zeros((8, 64), np.float16)})
    logical = np.arange(512)
    physical = logical ^ (((logical >> 6) & 7) << 3)        # 128-byte swizzle in 16-byte units (TVM 0.27)
    expected = np.zeros(512)
    expected[physical] = logical
    np.testing.assert_array_equal(res.outputs["out"].astype(np.int64), expected)
    np.testing.assert_array_equal(res.outputs["back"].reshape(-1).astype(np.int64), logical)   # round trip
    assert modelcheck.racecheck(func, {"out": np.zeros(512, np.float16),
                                       "back": np.zeros((8, 64), np.float16)}).verdict == "clean"


def test_a_strided_tile_then_swizzle_matches_the_lowered_form():
    # TVM 0.27 lowers s[i, j] of (128, 128) float16 with ComposeLayout(3, 3, 3, TileLayout(S[(128, 2, 64):(64, 8192,
    # 1)])) to s[(j >> 6) * 8192 + i * 64 + (j & 63 ^ ((j >> 6) * 128 + i & 7) << 3)]
    from ir import Const, layouts
    from ir.canonical import fold_expr
    sw = layouts.Swizzle(3, 3, 3, (128, 2, 64), (64, 8192, 1), 128 * 128)
    shape = (Const(128, "int32"), Const(128, "int32"))
    for i, j in ((0, 0), (5, 70), (127, 127), (9, 63), (64, 64)):
        got = fold_expr(layouts.offset(sw, shape, (Const(i, "int32"), Const(j, "int32"))), {}).value
        assert got == (j >> 6) * 8192 + i * 64 + ((j & 63) ^ ((((j >> 6) * 128 + i) & 7) << 3)), (i, j)


def test_a_string_extent_naming_a_later_scalar_parameter_is_that_parameter():
    func = load("forward_extent")
    assert [d.name for d in func.dims] == [] and func.params[0].buffer.shape[0] == ir.Var("n", "int32")
    res = numsim.run(func, {"a": np.zeros((8, 4), np.float32), "n": 8})
    assert res.outputs["a"][:, 0].sum() == 8


def test_a_dtype_view_of_a_swizzled_tile_keeps_the_swizzle():
    func = load("swizzled_view")
    res = numsim.run(func, {"out": np.zeros((8, 32), np.uint32)})
    halves = np.arange(8 * 64, dtype=np.float16).reshape(8, 64).view(np.uint16).astype(np.uint32)
    np.testing.assert_array_equal(res.outputs["out"], halves[:, 0::2] | halves[:, 1::2] << 16)
    assert modelcheck.synccheck(func).verdict == "clean"


def test_a_preferred_cluster_of_one_is_no_cluster_and_a_larger_one_is_a_cluster_launch():
    func = load("preferred_cluster")
    assert all(isinstance(e, Const) and e.value == 1 for e in func.launch.cluster)
    assert numsim.run(func, {"out_ptr": np.zeros(64, np.float32)}).outputs["out_ptr"].sum() == 64
    two = load("preferred_cluster", PREFERRED=2)
    res = numsim.run(two, {"out_ptr": np.zeros(64, np.float32)})
    assert res.stats["cluster"] == (2, 1, 1) and res.outputs["out_ptr"].sum() == 64


@pytest.mark.parametrize("name, line, what", [
    ("unreadable_string_extent", 7, "cannot read the string extent '2d'"),
    ("unreadable_fstring_field", 5, "cannot read the f-string field 'N +'"),
])
def test_an_unreadable_string_expression_is_an_error_in_the_kernel_file(name, line, what):
    with pytest.raises(ir.ParseError) as err:
        load(name)
    assert err.value.what == what
    assert err.value.span.file == str(FIXTURES / f"{name}.py") and err.value.span.line == line
