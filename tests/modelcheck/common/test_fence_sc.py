"""Which fence.sc pairs a run forces (`modelcheck.common.fence_sc`): only pairs whose order the
observed values decide, never the order the simulator happened to execute them in."""
from __future__ import annotations

from pathlib import Path

import modelcheck
from modelcheck import numsim
from modelcheck.common import fence_sc
from tests.manifest import KERNELS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "racecheck"


def _trace(path, **consts):
    kernel = modelcheck.load(path, **consts)
    trace = numsim.Trace()
    res = numsim.run(kernel.func, numsim.default_inputs(kernel.func, {}), observers=(trace,))
    assert res.termination == "completed"
    return trace


def _fence(trace, seq):
    (ev,) = [e for e in trace.sync if e.seq == seq]
    assert ev.kind == "fence.sc"
    return ev


def test_a_flagless_pair_of_fences_is_not_ordered():
    # both sides fence.sc, executed publisher first, but no access after one fence is observed before the other
    trace = _trace(KERNELS / "race_fence_sc_no_flag.py")
    assert len([e for e in trace.sync if e.kind == "fence.sc"]) == 2
    assert fence_sc.candidates(trace.sync, trace.accesses) == {}


def test_store_buffering_read_of_the_old_value_forces_the_readers_fence_first():
    trace = _trace(FIXTURES / "fence_sc_handshake.py")
    cands = fence_sc.candidates(trace.sync, trace.accesses)
    ((f2_seq, f2_lane), (cand,)), = cands.items()
    f1, f2 = _fence(trace, cand.f1[0]), _fence(trace, f2_seq)
    assert (f1.warp, cand.f1[1], f2.warp, f2_lane) == (0, 0, 1, 0)
    # from-read: P loaded turn's initial value; it is ordered before Q's store of turn only if the initializing
    # write happens before that store, which the checker is asked (`needs`)
    (w_rec, w_lane), (b_rec, b_lane) = cand.needs
    w, b = trace.accesses[w_rec], trace.accesses[b_rec]
    assert (w.alloc_name, w.order, w.warp, w_lane) == ("turn", "weak", 0, 0)
    assert (b.alloc_name, b.kind, b.order, b.warp, b_lane) == ("turn", "write", "relaxed", 1, 0)


def test_read_from_forces_the_writers_fence_first():
    trace = _trace(KERNELS / "race_fence_sc_no_flag_fixed.py")
    cands = fence_sc.candidates(trace.sync, trace.accesses)
    ((f2_seq, _), (cand,)), = cands.items()
    assert cand.needs is None
    assert (_fence(trace, cand.f1[0]).warp, _fence(trace, f2_seq).warp) == (0, 1)


def test_fences_whose_scopes_do_not_cover_each_other_are_not_related():
    # fence.sc.cta in two CTAs: not morally strong, so not in the Fence-SC order at all (PTX ISA 8.9.3)
    path = FIXTURES / "fence_sc_two_ctas.py"
    assert fence_sc.candidates(*_sync_and_accesses(path, SCOPE=0)) == {}
    cands = fence_sc.candidates(*_sync_and_accesses(path, SCOPE=1))
    ((_, (cand,)),) = cands.items()
    assert cand.needs is None          # the flag's initial value comes from the inputs: first in coherence order


def _sync_and_accesses(path, **consts):
    trace = _trace(path, **consts)
    return trace.sync, trace.accesses
