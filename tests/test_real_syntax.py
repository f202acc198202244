"""The real-syntax corpus (kernels/real/): its make-up, its numpy references, its known gaps.

Verdicts are asserted by tests/test_manifest.py like every corpus kernel's; which real parser
accepts each kernel by tests/conformance/test_real_syntax_corpus.py.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim
from modelcheck.numsim.errors import UnsupportedTIRxError
from modelcheck.numsim.inputs import resolve_dims
from tests.manifest import KERNELS, entries, inputs_builder

REAL = [(n, e) for n, e in entries() if e["file"].startswith("real/")]


def form(text: str) -> str:
    """Which text form a kernel is written in."""
    if re.search(r"^from tvm_tirx\.script import", text, re.MULTILINE):
        return "tirx-authoring"                    # apache-tvm-tirx 0.1.0a4: @T.function
    if re.search(r"^from tvm\.script import", text, re.MULTILINE):
        return "tvm-authoring"                     # tvm.script as TVM's codegen tests write it
    if "T.launch_thread(" in text and "T.cta_id(" not in text:
        return "lowered"                           # the 0.27 printer after lowering
    if "T.cta_id(" in text and "@T.prim_func" in text:
        return "pre-lowering"                      # the 0.27 printer before lowering
    return "unknown"


def test_corpus_size_and_mix():
    assert len(REAL) >= 20
    forms = {n: form((KERNELS / e["file"]).read_text(encoding="utf-8")) for n, e in REAL}
    assert "unknown" not in forms.values(), forms
    counts = {f: list(forms.values()).count(f) for f in set(forms.values())}
    assert counts["pre-lowering"] >= 6 and counts["lowered"] >= 4 and counts["tvm-authoring"] >= 4, counts
    assert counts.get("tirx-authoring", 0) >= 2, counts
    buggy = [n for n, e in REAL if e["bug"]]
    assert 0.35 * len(REAL) <= len(buggy) <= 0.65 * len(REAL)
    # a bug twin differs from its fixed partner by a small edit, not a rewrite
    for name, entry in REAL:
        if entry["bug"]:
            a, b = ({ln.strip() for ln in (KERNELS / f).read_text(encoding="utf-8").split("\n@T.")[-1].splitlines()}
                    for f in (entry["file"], f"real/{entry['twin']}.py"))
            assert len(a ^ b) <= 6, (name, sorted(a ^ b))


def test_pre_lowering_kernels_use_the_printers_idioms():
    """The pre-lowering kernels are written as the 0.27 printer writes: commented import header, TypeVar
    dimensions or static shapes, a device entry attribute, scope ids, positional-modifier PTX only."""
    for name, entry in REAL:
        text = (KERNELS / entry["file"]).read_text(encoding="utf-8")
        if form(text) != "pre-lowering":
            continue
        assert text.startswith("# from typing import TypeVar\n# from tvm.script import tirx as T\n"), name
        assert '"tirx.device_entry": T.bool(True)' in text, name
        assert not re.search(r"T\.ptx\.\w+\.\w+\(|T\.ptx\[", text), f"{name}: chained or string-indexed PTX"


REFERENCED = [(n, e) for n, e in REAL if e.get("reference")]
# a kernel whose gap stops NumSim (an unmodeled operation) fails here until the gap is closed: strict xfail
REFERENCE_CASES = [pytest.param(n, e, id=n, marks=pytest.mark.xfail(raises=UnsupportedTIRxError, strict=True))
                   if e.get("known_gap") and e["expect"].get("numsim") is None else pytest.param(n, e, id=n)
                   for n, e in REFERENCED]


def _reference(entry):
    return inputs_builder({"inputs_builder": entry["reference"]})


@pytest.mark.parametrize("name,entry", REFERENCE_CASES)
def test_numsim_matches_the_numpy_reference(name, entry):
    kernel = modelcheck.load(KERNELS / entry["file"])
    inputs = numsim.default_inputs(kernel.func, inputs_builder(entry)({}))
    result = numsim.run(kernel.func, inputs)
    assert result.verdict == "clean", result.diagnostics
    param = {p.buffer.name: p.name for p in kernel.func.params if p.buffer is not None}
    expected = _reference(entry)(inputs)
    assert expected
    for buf, want in expected.items():
        before = np.asarray(inputs.get(param.get(buf, buf), inputs.get(buf))).reshape(want.shape)
        assert not np.allclose(before, want), f"{name}.{buf}: the reference equals the initial contents"
        got = result.outputs[param.get(buf, buf)].reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=f"{name}.{buf}")


def test_at_least_a_few_references():
    assert len(REFERENCED) >= 8


def test_known_gaps_are_visible_in_the_expectations():
    """A kernel marked with a known gap is not expected clean everywhere: when modelcheck learns the
    idiom, its expectations (and the note) must change."""
    gaps = [(n, e) for n, e in REAL if e.get("known_gap")]
    assert gaps
    for name, entry in gaps:
        # a stage listed as null (not decided: the gap stops it) or not clean / not proved
        stages = [entry["expect"][s] for s in ("numsim", "synccheck", "racecheck", "prove") if s in entry["expect"]]
        assert any(x is None or x["verdict"] not in ("clean", "proved") for x in stages), name


def test_cluster_destination_on_a_one_cta_cluster_is_shared_cta():
    """tma_ring1_cluster_pre: a TMA load into shared::cluster on a one-CTA cluster lands in the CTA's own shared
    memory and completes on its own barrier, as a shared::cta load would (the former known gap)."""
    entry = dict(entries())["tma_ring1_cluster_pre"]
    assert "known_gap" not in entry
    kernel = modelcheck.load(KERNELS / entry["file"])
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, inputs_builder(entry)({})))
    assert res.termination == "completed" and res.verdict == "clean"


# --------------------------------------------------------------------------- lowered-form dimensions

LOWERED = '''
@T.prim_func
def k(x_ptr: T.handle("float32", "global"), y_ptr: T.handle("float32", "global")):
    x_dim0 = T.int64()
    x = T.decl_buffer((x_dim0 * T.int64(128),), data=x_ptr, elem_offset=0, layout=None)
    y_dim0 = T.int64()
    y_dim1 = T.int64()
    y = T.decl_buffer((y_dim0 * y_dim1,), data=y_ptr, elem_offset=0, layout=None)
    with T.launch_thread("blockIdx.x", 1) as blockIdx_x:
        threadIdx_x = T.launch_thread("threadIdx.x", 32)
        x[threadIdx_x] = y[threadIdx_x]
'''


def test_lowered_flat_extent_with_a_constant_factor_takes_its_dimension_from_the_input():
    func = ir.parse(LOWERED, "lowered.py")
    y = np.zeros((2, 16), np.float32)
    assert resolve_dims(func, {"x_ptr": np.zeros((4, 128), np.float32), "y_ptr": y}) == \
        {"x_dim0": 4, "y_dim0": 2, "y_dim1": 16}
    assert resolve_dims(func, {"x_ptr": np.zeros(512, np.float32), "y_ptr": y})["x_dim0"] == 4
    # a flat size the constant factors do not divide binds nothing (the run then names the missing dimension)
    assert "x_dim0" not in resolve_dims(func, {"x_ptr": np.zeros(500, np.float32), "y_ptr": y})
    result = numsim.run(func, {"x_ptr": np.zeros(256, np.float32), "y_ptr": np.ones((2, 16), np.float32)})
    assert result.verdict == "clean" and result.outputs["x_ptr"][:32].sum() == 32


def test_the_lowered_tma_ring_with_its_prefetch_is_clean_and_matches_numpy():
    """tma_ring2_lowered once had a known gap (prefetch.tensormap was not modeled); the prefetch is a no-op on
    data here (tensor maps are never written through memory in the model): clean, and numpy's values."""
    entry = dict(entries())["tma_ring2_lowered"]
    text = (KERNELS / entry["file"]).read_text(encoding="utf-8")
    assert text.count("T.ptx.prefetch(") == 1 and "known_gap" not in entry
    func = ir.parse(text, "tma_ring2_lowered.py")
    inputs = numsim.default_inputs(func, inputs_builder(entry)({}))
    result = numsim.run(func, inputs)
    assert result.verdict == "clean"
    np.testing.assert_allclose(result.outputs["out_ptr"], _reference(entry)(inputs)["out"], rtol=1e-6)
