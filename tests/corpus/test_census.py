"""The production-corpus harness without TVM: census classification and stubbing, op naming, inputs.

The texts here are small kernels written for these tests in the 0.27 printer's style; no
kernel of the tirx-kernels package is copied into the repository.
"""
from __future__ import annotations

import numpy as np

from benchmarks.corpus import census, census_ops, census_rules, check

PRINTED = '''# from typing import TypeVar
# from tvm.script import tirx as T

n_dim0 = TypeVar("n_dim0")
@T.prim_func
def tiny(a: T.Buffer((n_dim0,), "float32"), b: T.Buffer((32,), "float32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    T.attr({"tirx.device_entry": T.bool(True)})
    v = T.cta_id([1])
    v_1 = T.warp_id([1])
    v_2 = T.lane_id([32])
    v_3 = T.thread_id([32])
    b[v_3] = a[v_3] + T.float32(1.0)
'''


UNKNOWN = "    T.no_such_statement_form(1) = 3\n"      # not TIRx: no parser will ever accept it


def _failure(line_text: str, what: str = "") -> census_rules.Failure:
    return census_rules.Failure("ParseError", what, "", 1, 1, line_text.strip())


def test_the_printed_form_parses_today_so_it_has_no_blockers():
    # TypeVar extents, `T.attr({"tirx.device_entry": ...})` and scope ids were blockers of
    # the first census; the front end takes them now and the census must say so
    assert census.first_failure(PRINTED, "tiny.py") is None
    res = census.blockers(PRINTED, "tiny.py")
    assert res["blockers"] == [] and res["parses_after_stubs"]


def test_first_failure_is_classified_by_its_line():
    text = PRINTED + UNKNOWN
    f = census.first_failure(text, "tiny.py")
    assert f is not None and f.kind == "ParseError" and f.line == text.count("\n")
    assert census_rules.classify(f) is None
    assert census.other_id(f).startswith("other: ")


def test_rules_still_name_and_stub_the_constructs_of_older_printers():
    f = _failure('n_dim0 = TypeVar("n_dim0")')
    assert census_rules.classify(f).id == "typevar-extent"
    assert census_rules.classify(f).stub(PRINTED, f).count("n_dim0 = 64") == 1
    f = _failure('T.attr({"tirx.device_entry": T.bool(True)})')
    assert census_rules.classify(f).id == "attr-device-entry"
    assert "    T.device_entry()\n" in census_rules.classify(f).stub(PRINTED, f)


def test_tuple_scope_ids_are_split_and_keep_every_name_bound():
    text = PRINTED.replace("    v = T.cta_id([1])\n", "    v, v_4 = T.cta_id([1, 1])\n")
    split = census_rules._tuple_scope_ids(text, None)
    assert "v, v_4 =" not in split and "v_4" in split
    assert census.first_failure(split, "tiny.py") is None


def test_an_unknown_construct_is_named_by_its_message_and_blanked():
    text = PRINTED.replace("    b[v_3] = a[v_3] + T.float32(1.0)\n", "    b[v_3] = a[v_3] + T.float32(1.0)\n" + UNKNOWN)
    res = census.blockers(text, "tiny.py")
    ids = [b["construct"] for b in res["blockers"]]
    assert len(ids) == 1 and ids[0].startswith("other: ")
    assert res["parses_after_stubs"]


def test_blank_statement_keeps_loop_variables_and_defined_names():
    text = "def f():\n    for i in T.serial(4, unroll=False):\n        x = i\n    y = T.weird(3)\n"
    out = census_rules.blank_statement(text, 2)
    assert "    for i in range(1):" in out
    out = census_rules.blank_statement(text, 4)
    assert "    y: T.let[T.int32] = 0" in out


def test_unwrap_call_handles_nested_parentheses():
    text = "x = T.reinterpret(T.handle().ty, f(a, (b + 1)))"
    assert census_rules.unwrap_call(text, "T.reinterpret(T.handle().ty, ") == "x = f(a, (b + 1))"


def test_ptx_positional_modifiers_compose_the_mnemonic_as_the_parser_does():
    line = ('T.ptx.ld(r[0], r[1], T.address_of(a[0]), "", "", "global", "", "nc", "v2", "b32", "")')
    assert ("ld.global.nc.v2.b32", 3) in census_ops.line_ops(line)
    assert census_ops.line_ops('T.ptx.bar(T.uint32(0), T.uint32(32), "", "sync", "")')[0] == ("bar.sync", 2)
    assert census_ops.line_ops('T.cuda.cvta_generic_to_shared(p)') == [("cuda.cvta_generic_to_shared", 1)]


def test_op_status_reads_the_registry():
    assert census_ops.op_status("mbarrier.try_wait.parity.shared::cta.b64", 3) == "registry"
    assert census_ops.op_status("bar.sync", 2) == "registry"
    assert census_ops.op_status("no_such_family.x", 1) == "unknown"
    assert census_ops.op_status("T.address_of", 1) == "front end"
    assert census_ops.display_name("shfl_sync.bfly.b32") == "T.ptx.shfl.sync.bfly.b32"


