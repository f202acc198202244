"""Tensor maps of packed 4-bit elements (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B; numsim/tensormap.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "host" / "tma_fp4.py"


def inputs(box_x: int = 128):
    src = np.random.default_rng(7).integers(0, 256, 32 * 128, dtype=np.uint8)
    return {"src": src, "out": np.zeros((16, box_x // 2), np.uint8)}


def test_box_of_packed_elements_lands_densely():
    kernel = modelcheck.load(FIX)
    data = inputs()
    res = numsim.run(kernel.func, data)
    assert res.termination == "completed" and res.diagnostics == (), res.diagnostics
    # elements 128..255 of rows 8..23: bytes 64..127 of each 128-byte row
    want = data["src"].reshape(32, 128)[8:24, 64:128]
    np.testing.assert_array_equal(res.outputs["out"], want)
    report = modelcheck.check(kernel, inputs=data)
    assert report.verdict == "clean", report.format()


def test_expect_tx_counted_in_elements_never_completes():
    kernel = modelcheck.load(FIX, NBYTES=128 * 16)
    report = modelcheck.synccheck(kernel, inputs())
    assert report.verdict == "error", report.format()


@pytest.mark.parametrize("consts, words", [({"X0": 127}, "mid-byte"), ({"BOX_X": 127, "NBYTES": 1008}, "odd")])
def test_unmodeled_packed_boxes_are_named(consts, words):
    kernel = modelcheck.load(FIX, **consts)
    data = inputs(consts.get("BOX_X", 128))
    with pytest.raises(numsim.UnsupportedTIRxError, match=words):
        numsim.run(kernel.func, data)
    assert modelcheck.synccheck(kernel, data).verdict == "incomplete"


def test_public_tensor_map_of_packed_elements_counts_bytes():
    src = np.zeros(32 * 128, np.uint8)
    tm = numsim.TensorMap(src, [256, 32], [128], [128, 16], [1, 1], "float4_e2m1fn")
    f = numsim.tensormap.decode(tm.numpy())
    assert (f.dtype, f.packed, f.global_shape, f.box_shape, f.box_bytes) == ("float4_e2m1fn", 2, (128, 32),
                                                                            (64, 16), 1024)
    with pytest.raises(numsim.TensorMapError, match="odd"):
        numsim.TensorMap(src, [256, 32], [128], [127, 16], [1, 1], "float4_e2m1fn")
