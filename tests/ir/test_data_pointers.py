"""`X.data` as another buffer's `data=`: the data pointer of X, without the elem_offset X's declaration adds
(TVM keeps that in the buffer; issue 14: flash_mla's views of views were placed twice as far)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
from ir.canonical import fold
import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parent.parent / "fixtures" / "data_pointers" / "data_of_a_view.py"


def test_the_data_of_a_view_is_its_pools_pointer():
    func = ir.parse_file(FIX)
    offsets = {n.buffer.name: n.buffer.byte_offset for n in ir.walk(func.body) if isinstance(n, ir.DeclBuffer)}
    assert fold(offsets["buffer_1"]) == ir.Const(32, "int64")
    assert fold(offsets["buffer_2"]) == ir.Const(32, "int64")     # 8 uint32 from the pool, not 64


def test_the_overlay_reads_what_the_bytes_view_wrote():
    func = modelcheck.load(FIX).func
    res = numsim.run(func, numsim.default_inputs(func, None))
    assert not res.diagnostics
    assert list(res.outputs["out"]) == [int.from_bytes(bytes([1, 2, 3, 4]), "little"),
                                        int.from_bytes(bytes([5, 6, 7, 8]), "little")]
    assert res.outputs["out"].dtype == np.uint32


SCALAR = FIX.with_name("scalar_source_data.py")


def test_a_scalars_source_data_is_its_address():
    """`desc.source.data` (apache-tvm 0.27's print of a declared scalar's address) is `T.address_of(desc[0])`:
    the descriptor the encoder writes through it is the one written through a local buffer's address."""
    func = ir.parse_file(SCALAR)
    assert ir.parse(ir.print_func(func)) == func
    res = numsim.run(func, {"out": np.zeros(2, np.uint64)})
    assert res.termination == "completed"
    desc, ref = (int(v) for v in res.outputs["out"])
    assert desc == ref != 0
