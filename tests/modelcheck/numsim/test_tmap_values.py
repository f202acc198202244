"""Tensor maps held in memory (numsim/tmap_values.py, ops/tmap.py): copies, tensormap.replace, the tensormap
proxy's fences, and maps carried from one launch to the next."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.numsim.tensormap import MapBuffer, TensorMap, TensorMapError, with_maps

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
    assert "partial, misaligned or altered copy" in diag.message and diag.span.line == 35


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

