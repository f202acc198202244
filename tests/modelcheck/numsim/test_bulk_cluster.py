"""`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` (PTX ISA 9.7.9.25.4.1): a non-tensor bulk
copy into a peer CTA's shared memory completes on that CTA's mbarrier; the destination and the barrier must be in
one CTA."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "cluster" / "bulk_g2s_peer.py"


def _inputs():
    return {"src": np.arange(32, dtype=np.float32).reshape(2, 16), "out": np.zeros((2, 16), np.float32)}


def test_each_cta_receives_the_row_its_peer_copied():
    func = ir.parse_file(FIXTURE)
    res = numsim.run(func, _inputs())
    np.testing.assert_array_equal(res.outputs["out"], _inputs()["src"])
    assert modelcheck.synccheck(func, _inputs()).verdict == "clean"
    assert modelcheck.racecheck(func, _inputs()).verdict == "clean"


def test_the_shared_cta_source_form_copies_the_staged_row():
    func = modelcheck.load(str(FIXTURE), FROM_SHARED=1).func
    res = numsim.run(func, _inputs())
    np.testing.assert_array_equal(res.outputs["out"], _inputs()["src"])
    assert modelcheck.synccheck(func, _inputs()).verdict == "clean"
    assert modelcheck.racecheck(func, _inputs()).verdict == "clean"


def test_a_barrier_in_another_cta_than_the_destination_is_an_error():
    func = modelcheck.load(str(FIXTURE), BAR_SELF=1).func
    r = modelcheck.synccheck(func, _inputs())
    assert [f.kind for f in r.findings] == ["invalid_address"]
    assert "must be in one CTA" in r.findings[0].message


def test_reading_the_destination_without_the_wait_races_with_the_copy():
    func = modelcheck.load(str(FIXTURE), WAIT=0).func
    r = modelcheck.racecheck(func, _inputs())
    assert r.verdict == "error" and "data_race" in {f.kind for f in r.findings}
