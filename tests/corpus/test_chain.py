"""Chained launches in the corpus benchmark (benchmarks/corpus/chain.py): a function's buffers that an earlier
launch writes come from NumSim's run of that launch -- tensor maps held as data included."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

import ir
from benchmarks.corpus.chain import Chain
from benchmarks.corpus.check import captured_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tmap"
X = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
# the encode record the capture writes for descriptor words found in a buffer (capture.py: descriptor_buffers)
ENCODE = {"global_bytes": "__global_x", "byte_offset": 0, "buffer_byte_offset": 0, "dims": [32, 32],
          "strides": [128], "box": [32, 4], "element_strides": [1, 1], "dtype": "float32", "swizzle": 0,
          "oob_fill": 0}


def _cache(tmp_path: Path) -> tuple[Path, dict]:
    """A corpus cache of two launches: `edit` (replace_fields: patches the map at maps[0]) then `use`
    (partial_copy with ELEMENTS = 1: copies it and loads through the copy), sharing x and maps."""
    for name, fixture in (("edit", "replace_fields"), ("use", "partial_copy")):
        text = (FIXTURES / f"{fixture}.py").read_text().replace("ELEMENTS = 0", "ELEMENTS = 1")
        (tmp_path / f"{name}.pre.py").write_text(text)
    np.savez(tmp_path / "edit.npz", x=X, maps=np.zeros(16, np.int64), out=np.zeros((8, 32), np.float32),
             __global_x=X.reshape(-1).view(np.uint8))
    np.savez(tmp_path / "use.npz", x=np.zeros_like(X), maps=np.zeros(32, np.int64),
             out=np.zeros((8, 32), np.float32))
    buffers = {"x": [[32, 32], "float32"], "out": [[8, 32], "float32"]}
    mod = {"module": "m", "functions": [
        {"function": "edit", "pre": "edit.pre.py",
         "captured": {"npz": "edit.npz", "buffers": dict(buffers, maps=[[16], "int64"]),
                      "descriptor_buffers": {"maps": [ENCODE]}}},
        {"function": "use", "pre": "use.pre.py",
         "captured": {"npz": "use.npz", "buffers": dict(buffers, maps=[[32], "int64"]),
                      "shared_with_unlaunched": {"x": "edit.x", "maps": "edit.maps"}}}]}
    return tmp_path, mod


def test_a_launch_takes_the_buffers_and_maps_an_earlier_launch_wrote(tmp_path):
    cache, mod = _cache(tmp_path)
    use = mod["functions"][1]
    func = ir.parse_file(cache / use["pre"])
    inputs, problems = captured_inputs(cache, use["captured"], func)
    assert not problems
    chained, info = Chain(cache, mod, None, 30).inputs(use, func, inputs, "pre")
    # `maps` is 16 words in `edit` and 32 in `use`: it does not fit, so it stays as captured, and says so
    assert info["launches"] == {"edit": "edit (pre) ran to completion; maps does not fit maps"}
    assert info["buffers"] == {"x": "edit.x"}
    np.testing.assert_array_equal(chained["x"], X)          # what `edit` left in x, not the captured zeros
    assert chained["maps"] is inputs["maps"]


def test_the_edited_map_reaches_the_next_launch(tmp_path):
    from modelcheck import numsim
    cache, mod = _cache(tmp_path)
    mod["functions"][1]["captured"]["buffers"]["maps"] = [[16], "int64"]
    np.savez(cache / "use.npz", x=np.zeros_like(X), maps=np.zeros(16, np.int64), out=np.zeros((8, 32), np.float32))
    text = (cache / "use.pre.py").read_text().replace('T.Buffer((32,), "int64")', 'T.Buffer((16,), "int64")')
    (cache / "use.pre.py").write_text(text.replace("maps[16 + i] = maps[i]", "maps[i] = maps[i]")
                                      .replace("T.address_of(maps[16])", "T.address_of(maps[0])"))
    use = mod["functions"][1]
    func = ir.parse_file(cache / use["pre"])
    inputs, _ = captured_inputs(cache, use["captured"], func)
    inputs, info = Chain(cache, mod, None, 30).inputs(use, func, inputs, "pre")
    assert info["buffers"] == {"x": "edit.x", "maps": "edit.maps"}
    res = numsim.run(func, inputs, unsupported="incomplete")
    assert res.termination == "completed", res.diagnostics
    want = np.zeros((8, 32), np.float32)
    want[:6] = X[4:10]                       # the edit's map: row 4 on, 6 rows, zero fill past them
    np.testing.assert_array_equal(res.outputs["out"], want)


def test_a_launch_that_stops_is_not_chained(tmp_path):
    cache, mod = _cache(tmp_path)
    shutil.copy(FIXTURES / "replace_fields.py", cache / "edit.pre.py")
    text = (cache / "edit.pre.py").read_text().replace("FIELD = 0", "FIELD = 1")     # an unmodeled field
    (cache / "edit.pre.py").write_text(text)
    use = mod["functions"][1]
    func = ir.parse_file(cache / use["pre"])
    inputs, _ = captured_inputs(cache, use["captured"], func)
    chained, info = Chain(cache, mod, None, 30).inputs(use, func, inputs, "pre")
    assert info["buffers"] == {}
    assert "stopped (incomplete)" in info["launches"]["edit"] and "swizzle_mode" in info["launches"]["edit"]
    assert chained["x"] is inputs["x"]
