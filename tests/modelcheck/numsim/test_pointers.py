"""Buffers declared on a pointer the kernel computes (modelcheck.numsim.pointers; issue 14): the pointer is
resolved when the declaration runs, per lane, to the allocation it points into (a peer CTA's shared memory
through mapa, this CTA's, a global buffer); accesses go there, bounds-checked, and the checkers see the real
location.  A pointer that names no allocation is incomplete, never guessed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir
import modelcheck
from modelcheck import numsim
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "pointers"
PEER = KERNELS / "real" / "cluster_peer_view_pre.py"


def run(path, text=None):
    func = modelcheck.parse(text, path=str(path)) if text is not None else modelcheck.load(path).func
    return numsim.run(func, numsim.default_inputs(func, None))


def test_reinterpreting_a_64_bit_integer_gives_a_pointer_value():
    func = ir.parse_file(PEER)
    lets = [n for n in ir.walk(func.body) if isinstance(n, ir.Let) and n.var.dtype == "handle"]
    assert [n.var.name for n in lets] == ["peer_tile_ptr", "peer_bar_ptr"]
    assert all(isinstance(n.value, ir.OpCall) and n.value.op == "tir.reinterpret" for n in lets)
    assert ir.parse(ir.print_func(func), path=str(PEER)) == func


def test_a_view_on_a_mapa_pointer_writes_the_peer_and_arrives_on_its_barrier():
    res = run(PEER)
    assert res.termination == "completed" and not res.diagnostics
    out = res.outputs["out"]
    # each CTA reads what its peer wrote into it through the view, after waiting on its own barrier
    assert (out[0] == 100 + np.arange(32)).all() and (out[1] == np.arange(32)).all()
    assert modelcheck.check(modelcheck.load(PEER)).verdict == "clean"


def test_racecheck_sees_the_peer_allocation_behind_the_view():
    # the remote arrive made relaxed: the peer's write through the view is no longer ordered before the read
    text = PEER.read_text().replace('"arrive", "release", "cluster"', '"arrive", "relaxed", "cluster"')
    report = modelcheck.racecheck(modelcheck.parse(text, path=str(PEER)))
    races = [f for f in report.findings if f.kind == "data_race"]
    assert races and all("smem buffer:[0, 128)" in f.message for f in races)


def test_a_write_past_the_allocation_through_the_view_is_oob():
    res = run(KERNELS / "real" / "cluster_peer_view_pre_oob.py")
    (d,) = res.diagnostics
    assert d.kind == "oob" and "buffer_3[32]" in d.message and ":31:" in str(d.span)


def test_each_lane_has_its_own_view():
    res = run(FIX / "lane_views.py")
    assert res.termination == "completed" and not res.diagnostics
    assert (res.outputs["out"] == 10 * np.arange(32)).all()
    assert modelcheck.check(modelcheck.load(FIX / "lane_views.py")).verdict == "clean"


def test_a_view_on_a_global_pointer_plus_an_offset():
    res = run(FIX / "global_view.py")
    out = res.outputs["out"]
    assert list(out[10:14]) == [1, 2, 3, 4] and not out[:10].any() and not out[14:].any()
    # a fifth lane writes element 4 of a 4-element view: out of the buffer's bounds
    text = (FIX / "global_view.py").read_text().replace("if v_2 < 4:", "if v_2 < 5:")
    (d,) = run(FIX / "global_view.py", text).diagnostics
    assert d.kind == "oob" and "buffer[4]" in d.message and "lane 4" in d.message


def test_a_pointer_to_no_allocation_is_incomplete_naming_it_and_its_line():
    func = modelcheck.load(FIX / "lost_pointer.py").func
    with pytest.raises(numsim.UnsupportedTIRxError, match="lost_ptr") as err:
        numsim.run(func, numsim.default_inputs(func, None))
    assert err.value.span.line == 13
    report = modelcheck.check(func)
    assert report.verdict == "incomplete" and "lost_pointer.py:13" in report.findings[0].message


def test_ptr_byte_offset_is_an_address_and_a_pointer_a_buffer_can_sit_on():
    func = modelcheck.load(FIX / "byte_offset.py").func
    assert ir.parse(ir.print_func(func), path="byte_offset.py") == func
    res = numsim.run(func, numsim.default_inputs(func, None))
    assert res.termination == "completed" and not res.diagnostics
    assert (res.outputs["out"] == 16 + np.arange(16)).all()      # the view starts 64 bytes into the tile
    assert modelcheck.check(func).verdict == "clean"
