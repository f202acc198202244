"""Tensor maps held in memory (numsim/tmap_values.py, ops/tmap.py): copies, tensormap.replace, the tensormap
proxy's fences, and maps carried from one launch to the next."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.memory import GlobalMemory
from modelcheck.numsim.tensormap import BoundTensorMap, MapBuffer, TensorMap, TensorMapError, with_maps
from modelcheck.numsim.tmap_values import MapStore, candidates, decode, stray_words, tokens

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tmap"
X = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)


def _inputs(words: int, box: int = 8) -> dict:
    template = TensorMap(X.reshape(-1), (32, 32), (128,), (32, box), (1, 1), "float32")
    return {"x": X.copy(), "maps": with_maps(np.zeros(words, np.int64), {0: template}),
            "out": np.zeros((8, 32), np.float32)}


def _run(name: str, inputs: dict, **consts):
    kernel = modelcheck.load(FIXTURES / f"{name}.py", **consts)
    return numsim.run(kernel.func, inputs, unsupported="incomplete")


def test_a_copy_through_registers_or_elements_moves_the_map():
    for consts in ({}, {"ELEMENTS": 1}):
        res = _run("partial_copy", _inputs(32), **consts)
        assert res.termination == "completed", res.diagnostics
        np.testing.assert_array_equal(res.outputs["out"], X[:8])


@pytest.mark.parametrize("consts", [{"COPIES": 3}, {"BUMP": 1}])
def test_a_partial_or_altered_copy_is_incomplete_at_the_tma(consts):
    res = _run("partial_copy", _inputs(32), **consts)
    assert res.termination == "incomplete"
    (diag,) = [d for d in res.diagnostics if d.kind == "analysis_incomplete"]
    assert "are no whole tensor map (bytes 0-" in diag.message and diag.span.line == 35


def test_bytes_that_hold_no_map_are_incomplete_not_a_guess():
    inputs = _inputs(32)
    inputs["maps"] = np.zeros(32, np.int64)          # the template's bytes were never a map the model knows
    res = _run("partial_copy", inputs)
    assert res.termination == "incomplete"
    assert any("hold no tensor map the model knows" in d.message for d in res.diagnostics)


def test_replace_edits_the_map_value():
    res = _run("replace_fields", _inputs(16, box=4))
    assert res.termination == "completed", res.diagnostics
    want = np.zeros((8, 32), np.float32)
    want[:6] = X[4:10]          # global_address row 4, 6 rows (global_dim 1), an 8-row box: the rest zero filled
    np.testing.assert_array_equal(res.outputs["out"], want)


def test_an_unmodeled_field_is_incomplete_naming_it():
    res = _run("replace_fields", _inputs(16, box=4), FIELD=1)
    assert res.termination == "incomplete"
    assert any("swizzle_mode" in d.message and d.span.line == 30 for d in res.diagnostics)


def test_a_use_without_the_acquire_is_reported():
    res = _run("replace_fields", _inputs(16, box=4), ACQUIRE=0)
    (diag,) = [d for d in res.diagnostics if d.kind == "tensormap_proxy_fence_missing"]
    assert diag.details["missing"] == "acquire"


def test_maps_left_in_memory_carry_into_the_next_launch():
    first = _run("replace_fields", _inputs(16, box=4))
    maps = first.outputs["maps"]
    assert isinstance(maps, MapBuffer) and set(maps.tensor_maps) == {0}
    # the edited map describes the first launch's x output: handed on with it, it binds to the next launch's x
    inputs = {"x": first.outputs["x"], "maps": with_maps(np.zeros(32, np.int64), {0: maps.tensor_maps[0]}),
              "out": np.zeros((8, 32), np.float32)}
    second = _run("partial_copy", inputs, ELEMENTS=1)
    assert second.termination == "completed", second.diagnostics     # written before the launch: no fence needed
    want = np.zeros((8, 32), np.float32)
    want[:6] = X[4:10]
    np.testing.assert_array_equal(second.outputs["out"], want)


def test_with_maps_checks_the_offsets():
    template = TensorMap(X.reshape(-1), (32, 32), (128,), (32, 8), (1, 1), "float32")
    with pytest.raises(TensorMapError):
        with_maps(np.zeros(16, np.int64), {8: template})
    with pytest.raises(TensorMapError):
        with_maps(np.zeros(16, np.int64), {64: template})


def test_the_workspace_kernel_runs_like_numpy_and_its_stale_twin_does_not():
    from tests.manifest import KERNELS, inputs_builder, load_manifest
    entries = load_manifest()["kernels"]
    build = inputs_builder(entries["tmap_workspace"])
    reference = inputs_builder(dict(entries["tmap_workspace"], inputs_builder=entries["tmap_workspace"]["reference"]))
    for consts, same in (({}, True), ({"SYNC": 0}, False)):
        inputs = build({})
        res = numsim.run(modelcheck.load(KERNELS / "tmap_workspace.py", **consts).func, inputs)
        assert res.termination == "completed", res.diagnostics
        # without the barrier the default schedule runs warp 1 first: it loads through the slot's stale map
        assert np.array_equal(res.outputs["out"], reference(inputs)["out"]) == same


@pytest.mark.parametrize("via_buffer", [0, 1])
def test_a_parameter_map_copied_to_a_workspace_and_edited(via_buffer):
    template = TensorMap(X.reshape(-1), (32, 32), (128,), (32, 8), (1, 1), "float32")
    inputs = {"x": X.copy(), "tmap": template.numpy(), "ws": np.zeros(16, np.int64), "out": np.zeros((8, 32), np.float32)}
    res = _run("param_copy", inputs, VIA_BUFFER=via_buffer)
    assert res.termination == "completed", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], X[8:16])
    assert set(res.outputs["ws"].tensor_maps) == {0}      # the edited map, carried in the output



# --------------------------------------------------------------------------- byte provenance

def _two_maps() -> dict:
    t = TensorMap(X.reshape(-1), (32, 32), (128,), (32, 8), (1, 1), "float32")
    t2 = TensorMap(-X.reshape(-1), (32, 32), (128,), (32, 8), (1, 1), "float32")
    # the workspace starts as numbers, none of them a map's bytes
    return {"x": X.copy(), "tmap": t.numpy(), "tmap2": t2.numpy(), "ws": np.full(16, 0x0123456789, np.int64),
            "out": np.zeros((8, 32), np.float32)}


@pytest.mark.parametrize("consts", [{}, {"VIA_SHARED": 1}, {"VIA_SHARED": 1, "BYTES": 1}])
def test_a_map_copied_piecewise_is_that_map(consts):
    res = _run("piecewise_copy", _two_maps(), **consts)
    assert res.termination == "completed", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"], X[8:16])
    assert set(res.outputs["ws"].tensor_maps) == {0}


@pytest.mark.parametrize("consts, where", [
    ({"PIECES": 4}, "bytes 0-63 are bytes 0-63 of map #0 (tmap); bytes 64-127 are no map's bytes"),
    ({"OTHER": 1}, "bytes 32-47 are bytes 32-47 of map #1 (tmap2); bytes 48-127 are bytes 48-127 of map #0"),
    # the high half of word 2 from word 3's: equal bytes under a constant tag, distinct under the hash
    ({"VIA_SHARED": 1, "SWAP": 1}, "bytes 16-23 are no map's bytes"),
])
def test_a_half_mixed_or_shifted_copy_is_incomplete_saying_where_its_bytes_came_from(consts, where):
    res = _run("piecewise_copy", _two_maps(), **consts)
    assert res.termination == "incomplete"
    (diag,) = [d for d in res.diagnostics if d.kind == "analysis_incomplete"]
    replace = next(k + 1 for k, text in enumerate((FIXTURES / "piecewise_copy.py").read_text().splitlines())
                   if "tensormap_replace" in text)
    assert where in diag.message and diag.span.line == replace, diag.message


def test_every_byte_of_a_token_names_its_map_and_offset():
    a, b = tokens(0).view(np.uint8), tokens(1).view(np.uint8)
    ok, n, i = decode(tokens(1), 2)
    assert ok.all() and (n == 1).all() and (i == np.arange(16)).all()
    assert not decode(tokens(1), 1)[0].any()               # no such value in this run
    assert not decode(np.zeros(16, np.uint64), 2)[0].any()  # zeroed memory holds no map
    for k in range(8):                                      # any one byte from the other map, or another word
        mixed = a.copy()
        mixed[8 + k] = b[8 + k]
        assert not decode(mixed.view("<u8"), 2)[0][1]
        shifted = a.copy()
        shifted[8 + k] = a[16 + k]
        assert not decode(shifted.view("<u8"), 2)[0][1]


def test_stray_map_bytes_left_in_an_output_say_whose_they_are():
    gmem = GlobalMemory()
    gmem.add("ws", np.zeros(32, np.int64))
    store = MapStore()
    n = store.new(BoundTensorMap("b"))      # only its name is used here
    ws = gmem.allocs["ws"].data.view("<u8")
    ws[1:8] = tokens(n)[1:8]          # a map's words 1-7, its word 0 patched by a plain store (left as data)
    ws[16:32] = tokens(n)             # a whole map: not stray
    assert stray_words(store, gmem, ["ws"]) == {"ws": "8-63 (bytes 8-63 of map #0 (b))"}


def test_candidates_are_the_words_decode_tests_by_hash():
    """The scan of output buffers in cache-sized pieces finds every token word (and the few data words whose low
    half looks like one), across piece boundaries."""
    rng = np.random.default_rng(5)
    piece = 1 << 16
    words = rng.integers(0, 2 ** 63, size=3 * piece + 5, dtype=np.uint64)
    for n, at in ((0, 3), (1, piece - 8), (2, 2 * piece + 2)):     # map 1 straddles the first piece's end
        words[at:at + 16] = tokens(n)
    words[100] = tokens(2)[7]                                       # a stray word of map 2
    ok, ns, _ = decode(words, 3)
    cand = candidates(words, 3)
    np.testing.assert_array_equal(cand, np.flatnonzero(ns < 3))     # decode's first test, before the hash
    np.testing.assert_array_equal(cand[ok[cand]], np.flatnonzero(ok))
    assert ok.sum() == 3 * 16 + 1
    assert candidates(np.zeros(10, np.uint64), 3).size == 0
