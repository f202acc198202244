"""Racecheck's vector clocks widen as async operations stay in flight; a widening is charged to the memory
budget before its rows are made (a resource limit naming the clocks, never an out-of-memory kill)."""
from __future__ import annotations

import pytest

from modelcheck.numsim.budget import Meter
from modelcheck.numsim.errors import ResourceLimit
from modelcheck.racecheck.flow import Flow


def _widen(flow: Flow) -> None:
    """Give columns to async operations until the rows widen once."""
    width = flow.width
    op = 0
    while flow.width == width:
        flow.column(op)
        op += 1


def test_a_widening_within_the_budget_goes_ahead():
    flow = Flow(run_warps=8, warps_per_cta=8)
    flow.meter = Meter(max_memory_mb=1024)
    before = flow.width
    _widen(flow)
    assert flow.width > before


def test_a_widening_past_the_budget_is_a_resource_limit_naming_the_clocks():
    flow = Flow(run_warps=8, warps_per_cta=8)
    for wid in range(8):
        flow.warps[wid].k.lane_rows()            # lanes that know different things: 32 rows per warp
    flow.meter = Meter(max_memory_mb=0.01)
    with pytest.raises(ResourceLimit) as err:
        _widen(flow)
    assert "vector clocks (256 rows) widening" in str(err.value)
