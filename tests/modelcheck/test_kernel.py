"""modelcheck.load / parse / as_func accept files, text, IR and objects with .script()."""
from __future__ import annotations

import importlib.util

import pytest

import ir
import modelcheck
from tests.manifest import KERNELS

FIXED = KERNELS / "producer_overtaking_fixed.py"


def test_load_overrides_constants_everywhere_they_are_used():
    k = modelcheck.load(FIXED, ROUNDS=6)
    assert k.constants == {"ROUNDS": 6} and k.overrides == {"ROUNDS": 6}
    assert k.func.params[0].buffer.shape == (ir.ConstRef("ROUNDS", "int32"),)
    loops = [n for n in ir.walk(k.func.body) if isinstance(n, ir.For)]
    assert loops and all(loop.stop == ir.ConstRef("ROUNDS", "int32") for loop in loops)
    assert modelcheck.load(FIXED).constants == {"ROUNDS": 4}
    assert not ir.same_ir(k.func, modelcheck.load(FIXED).func)


def test_parse_matches_load():
    assert modelcheck.parse(FIXED.read_text(), str(FIXED)) == modelcheck.load(FIXED).func


def test_as_func_accepts_primfunc_kernel_and_script_objects():
    k = modelcheck.load(FIXED)

    class Scripted:
        def script(self):
            return FIXED.read_text()

    assert modelcheck.as_func(k) is k.func
    assert modelcheck.as_func(k.func) is k.func
    assert modelcheck.as_func(Scripted()) == k.func
    with pytest.raises(TypeError, match="object with .script()"):
        modelcheck.as_func(42)


def test_as_func_accepts_a_real_tvm_tirx_function():
    pytest.importorskip("tvm_tirx")
    spec = importlib.util.spec_from_file_location("fixed_kernel", FIXED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    func = modelcheck.as_func(module.producer_overtaking_fixed)
    assert ir.same_ir(func, modelcheck.load(FIXED).func)


def test_kernel_script_round_trips():
    k = modelcheck.load(FIXED, ROUNDS=3)
    assert ir.parse(k.script()) == k.func
