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


# --------------------------------------------------------------------------- shape views of swizzled tiles

RESHAPE = Path(__file__).parents[2] / "fixtures" / "numsim" / "swizzled_reshape.py"


def physical(f: int) -> int:
    """Element f (row-major in (32, 256)) of ComposeLayout(3, 3, 3, TileLayout(S[(32, 4, 64):(64, 2048, 1)])):
    the tile decomposition, then the 16-byte-unit XOR; the same values as apache-tvm 0.27's Layout.apply of that
    layout with the view's shape (2, 16, 4, 64), checked against it when this was written."""
    o = (f // 256) * 64 + (f // 64 % 4) * 2048 + f % 64
    return o ^ (((o >> 6) & 7) << 3)


def test_shape_view_of_a_tiled_swizzled_tile_keeps_its_layout():
    kernel = modelcheck.load(RESHAPE)
    view = next(n.buffer for n in ir.walk(kernel.func.body) if isinstance(n, ir.DeclBuffer)
                and n.buffer.name == "buffer_2")
    assert view.layout == ""                 # modeled: flat, indexed through the root's swizzle
    res = numsim.run(kernel.func, {"out": np.zeros((2, 8192), np.int32)})
    assert res.termination == "completed" and not res.diagnostics
    through_view, raw = res.outputs["out"]
    np.testing.assert_array_equal(through_view, np.arange(8192))          # the view sees the root's elements
    want = np.zeros(8192, np.int64)
    want[[physical(f) for f in range(8192)]] = np.arange(8192)
    np.testing.assert_array_equal(raw, want)                              # the plain buffer sees the real bytes


def test_shape_view_with_another_element_count_stays_unmodeled():
    text = RESHAPE.read_text().replace("buffer_1.view(2, 16, 4, 64)", "buffer_1.view(2, 16, 4, 32)")
    kernel = modelcheck.parse(text, path=str(RESHAPE))
    view = next(n.buffer for n in ir.walk(kernel.body) if isinstance(n, ir.DeclBuffer)
                and n.buffer.name == "buffer_2")
    assert view.layout == 'T.view_of_swizzled("buffer_1")'
