"""`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` (PTX ISA 9.7.9.25.4.1): without a
multicast mask the copy lands in the CTA its shared::cluster destination names and completes on the mbarrier in
that CTA; in a launch without clusters that is the executing CTA (it was refused as 'needs clusters')."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from ir import ops
from modelcheck import numsim

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "numsim" / "bulk_cluster_dst.py"


def _inputs():
    return {"src": np.arange(8, dtype=np.float32) + 1, "out": np.zeros(8, np.float32)}


def test_the_copy_lands_in_the_own_cta_and_completes_its_barrier():
    func = ir.parse_file(FIXTURE)
    res = numsim.run(func, _inputs())
    assert res.termination == "completed"
    np.testing.assert_array_equal(res.outputs["out"], _inputs()["src"])
    assert modelcheck.synccheck(func, _inputs()).verdict == "clean"
    assert modelcheck.racecheck(func, _inputs()).verdict == "clean"


def test_multicast_bulk_copies_stay_unmodeled():
    info = ops.classify("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
                        ("handle", "handle", "uint32", "handle", "uint16"))
    assert not info.supported and "multicast" in info.why_unsupported
