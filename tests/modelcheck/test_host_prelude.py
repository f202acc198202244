"""Kernels that encode their own TMA tensor maps in a host prelude, checked as a user would.

- tests/fixtures/host/tma_roundtrip.py (both encode spellings, an element-address base, a host
  let and assert) is clean from the shell, `modelcheck run` moves exactly the box, and the real
  TIRx parser accepts it with the same IR;
- every cuTensorMapEncodeTiled limit broken in the prelude is `invalid_descriptor` at the encode's
  line, naming the field, before the launch; modes NumSim does not model are `incomplete`;
- host statements outside the modeled set are parse errors with a line, never skipped;
- the rewritten KDA, FA4, GEMM and GDN kernels give their manifest verdicts from the shell
  with default (zero) inputs, the KDA ones at SEQ_LEN=320 (five chunks), and `modelcheck run`
  on the GEMM matches numpy.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ir
import modelcheck
from modelcheck.cli import EXIT_USAGE, main
from tests.manifest import KERNELS, load_manifest
from tests.test_manifest import expectation_failure

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "host" / "tma_roundtrip.py"
TEXT = FIXTURE.read_text(encoding="utf-8")
LOAD = 'GX, rows, GX * 4, BOX_X, BOX_Y, 1, 1, descriptor_dtype="float32", rank=2, swizzle=3)'
STORE = 'store_map, "float32", 2, dst.data, GX, GY, GX * 4, BOX_X, BOX_Y, 1, 1, 0, 3, 0, 0)'
ROWS_LINE = next(n for n, line in enumerate(TEXT.splitlines(), 1) if line.startswith("    rows: T.let"))
LOAD_LINE = next(n for n, line in enumerate(TEXT.splitlines(), 1) if LOAD in line)
STORE_LINE = next(n for n, line in enumerate(TEXT.splitlines(), 1) if STORE in line)


def variant(tmp_path, old: str, new: str) -> Path:
    assert old in TEXT, old
    path = tmp_path / "kernel.py"
    path.write_text(TEXT.replace(old, new, 1), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the fixture from the shell

def test_fixture_is_clean_from_the_shell():
    proc = subprocess.run(["modelcheck", "check", str(FIXTURE), "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = json.loads(proc.stdout)["reports"]      # `check --json`: the merged report, each checker's inside
    assert [(r["checker"], r["verdict"]) for r in reports] == [("synccheck", "clean"), ("racecheck", "clean")]


def test_fixture_parses_to_two_tensor_map_encodes():
    func = ir.parse_file(FIXTURE)
    encodes = [h for h in func.host if isinstance(h, ir.TensorMapEncode)]
    assert [(e.var.name, e.buffer) for e in encodes] == [("load_map", "src"), ("store_map", "dst")]
    assert [p.name for p in func.params] == ["src", "dst"]
    from modelcheck.numsim.compile_stmt import _static
    consts = func.constant_values
    # src.ptr_to([ROW0, 0]): the map starts ROW0 rows of GX float32 into src, named constants kept
    assert _static(encodes[0].byte_offset, consts, {}) == consts["ROW0"] * consts["GX"] * 4
    assert "ROW0" in repr(encodes[0].byte_offset)
    assert encodes[1].span.line == STORE_LINE


def test_run_moves_exactly_the_box(tmp_path, capsys):
    out = tmp_path / "out.npz"
    assert main(["run", str(FIXTURE), "--input", "src=random:3", "--input", "dst=ones", "--out", str(out)]) == 0
    with np.load(out) as data:
        src, dst = data["src"], data["dst"]
    c = modelcheck.load(FIXTURE).constants
    rows = slice(c["Y0"] + c["ROW0"], c["Y0"] + c["ROW0"] + c["BOX_Y"])
    cols = slice(c["X0"], c["X0"] + c["BOX_X"])
    want = np.ones_like(dst)
    want[rows, cols] = src[rows, cols]
    np.testing.assert_array_equal(dst, want)
    assert not np.array_equal(src[rows, cols], np.ones_like(src[rows, cols]))


def test_atom32_swizzle_round_trip_moves_the_box_and_mixed_modes_permute_it(tmp_path, capsys):
    # CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B (4) on both maps: the load's placement is undone by the store's
    both = variant(tmp_path, LOAD, LOAD.replace("swizzle=3", "swizzle=4"))
    text = both.read_text(encoding="utf-8").replace(STORE, STORE.replace("0, 3, 0, 0)", "0, 4, 0, 0)"), 1)
    both.write_text(text, encoding="utf-8")
    c = modelcheck.load(FIXTURE).constants
    rows = slice(c["Y0"] + c["ROW0"], c["Y0"] + c["ROW0"] + c["BOX_Y"])
    cols = slice(c["X0"], c["X0"] + c["BOX_X"])
    out = tmp_path / "out.npz"
    assert main(["run", str(both), "--input", "src=random:3", "--input", "dst=ones", "--out", str(out)]) == 0
    with np.load(out) as data:
        src, dst = data["src"], data["dst"]
    np.testing.assert_array_equal(dst[rows, cols], src[rows, cols])
    # loaded with the 32-byte-atom swizzle, stored with the 16-byte-chunk 128B one: the box arrives permuted
    mixed = variant(tmp_path, LOAD, LOAD.replace("swizzle=3", "swizzle=4"))
    assert main(["run", str(mixed), "--input", "src=random:3", "--input", "dst=ones", "--out", str(out)]) == 0
    with np.load(out) as data:
        dst = data["dst"]
    assert not np.array_equal(dst[rows, cols], src[rows, cols])
    assert np.array_equal(np.sort(dst[rows, cols], axis=None), np.sort(src[rows, cols], axis=None))
    capsys.readouterr()


def test_fixture_is_accepted_by_the_real_parser_with_the_same_ir():
    pytest.importorskip("tvm_tirx")
    from tests.conformance.test_real_parser import real_script_of_file
    real = real_script_of_file(FIXTURE)
    assert "T.cuda.tensormap_encode_tiled(load_map" in real and "runtime.cuTensorMapEncodeTiled" in real
    assert ir.same_ir(ir.parse_file(FIXTURE), ir.parse(real, "tma_roundtrip.py (real print)"))


def test_printed_prelude_parses_back_to_the_same_ir():
    func = ir.parse_file(FIXTURE)
    text = ir.print_func(func)
    assert 'T.stack_alloca("tensormap", 1)' in text and "tvm_stack_alloca" not in text
    assert ir.same_ir(func, ir.parse(text, "printed.py"))


# --------------------------------------------------------------------------- cuTensorMapEncodeTiled limits

LIMITS = [
    # (field named, replacement of the load encode's fields)
    ("box_shape[1]", LOAD.replace("BOX_X, BOX_Y, 1, 1", "BOX_X, 300, 1, 1")),
    ("box_shape[0]", LOAD.replace("BOX_X, BOX_Y, 1, 1", "3, BOX_Y, 1, 1")),
    ("swizzle", LOAD.replace("BOX_X, BOX_Y, 1, 1", "64, BOX_Y, 1, 1")),            # 256-byte rows, 128B span
    ("global_strides[0]", LOAD.replace("GX * 4, BOX_X", "GX * 4 + 4, BOX_X")),
    ("element_strides[1]", LOAD.replace("BOX_Y, 1, 1", "BOX_Y, 1, 9")),
    ("global_shape[0]", LOAD.replace("GX, rows,", "0, rows,")),
    ("swizzle", LOAD.replace("swizzle=3", "swizzle=9")),
    ("oob_fill", LOAD.replace("swizzle=3", "swizzle=3, oob_fill=2")),
    ("l2_promotion", LOAD.replace("swizzle=3", "swizzle=3, l2_promotion=4")),
    ("interleave", LOAD.replace("swizzle=3", "swizzle=3, interleave=1")),        # needs rank >= 3
    ("interleave", LOAD.replace("swizzle=3", "swizzle=3, interleave=7")),
    ("dtype", LOAD.replace("swizzle=3", "swizzle=3, force_cu_dtype=40")),
]


@pytest.mark.parametrize("field,new", LIMITS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(LIMITS)])
def test_broken_limit_is_an_invalid_descriptor_at_the_encode_line(tmp_path, field, new):
    kernel = modelcheck.load(variant(tmp_path, LOAD, new))
    report = modelcheck.synccheck(kernel)
    assert report.verdict == "error", report.format()
    (finding,) = report.findings
    assert finding.kind == "invalid_descriptor"
    assert finding.details["field"] == field and finding.details["tensor_map"] == "load_map"
    assert "cuTensorMapEncodeTiled of tensor map load_map over src fails" in finding.message
    assert finding.details["operation"]["span"].line == LOAD_LINE


def test_map_wider_than_its_buffer_encodes_and_a_box_inside_the_buffer_is_clean(tmp_path):
    # the driver sees only a pointer, so a map reaching past src encodes (templates whose address the
    # device patches do this); the box at rows Y0.. of the view stays inside src, as on hardware
    kernel = modelcheck.load(variant(tmp_path, LOAD, LOAD.replace("GX, rows,", "GX, GY,")))
    report = modelcheck.synccheck(kernel)
    assert report.verdict == "clean", report.format()


def test_box_past_the_buffer_of_a_wider_map_is_oob_at_the_copy(tmp_path):
    # rows 48..55 of the view are inside the map (GY rows high) but are rows 56..63 of src: past its end
    path = variant(tmp_path, LOAD, LOAD.replace("GX, rows,", "GX, GY,"))
    text = path.read_text(encoding="utf-8").replace("load_map, X0, Y0, bar", "load_map, X0, Y0 + 32, bar")
    path.write_text(text, encoding="utf-8")
    copy_line = next(n for n, line in enumerate(text.splitlines(), 1) if "load_map, X0, Y0 + 32" in line)
    report = modelcheck.synccheck(modelcheck.load(path))
    assert report.verdict == "error", report.format()
    (finding,) = report.findings
    assert finding.kind == "oob" and finding.details["tensor_map"] == "load_map"
    assert "of its 14336-byte global allocation" in finding.message
    assert finding.details["operation"]["span"].line == copy_line


def test_misaligned_base_is_refused_from_the_shell(tmp_path):
    path = variant(tmp_path, "src.ptr_to([ROW0, 0])", "src.ptr_to([ROW0, 1])")
    proc = subprocess.run(["modelcheck", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "invalid_descriptor" in proc.stdout and "base: global address" in proc.stdout
    assert f"kernel.py:{LOAD_LINE}:" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_packed_call_limits_are_checked_too(tmp_path):
    # 128-byte box rows under a 32B swizzle
    kernel = modelcheck.load(variant(tmp_path, STORE, STORE.replace("1, 1, 0, 3, 0, 0)", "1, 1, 0, 1, 0, 0)")))
    (finding,) = modelcheck.racecheck(kernel).findings
    assert finding.kind == "invalid_descriptor" and finding.details["field"] == "swizzle"
    assert finding.details["operation"]["span"].line == STORE_LINE


@pytest.mark.parametrize("new,what", [
    (LOAD.replace("swizzle=3", "swizzle=5"), "swizzle mode 5 (CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B)"),
    (LOAD.replace("swizzle=3", "swizzle=6"), "swizzle mode 6 (CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)"),
    (LOAD.replace("swizzle=3", "swizzle=3, force_cu_dtype=7"), "element type"),
], ids=["flip-8b-swizzle", "atom-64b-swizzle", "forced-dtype"])
def test_valid_but_unmodeled_modes_are_incomplete(tmp_path, new, what):
    path = variant(tmp_path, LOAD, new)
    proc = subprocess.run(["modelcheck", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "INCOMPLETE" in proc.stdout and what in proc.stdout and f"kernel.py:{LOAD_LINE}:" in proc.stdout


# --------------------------------------------------------------------------- host statements outside the model

@pytest.mark.parametrize("new,message", [
    ("    for i in range(2):\n        T.evaluate(0)\n", "not supported in the host part"),
    ("    if GX > 2:\n        T.evaluate(0)\n", "not supported in the host part"),
    ('    T.call_packed("runtime.TVMSetStream", 0)\n', "host call 'runtime.TVMSetStream' is not modeled"),
    ('    m: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 2)\n', "one at a time"),
    ('    m: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("shape", 1)\n', "only tensor maps"),
    ("    v = T.cta_id([1])\n", "a thread, warp or CTA index is used in the host part"),
], ids=["for", "if", "other-packed-call", "two-maps", "other-stack-alloca", "cta-id"])
def test_unmodeled_host_statement_is_a_parse_error_with_its_line(tmp_path, capsys, new, message):
    path = variant(tmp_path, "    rows: T.let", new + "    rows: T.let")
    assert main(["check", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and f"kernel.py:{ROWS_LINE}:" in err and "Traceback" not in err


def test_map_allocated_but_never_encoded_is_a_parse_error_at_its_declaration(tmp_path):
    path = variant(tmp_path, "    rows: T.let", '    spare: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)\n'
                                              "    rows: T.let")
    with pytest.raises(modelcheck.ParseError, match="tensor map 'spare' is allocated but never encoded") as err:
        modelcheck.load(path)
    assert err.value.span.line == ROWS_LINE


def test_unknown_keyword_to_the_typed_encode_is_refused(tmp_path):
    path = variant(tmp_path, LOAD, LOAD.replace("swizzle=3", "swizzle=3, bogus=1"))
    with pytest.raises(modelcheck.ParseError, match="unexpected argument 'bogus'"):
        modelcheck.load(path)


def test_host_binding_that_needs_device_data_is_incomplete(tmp_path):
    path = variant(tmp_path, "    rows: T.let", "    first: T.let[T.float32] = src[0, 0]\n    rows: T.let")
    report = modelcheck.synccheck(modelcheck.load(path))
    assert report.verdict == "incomplete" and "host binding first" in report.format()


# --------------------------------------------------------------------------- the corpus kernels from the shell

SHELL = [("kda_fwd", ["--const", "SEQ_LEN=320"]), ("kda_fwd_single_m_o", ["--const", "SEQ_LEN=320"]),
         ("kda_fwd_no_async_fence", ["--const", "SEQ_LEN=320"]), ("kda_fwd_dvec_early", ["--const", "SEQ_LEN=320"]),
         ("fa4_fwd", []), ("fa4_fwd_p_overwrite", []), ("gemm_ws", []), ("gemm_persistent", []),
         ("gemm_persistent_acc_reuse", []), ("gemm_persistent_early_release", []), ("gdn_prefill", []),
         ("gdn_prefill_sinp_no_acquire", []), ("gdn_prefill_sinp_parity", [])]
# one kernel of each family in the edit-loop suite (the manifest tests check every one's verdicts from
# Python); the slow step runs them all from the shell
EDIT_LOOP = {"kda_fwd_dvec_early", "fa4_fwd_p_overwrite", "gemm_ws", "gemm_persistent_acc_reuse",
             "gdn_prefill_sinp_no_acquire"}


@pytest.mark.parametrize("name,args", [pytest.param(n, a, id=n, marks=() if n in EDIT_LOOP else pytest.mark.slow)
                                       for n, a in SHELL])
def test_corpus_kernel_gives_its_manifest_verdicts_from_the_command_line(name, args, capsys):
    entry = load_manifest()["kernels"][name]
    text = (KERNELS / entry["file"]).read_text(encoding="utf-8")
    assert "T.Ptr(T.void)" not in text and "tensormap" in text     # no descriptor parameters left
    for command, checker in (("sync", "synccheck"), ("race", "racecheck")):
        main([command, str(KERNELS / entry["file"]), *args, "--json"])
        r = json.loads(capsys.readouterr().out)
        failure = expectation_failure(name, r["verdict"], {f["kind"] for f in r["findings"]},
                                      entry["expect"][checker], r["summary"])
        assert failure is None, failure


def test_gemm_run_from_the_shell_matches_numpy(tmp_path):
    out = tmp_path / "gemm.npz"
    proc = subprocess.run(["modelcheck", "run", str(KERNELS / "gemm_ws.py"), "--input", "A=random:1",
                           "--input", "B=random:2", "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with np.load(out) as data:
        a = data["A"].view(ml_dtypes.bfloat16).astype(np.float64)
        b = data["B"].view(ml_dtypes.bfloat16).astype(np.float64)
        d = data["D"]
    ref = a @ b.T
    k = a.shape[1]
    bound = (k // 16 + 1) * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b).T)
    assert np.abs(ref).max() > 1 and (np.abs(d - ref) <= bound).all()
