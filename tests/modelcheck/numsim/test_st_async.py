"""st.async into a peer CTA's shared memory completing on its mbarrier (PTX ISA 9.7.9.12;
docs/semantics.md#clusters): the stored values, the forms the registry accepts, the same-CTA rule for the
barrier, and the checkers' view (bytes counted, the store ordered by the phase, the complete-tx a release)."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck
from ir import ops
from modelcheck import numsim
from tests.manifest import KERNELS

FIX = Path(__file__).parent.parent.parent / "fixtures" / "cluster"
FORM = "st_async.shared::cluster.mbarrier::complete_tx::bytes"


def _run(path, **consts):
    func = modelcheck.load(path, **consts).func
    return numsim.run(func, numsim.default_inputs(func, None))


def test_each_cta_receives_the_peer_word_and_the_note():
    res = _run(KERNELS / "st_async_exchange.py")
    assert res.termination == "completed", res.diagnostics
    assert res.outputs["out"].tolist() == [[20, 101], [10, 100]]


def test_vector_forms_store_every_element_and_complete_all_bytes():
    res = _run(FIX / "st_async_vec.py")
    assert res.termination == "completed", res.diagnostics
    assert res.outputs["fout"].tolist() == [[2.5, -2.25], [1.5, -2.25]]
    assert res.outputs["uout"].tolist() == [[2, 2, 3, 4], [1, 2, 3, 4]]


def test_a_barrier_in_another_cta_than_the_destination_is_an_invalid_address():
    res = _run(FIX / "st_async_vec.py", BAR_SELF=1)
    assert [d.kind for d in res.diagnostics] == ["invalid_address"]
    assert "must be in one CTA" in res.diagnostics[0].message


@pytest.mark.parametrize("form, n, supported", [
    (f"{FORM}.u32", 3, True), (f"{FORM}.v2.f64", 4, True), (f"{FORM}.v4.b32", 6, True),
    ("st_async.mbarrier::complete_tx::bytes.s64", 3, True),        # generic addressing into shared::cluster
    (f"{FORM}.v4.b64", 6, False), (f"{FORM}.b128", 3, False),
    ("st_async.release.gpu.global.u32", 3, False),                 # the sm_100 release store (no mbarrier)
])
def test_forms_follow_the_ptx_syntax(form, n, supported):
    info = ops.classify(form, ("uint32",) * n)
    assert info.name == "st.async" and info.supported is supported, info.why_unsupported
    assert [o.name for o in info.operands][0] == "addr" and info.operands[-1].name == "mbar"


def test_red_async_stays_unmodeled():
    info = ops.classify("red_async.shared::cluster.mbarrier::complete_tx::bytes.add.u32", ("uint32",) * 3)
    assert not info.supported and "red.async" in info.why_unsupported


def test_the_completion_releases_what_the_issuer_did_before_the_store():
    # the note written before the store is ordered for the peer's reader; written after, it races
    assert modelcheck.racecheck(modelcheck.load(KERNELS / "st_async_exchange.py")).verdict == "clean"
    report = modelcheck.racecheck(modelcheck.load(KERNELS / "st_async_exchange.py", NOTE_LATE=1))
    races = [f for f in report.findings if f.kind == "data_race"]
    assert races and all("note" in f.message for f in races), report.format()
