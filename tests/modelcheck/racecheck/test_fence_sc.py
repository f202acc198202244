"""fence.sc in Racecheck (PTX ISA §8.9.3, §8.9.4 item 1, §8.10.6): two fence.sc synchronize only in
the order the run's observed values force, never in the order the simulator executed them; the
happens-before graph draws exactly those edges.  Fixtures: tests/fixtures/racecheck/fence_sc_*.py."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck
from modelcheck import hb

from .test_kernels import line_of, race

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "racecheck"
HANDSHAKE = FIXTURES / "fence_sc_handshake.py"


def _races(path, **consts):
    report = modelcheck.racecheck(modelcheck.load(path, **consts))
    return report, sorted({f.details["overlap"]["allocation"] for f in report.findings if f.kind == "data_race"})


def _sc_edges(path, **consts):
    g = hb.build(modelcheck.load(path, **consts).func, None).graph
    return [(g.nodes[u]["warp"], g.nodes[v]["warp"]) for u, v, d in g.edges(data=True) if d["kind"] == "sc_order"]


@pytest.mark.parametrize("consts,races,edges", [
    # fence.sc on both sides: P's load of the old turn forces P's fence first
    ({}, [], [(0, 1)]),
    # either side fence.acq_rel: no Fence-SC order, nothing orders the mailbox
    ({"P_SC": 0}, ["mailbox"], []),
    ({"Q_SC": 0}, ["mailbox"], []),
    ({"P_SC": 0, "Q_SC": 0}, ["mailbox"], []),
    # turn's initialization is not ordered before Q's store: P's old value places nothing in coherence order
    # (and that initialization races with Q's store itself)
    ({"LATE_INIT": 1}, ["mailbox", "turn"], []),
    # Q first: P sees turn = 1, never sets go, Q never reads the mailbox; no conflict, whatever the fences
    ({"Q_FIRST": 1}, [], []),
    ({"Q_FIRST": 1, "P_SC": 0, "Q_SC": 0}, [], []),
])
def test_store_buffering_handshake(consts, races, edges):
    report, found = _races(HANDSHAKE, **consts)
    assert found == races, report.format()
    assert report.verdict == ("error" if races else "clean")
    assert _sc_edges(HANDSHAKE, **consts) == edges


@pytest.mark.parametrize("scope,races", [(0, ["mailbox"]), (1, [])])
def test_fence_scopes_must_cover_both_ctas(scope, races):
    path = FIXTURES / "fence_sc_two_ctas.py"
    report, found = _races(path, SCOPE=scope)
    assert found == races, report.format()
    assert _sc_edges(path, SCOPE=scope) == ([] if races else [(0, 1)])


def test_flagless_fence_sc_handoff_races():
    """The publisher's fence.sc runs first in the simulation; that is not a Fence-SC order the program forces
    (before issue 21 this kernel, then race_fence_acq_rel_not_sc_fixed.py, was reported clean)."""
    name = "race_fence_sc_no_flag"
    report = race(name)
    assert report.verdict == "error"
    (f,) = report.findings
    d = f.details
    assert (f.kind, d["access_pair"], d["ordering_failure"]) == ("data_race", "write_read", "missing_inter_actor_sync")
    assert d["prior"]["span"].line == line_of(name, "mailbox[0] = 42")
    assert d["current"]["span"].line == line_of(name, "out[0] = mailbox[0]")
    assert (d["prior"]["warp"], d["current"]["warp"]) == (0, 1)
    assert "Fence-SC order is determined at runtime" in d["hint"] and "flag" in d["hint"]
    assert race(name + "_fixed").verdict == "clean"
    # the hint is for fence.sc pairs only: the acq_rel handshake's race keeps the generic hint
    (g,) = race("race_fence_acq_rel_not_sc").findings
    assert "Fence-SC" not in g.details["hint"]
