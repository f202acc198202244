"""`cp.reduce.async.bulk.tensor` (PTX ISA 9.7.9.25.5.3): the box addressed as a TMA store's is reduced element-wise
into global memory at completion (bulk-group tracked); each element's reduction is individually relaxed.gpu, so
the reductions of different CTAs into one box do not race, while a plain store into it does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim
from modelcheck.numsim.ops.tma_reduce import reduce_values

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "tma" / "reduce_add.py"


def _inputs():
    rng = np.random.default_rng(0)
    # small integers: every sum is exact in float32, whichever CTA's reduction lands first
    return {"acc": rng.integers(-50, 50, (24, 48)).astype(np.float32),
            "x": rng.integers(-50, 50, (2, 8, 16)).astype(np.float32)}


def test_the_ctas_tiles_are_added_into_the_box():
    func = ir.parse_file(FIXTURE)
    inputs = _inputs()
    res = numsim.run(func, inputs)
    want = inputs["acc"].copy()
    want[8:16, 16:32] += inputs["x"][0] + inputs["x"][1]
    np.testing.assert_array_equal(res.outputs["acc"], want)
    assert modelcheck.synccheck(func, inputs).verdict == "clean"
    assert modelcheck.racecheck(func, inputs).verdict == "clean"


def test_a_plain_store_into_the_reduced_box_races():
    func = modelcheck.load(str(FIXTURE), PLAIN=1).func
    r = modelcheck.racecheck(func, _inputs())
    assert [f.kind for f in r.findings] == ["data_race"]
    assert "gmem acc" in r.findings[0].message


def test_rewriting_the_source_before_wait_group_read_races():
    func = modelcheck.load(str(FIXTURE), REUSE=1).func
    r = modelcheck.racecheck(func, _inputs())
    assert r.verdict == "error" and all("smem tile" in f.message for f in r.findings)


@pytest.mark.parametrize("op, dtype, old, src, want", [
    ("add", "uint32", [0xFFFFFFFF, 5], [2, 7], [1, 12]),
    ("add", "float16", [1.0, 2048.0], [2.0 ** -11, 1.0], [1.0, 2048.0]),     # ties to even
    ("add", "bfloat16", [1.0, -3.0], [2.0 ** -8, 3.0], [1.0, 0.0]),
    ("min", "int64", [-5, 9], [3, -(2 ** 40)], [-5, -(2 ** 40)]),
    ("max", "float16", [np.nan, -1.0], [4.0, -2.0], [4.0, -1.0]),
    ("inc", "uint32", [3, 7], [5, 7], [4, 0]),
    ("dec", "uint32", [0, 9, 4], [5, 5, 5], [5, 5, 3]),
    ("xor", "uint64", [0xF0F0], [0xFF00], [0x0FF0]),
])
def test_reduction_operations(op, dtype, old, src, want):
    from modelcheck.numsim.values import NP_DTYPE
    t = np.dtype(NP_DTYPE.get(dtype, dtype))
    got = reduce_values(op, dtype, np.array(old).astype(t), np.array(src).astype(t))
    assert got.dtype == t
    np.testing.assert_array_equal(got.astype(np.float64), np.array(want).astype(t).astype(np.float64))


def test_the_op_classifies_with_its_map_coordinates_and_source():
    info = ir.classify("cp.reduce.async.bulk.tensor.3d.global.shared::cta.min.tile.bulk_group.L2::cache_hint",
                       ("handle", "int32", "int32", "int32", "handle", "uint64"))
    assert info is not None and info.supported and info.name == "cp.reduce.async.bulk.tensor"
    assert [o.name for o in info.operands] == ["tmap", "c0", "c1", "c2", "src", "cache_policy"]
    im2col = ir.classify("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col_no_offs.bulk_group",
                         ("handle", "int32", "int32", "int32", "handle"))
    assert im2col is not None and not im2col.supported


BULK = Path(__file__).resolve().parents[3] / "fixtures" / "tma" / "bulk_reduce_add.py"


def test_the_non_tensor_form_adds_size_bytes_and_flushes_f32_subnormals():
    rng = np.random.default_rng(1)
    acc = rng.integers(-50, 50, 64).astype(np.float32)
    x = rng.integers(-50, 50, (2, 64)).astype(np.float32)
    acc[0], x[:, 0] = 0.0, [1e-40, 0.0]           # a subnormal input: flushed to +0
    func = ir.parse_file(BULK)
    inputs = {"acc": acc, "x": x}
    res = numsim.run(func, inputs)
    want = acc + x[0] + x[1]
    want[0] = 0.0
    np.testing.assert_array_equal(res.outputs["acc"], want)
    assert modelcheck.racecheck(func, inputs).verdict == "clean"
    assert modelcheck.synccheck(func, inputs).verdict == "clean"


@pytest.mark.parametrize("plain", [0, 1])
def test_the_happens_before_graph_agrees_on_reductions(plain):
    """The graph orders two CTAs' relaxed.gpu reductions by their strength as Racecheck does (common.ordering)."""
    from modelcheck import hb
    from tests.modelcheck.hb.test_order import _verdicts
    kernel = modelcheck.load(str(FIXTURE), PLAIN=plain)
    raced, unordered, candidates, _ = _verdicts(hb.build(kernel.func, _inputs()))
    assert candidates > 0 and unordered == raced
    assert bool(raced) == bool(plain)
