"""Packed sub-byte buffers (float4_e2m1fn, two per byte): declared, viewed through a swizzle, addressed.

tests/fixtures/numsim/fp4_views.py: the float4 view of a 128B-swizzled byte tile keeps the tile's swizzle (the
same 16-byte units move, 32 elements to a unit), so element (r, 2c) of the view has the address of byte (r, c) of
the tile; a float4 buffer's `elem_offset` counts elements (2048 elements = 1024 bytes).  Element loads and stores
and the address of an element that does not start a byte are `incomplete`, named.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parents[2] / "fixtures" / "numsim" / "fp4_views.py"


def inputs():
    return {"out": np.zeros((2, 128), np.int32), "extra": np.zeros(2, np.int32)}


def test_view_of_swizzled_tile_keeps_its_swizzle():
    kernel = modelcheck.load(FIX)
    view = next(n.buffer for n in ir.walk(kernel.func.body) if isinstance(n, ir.DeclBuffer)
                and n.buffer.name == "buffer_2")
    assert view.dtype == "float4_e2m1fn" and view.layout == ""         # modeled: flat, indexed physically
    res = numsim.run(kernel.func, inputs())
    assert res.termination == "completed"
    out = res.outputs["out"]
    np.testing.assert_array_equal(out[0], out[1])
    assert len(set(out[0].tolist())) == 128 and not (np.diff(out[0]) == 8).all()     # swizzled, not row-major
    base, declared = res.outputs["extra"]
    assert declared == base + 1024          # 2048 elements in: 1024 bytes


@pytest.mark.parametrize("mode, words", [(1, "loads and stores of float4_e2m1fn"), (2, "does not start a byte")])
def test_unmodeled_subbyte_accesses_are_named(mode, words):
    kernel = modelcheck.load(FIX, MODE=mode)
    with pytest.raises(numsim.UnsupportedTIRxError, match=words):
        numsim.run(kernel.func, inputs())
    assert modelcheck.synccheck(kernel, inputs()).verdict == "incomplete"


def test_unreached_element_load_is_a_review():
    res = numsim.run(modelcheck.load(FIX).func, inputs())
    assert [d.kind for d in res.diagnostics] == ["unsupported_operation_not_reached"]
