"""Register views (modelcheck.numsim.register_views; issue 14): `regs.view("uint32")` over local registers
is the same registers' bytes, little-endian, per lane; reads gather, writes scatter, indices are checked."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIX = Path(__file__).parent.parent.parent / "fixtures" / "register_views"


def run(path, text=None):
    func = modelcheck.parse(text, path=str(path)) if text is not None else modelcheck.load(path).func
    return numsim.run(func, numsim.default_inputs(func, None))


def test_bf16_registers_pack_into_words_low_half_first():
    res = run(FIX / "packed.py")
    assert res.termination == "completed" and not res.diagnostics
    out = res.outputs["out"]
    lanes = np.arange(32)
    bf16 = np.array(lanes, dtype=np.float32).view(np.uint32) >> 16      # bf16(lane): the float32's high half
    assert (out[:, 0] == 0x4000_3F80).all()                             # bf16 2.0 high, 1.0 low
    assert (out[:, 1] == (0xBF80 << 16 | bf16)).all()                   # bf16 -1.0 high, lane low


def test_writes_through_a_narrower_view_land_in_their_half():
    out = run(FIX / "packed.py").outputs["out"]
    assert (out[:, 2] == 0xABCD_5678).all() and (out[:, 3] == np.arange(32)).all()


def test_an_index_past_the_view_is_oob():
    text = (FIX / "packed.py").read_text().replace("out[v_2, 1] = buffer_1[1]", "out[v_2, 1] = buffer_1[2]")
    (d,) = run(FIX / "packed.py", text).diagnostics
    assert d.kind == "oob" and "buffer_1[2]" in d.message


def test_a_lane_varying_index_is_incomplete_naming_the_view():
    text = (FIX / "packed.py").read_text().replace("out[v_2, 0] = buffer_1[0]", "out[v_2, 0] = buffer_1[v_2 % 2]")
    with pytest.raises(numsim.UnsupportedTIRxError, match="register view buffer_1"):
        run(FIX / "packed.py", text)


# --------------------------------------------------------------------------- a view as a tcgen05.ld destination

def _ld_view(text=None):
    path = FIX / "tmem_ld_view.py"
    func = modelcheck.parse(text, path=str(path)) if text is not None else modelcheck.load(path).func
    x = np.random.default_rng(7).standard_normal((128, 4)).astype(np.float32)
    return x, numsim.run(func, {"x": x, "out": np.zeros((128, 4), np.float32)})


def test_ld_into_a_view_lands_in_the_root_registers_at_the_wait():
    x, res = _ld_view()
    assert res.verdict == "clean" and res.termination == "completed", res.diagnostics
    np.testing.assert_array_equal(res.outputs["out"].view(np.uint32), x.view(np.uint32))   # bits, not converted


def test_writing_the_root_before_the_wait_is_an_async_register_error():
    text = (FIX / "tmem_ld_view.py").read_text()
    wait = '        T.ptx.tcgen05("wait::ld", "sync", "aligned", "")\n'
    text = text.replace(wait, "        buffer_2[1] = T.float32(0)\n" + wait, 1)
    _, res = _ld_view(text)
    [diag] = res.diagnostics_of("async_register_access_before_wait")
    assert diag.details["access"] == "write" and "buffer_2[1]" in diag.message


def test_a_view_whose_element_spans_part_of_a_register_is_incomplete():
    text = (FIX / "tmem_ld_view.py").read_text()
    text = text.replace("buffer_2 = T.alloc_local((4,))", 'buffer_2 = T.alloc_local((8,), "float16")', 1)
    with pytest.raises(numsim.UnsupportedTIRxError, match="register view buffer_3 .* part of a register"):
        _ld_view(text)
