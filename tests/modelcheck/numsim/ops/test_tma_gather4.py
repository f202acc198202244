"""`cp.async.bulk.tensor.2d...tile::gather4` (PTX ISA 9.7.9.27): four rows of a rank-2 map, each the box's
width from the column coordinate on, land one after the other in shared memory; the whole 4-row box (filled
elements included) is the complete_tx byte count."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "tma" / "gather4.py"
GY, GX, BOX_X, X0 = 40, 48, 16, 8


def _inputs(rows, box_x=BOX_X):
    src = np.arange(GY * GX, dtype=np.float32).reshape(GY, GX)
    return {"src": src, "rows": np.array(rows, dtype=np.int32), "out": np.zeros(4 * box_x, np.float32)}


def _expected(rows):
    src = _inputs(rows)["src"]
    want = np.zeros((4, BOX_X), np.float32)
    for k, r in enumerate(rows):
        for j in range(BOX_X):
            if 0 <= r < GY and X0 + j < GX:
                want[k, j] = src[r, X0 + j]
    return want.reshape(-1)


def test_gather4_brings_the_four_rows_in_order():
    rows = [7, 2, 31, 2]
    res = numsim.run(ir.parse_file(FIXTURE), _inputs(rows))
    np.testing.assert_array_equal(res.outputs["out"], _expected(rows))


def test_the_128b_swizzle_permutes_each_row_as_in_a_four_row_box():
    """Row k's 16-byte chunk c lands at chunk c ^ k (128B swizzle, 128-byte rows, 1024-aligned tile)."""
    rows = [5, 0, 17, 33]
    kernel = modelcheck.load(str(FIXTURE), SWIZZLE=3, BOX_X=32)
    res = numsim.run(kernel.func, _inputs(rows, 32))
    src = _inputs(rows, 32)["src"]
    want = np.zeros((4, 32), np.float32)
    for k, r in enumerate(rows):
        for j in range(32):
            chunk, word = divmod(j, 4)
            want[k, (chunk ^ k) * 4 + word] = src[r, X0 + j]
    np.testing.assert_array_equal(res.outputs["out"].reshape(4, 32), want)


def test_rows_outside_the_tensor_are_zero_filled_and_counted():
    rows = [3, -1, GY, 39]
    func = ir.parse_file(FIXTURE)
    res = numsim.run(func, _inputs(rows))
    np.testing.assert_array_equal(res.outputs["out"], _expected(rows))
    assert modelcheck.synccheck(func, _inputs(rows)).verdict == "clean"
    assert modelcheck.racecheck(func, _inputs(rows)).verdict == "clean"


def test_expecting_one_row_of_bytes_is_a_tx_error():
    kernel = modelcheck.load(str(FIXTURE), EXPECT=BOX_X * 4)
    report = modelcheck.synccheck(kernel, _inputs([0, 1, 2, 3]))
    assert report.verdict == "error"
    assert "mbarrier_transaction_over_delivery" in {f.kind for f in report.findings}


def test_gather4_round_trips_through_the_printer():
    func = ir.parse_file(FIXTURE)
    assert ir.parse(ir.print_func(func)) == func


def test_an_l2_prefetch_of_the_rows_is_a_hint_that_changes_nothing():
    """cp.async.bulk.prefetch{.tensor} (PTX ISA: a hint to bring data into L2) runs as a no-op: same tile, and
    both checkers have a verdict (before, the prefetch was an unmodeled operation: incomplete)."""
    rows = [7, 2, 31, 2]
    kernel = modelcheck.load(str(FIXTURE), PREFETCH=1)
    res = numsim.run(kernel.func, _inputs(rows))
    np.testing.assert_array_equal(res.outputs["out"], _expected(rows))
    assert modelcheck.synccheck(kernel.func, _inputs(rows)).verdict == "clean"
    assert modelcheck.racecheck(kernel.func, _inputs(rows)).verdict == "clean"
