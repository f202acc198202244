"""Binding a lowered device function's tensor-map parameters to the maps its host encodes.

The lowered device function names its parameters itself (`v`, `v_1`, ...), and such a name can be a
buffer's name in the pre-lowering text; the lowered host function's launch says which map goes where.
Fixtures: tests/fixtures/corpus_lowered (written for this test in the 0.27 printer's style)."""
from __future__ import annotations

import numpy as np

import ir
from benchmarks.corpus import check
from modelcheck.numsim.tensormap import decode
from tests.manifest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "corpus_lowered"


def test_the_host_launch_gives_each_position_its_map():
    assert check.host_call_maps(FIXTURES / "maps.host.py", "maps_kernel") == {1: 1, 2: 0}
    assert check.host_call_maps(FIXTURES / "maps.host.py", "other_kernel") == {}
    assert check.host_call_maps(FIXTURES / "missing.host.py", "maps_kernel") == {}


def test_a_map_parameter_named_like_a_buffer_gets_the_map_not_the_buffer(tmp_path):
    func = ir.parse_file(FIXTURES / "maps.lowered.py")
    v, w = np.arange(64, dtype=np.float32), np.arange(100, 164, dtype=np.float32)
    np.savez(tmp_path / "cap.npz", v=v, w=w, out=np.zeros(32, np.float32))
    inputs, problems = check.captured_inputs(tmp_path, {"npz": "cap.npz"}, func, FIXTURES / "maps.pre.py")
    assert problems == []
    first, second = decode(inputs["v"]), decode(inputs["v_1"])
    # the host passes the map over `w` (box 16) first and the map over `v` (box 32) second
    assert first.box_shape[:1] == (16,) and second.box_shape[:1] == (32,)
    assert (inputs["v"].tensor_base == w).all() and (inputs["v_1"].tensor_base == v).all()
    assert (inputs["out_ptr"] == 0).all()
