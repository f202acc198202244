"""Binding a lowered device function's parameters to what its host passes.

The lowered device function names its parameters itself (`v`, `v_1`, `cse_v1`, ...): a tensor map's name can
be a buffer's name in the pre-lowering text, and some integers are computed by the host from the launch's
scalars; the lowered host function's launch says what goes where.  Fixtures: tests/fixtures/corpus_lowered
(written for this test in the 0.27 printer's style)."""
from __future__ import annotations

import numpy as np

import ir
from benchmarks.corpus import check
from modelcheck.numsim.tensormap import decode
from tests.manifest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "corpus_lowered"
SCALARS = {"n": 5, "sms": 3}


def test_the_host_launch_gives_each_position_its_argument():
    launch = check.HostLaunch(FIXTURES / "maps.host.py", "maps_kernel")
    assert [launch.map_index(i) for i in range(6)] == [None, 1, 0, None, None, None]
    assert launch.integer(3, SCALARS) == 40 and launch.integer(4, SCALARS) == 3    # min((40 + 15) >> 4, 3)
    assert launch.integer(4, {"n": 1, "sms": 148}) == 1
    assert launch.integer(3, {}) is None              # a scalar the capture lacks: not guessed
    assert check.HostLaunch(FIXTURES / "maps.host.py", "other_kernel").args == {}
    assert check.HostLaunch(FIXTURES / "missing.host.py", "maps_kernel").args == {}


def test_host_expressions_evaluate_only_integer_arithmetic_over_known_names():
    assert check._host_int("a * T.int64(8) + (b >> 1)", {"a": 2, "b": 6}, {}) == 19
    assert check._host_int("T.max(a, c)", {"a": 2}, {"c": "a * 3"}) == 6
    assert check._host_int('T.Cast("int32", a)', {"a": 2**31 + 5}, {}) == -2**31 + 5    # wraps like the device
    assert check._host_int('T.Cast("uint8", a)', {"a": -1}, {}) == 255
    for unknown in ("a * b", "T.Cast(\"float32\", a)", "x[0]", "T.tvm_struct_get(args, 0, 12)", "a / 2", "a +"):
        assert check._host_int(unknown, {"a": 2}, {}) is None, unknown


def test_lowered_parameters_get_the_hosts_maps_and_integers_not_same_named_buffers(tmp_path):
    func = ir.parse_file(FIXTURES / "maps.lowered.py")
    v, w = np.arange(64, dtype=np.float32), np.arange(100, 164, dtype=np.float32)
    np.savez(tmp_path / "cap.npz", v=v, w=w, out=np.zeros(32, np.float32))
    inputs, problems = check.captured_inputs(tmp_path, {"npz": "cap.npz", "scalars": SCALARS}, func,
                                             FIXTURES / "maps.pre.py")
    assert problems == []
    first, second = decode(inputs["v"]), decode(inputs["v_1"])
    # the host passes the map over `w` (box 16) first and the map over `v` (box 32) second
    assert first.box_shape[:1] == (16,) and second.box_shape[:1] == (32,)
    assert (inputs["v"].tensor_base == w).all() and (inputs["v_1"].tensor_base == v).all()
    assert inputs["cse_v1"] == 40 and inputs["cse_v10"] == 3 and inputs["n"] == 5
    assert (inputs["out_ptr"] == 0).all()


def test_a_map_wider_than_the_captured_bytes_binds_as_the_driver_encodes_it(tmp_path):
    # the driver encodes a map over more than a buffer holds (a template the kernel patches): it is given, as
    # the pre-lowering prelude gives it (bind_host_maps), its extent not held to the bytes; a TMA past them
    # would be oob at the op (tests/modelcheck/numsim/test_tma.py)
    func = ir.parse_file(FIXTURES / "maps.lowered.py")
    np.savez(tmp_path / "cap.npz", v=np.zeros(64, np.float32), w=np.zeros(8, np.float32),
             out=np.zeros(32, np.float32))
    inputs, problems = check.captured_inputs(tmp_path, {"npz": "cap.npz", "scalars": SCALARS}, func,
                                             FIXTURES / "maps.pre.py")
    assert problems == [] and {"v", "v_1"} <= set(inputs)
    wide = decode(inputs["v"])                       # the map over `w` (8 floats), its box 16 wide
    assert not wide.within_base and wide.base_nbytes == 32 and wide.box_shape[:1] == (16,)