def test_aggregate_counts_functions_and_modules_once_per_construct():
    rows = [{"module": "m1", "function": "f", "generation": "pre", "parses_after_stubs": True, "lines": 3,
             "blockers": [{"construct": "x", "what": "w", "line": 1, "snippet": "s1"},
                          {"construct": "x", "what": "w", "line": 2, "snippet": "s2"}],
             "ops": {"bar.sync": {"calls": 2, "operands": [2]}}},
            {"module": "m2", "function": "g", "generation": "pre", "parses_after_stubs": False, "lines": 3,
             "blockers": [{"construct": "x", "what": "w", "line": 1, "snippet": "s1"}], "ops": {}}]
    data = census.aggregate(rows)
    (x,) = data["constructs"]["pre"]
    assert (x["modules"], x["functions"], x["first"], x["occurrences"]) == (2, 2, 2, 3)
    assert data["summary"]["pre"] == {"functions": 2, "parse_today": 0, "parse_after_stubbing_all": 1,
                                     "budget_exhausted": 0, "modules": 2}
    assert data["ops"]["pre"][0]["op"] == "T.ptx.bar.sync" and data["ops"]["pre"][0]["known"] == "registry"
    assert "| `x` | 2 | 2 | 2 |" in census.markdown(data)


def test_inputs_follow_the_recorded_parameters_and_name_what_is_missing():
    frec = {"params": [{"name": "a", "kind": "buffer", "shape": [4, "n"], "dtype": "float16"},
                       {"name": "n", "kind": "scalar", "dtype": "int32"},
                       {"name": "tm", "kind": "tensor_map"}]}
    inputs, problems = check.make_inputs(frec, {"n": 8}, "random")
    assert inputs["a"].shape == (4, 8) and inputs["a"].dtype == np.float16 and inputs["n"] == 8
    assert np.isfinite(inputs["a"].astype(np.float32)).all()
    assert problems == ["tensor-map parameter tm: no descriptor derived from the library's host code"]
    _, problems = check.make_inputs({"params": [{"name": "a", "kind": "buffer", "shape": ["m"]}]}, {}, "zeros")
    assert problems == ["extent m of a is not bound by the configuration"]


def test_recorded_encodes_become_tensor_maps_over_one_shared_tensor():
    from modelcheck.numsim.tensormap import decode
    enc = {"dtype": "float16", "rank": 3, "dims": [64, 16, 4], "strides": [256, 128], "box": [64, 8, 2],
           "element_strides": [1, 1, 1], "interleave": 0, "swizzle": 3, "l2_promotion": 2, "oob_fill": 0,
           "tensor": "K", "tensor_shape": [4, 16, 128], "tensor_dtype": "float16"}
    frec = {"params": [{"name": "k0", "kind": "tensor_map"}, {"name": "k1", "kind": "tensor_map"}],
            "tensor_maps": {"_source": "test", "k0": enc, "k1": enc}}
    inputs, problems = check.make_inputs(frec, {}, "random")
    assert problems == []
    f0, f1 = decode(inputs["k0"]), decode(inputs["k1"])
    assert f0.global_shape == (64, 16, 4) and f0.box_shape == (64, 8, 2) and f0.swizzle == 3
    assert f0.global_address == f1.global_address     # both maps view the same host tensor


def test_host_prelude_tensor_maps_parse_and_still_stub_to_pointer_parameters():
    # as the printer places it: the host prelude before the device entry, the use after
    text = PRINTED.replace('    T.attr(', '    tm: T.let[T.TensorMap()] = T.tvm_stack_alloca("tensormap", 1)\n'
                           '    T.call_packed("runtime.cuTensorMapEncodeTiled", tm, "float32", 1, a.data, 32, 32, 1, '
                           '0, 0, 0, 0)\n    T.attr(')
    text = text.replace('    v = T.cta_id([1])\n', '    v = T.cta_id([1])\n    T.ptx.prefetch(T.reinterpret(T.handle().ty, '
                           'T.address_of(tm)), "", "", "", "tensormap", "")\n')
    # the host prelude is front-end input now (ir/host.py); the stubs remain for older caches
    assert census.first_failure(text, "tiny.py") is None
    stubbed = census_rules._tensormap_lets_to_params(text, None)
    assert "tm: T.Ptr(T.void)):" in stubbed and "cuTensorMapEncodeTiled" not in stubbed
    assert census_rules._address_of_whole(stubbed, None).count("T.address_of(tm)") == 0


def test_captured_bfloat16_bytes_bind_as_the_parameters_type(tmp_path):
    # np.savez writes an ml_dtypes bfloat16 array as raw 2-byte voids: the capture binds it as bfloat16
    import ir
    from modelcheck.numsim.values import NP_DTYPE
    text = PRINTED.replace('"float32"), b:', '"bfloat16"), b:').replace("a[v_3] + T.float32(1.0)",
                                                                     'T.Cast("float32", a[v_3])')
    func = ir.parse(text, path="tiny.py")
    raw = np.arange(32, dtype=np.float32).astype(NP_DTYPE["bfloat16"]).view("V2")
    np.savez(tmp_path / "cap.npz", a=raw, b=np.zeros(32, np.float32))
    inputs, problems = check.captured_inputs(tmp_path, {"npz": "cap.npz"}, func)
    assert problems == [] and inputs["a"].dtype == NP_DTYPE["bfloat16"]
    assert (inputs["a"].astype(np.float32) == np.arange(32)).all()
