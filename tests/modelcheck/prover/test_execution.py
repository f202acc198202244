"""The intended execution at one size: generations, happens-before, and the certificate decided there."""
from __future__ import annotations

import pytest

import modelcheck
from modelcheck.prover.execution import Execution
from tests.modelcheck.prover.models import model_of
from tests.mutation import SYNC_KINDS

# (manifest kernel, symbolic size, the sizes checked): the certificate holds at a size exactly when Synccheck
# (every schedule of that size's fixed program) finds no sync error there
AGREEMENT = [("ring_pipeline", "ROUNDS", 5), ("ring_guarded", "ROUNDS", 5), ("ring_missing_guard", "ROUNDS", 4),
             ("ring_consumer_parity", "ROUNDS", 3), ("ring_producer_phase0", "ROUNDS", 3),
             ("ring_short_arrival", "ROUNDS", 3), ("producer_overtaking", "ROUNDS", 3),
             ("producer_overtaking_fixed", "ROUNDS", 3), ("kda_ring_m_o_single", "NC", 3), ("kda_ring_m_o", "NC", 3),
             ("gdn_prefill_sinp_no_acquire", "NUM_CHUNKS", 4), ("gdn_prefill_sinp_parity", "NUM_CHUNKS", 2),
             ("gemm_ws", "K_TILES", 3), ("gemm_persistent", "K_TILES", 3), ("gemm_persistent_acc_reuse",
                                                                             "TILES_PER_CTA", 3)]


@pytest.mark.parametrize("name,sym,top", AGREEMENT, ids=[a[0] for a in AGREEMENT])
def test_the_certificate_at_a_size_agrees_with_synccheck(name, sym, top):
    func, m, specialize = model_of(name, sym)
    for n in range(1, top + 1):
        fails = Execution(m, {sym: n}).check()
        small, inputs = specialize(func, {sym: n})
        errors = {f.kind for f in modelcheck.synccheck(small, inputs).findings if f.status == "error"} & SYNC_KINDS
        assert bool(fails) == bool(errors), (n, fails[:1], errors)


def _events(ex, warp, kind, family):
    return [e for e in ex.events if e is not None and e.warp == warp and e.kind == kind and e.family == family
            and not e.delivery]


def test_a_ring_intends_one_generation_per_visit_of_a_slot():
    """Two stages, five rounds: round r uses slot r % 2, the producer's empty waits start in the phase before init
    (generation -1), and every round completes one generation of its slot."""
    func, m, _ = model_of("ring_pipeline", "ROUNDS", STAGES=2)
    ex = Execution(m, {"ROUNDS": 5})
    waits = _events(ex, 0, "wait", "empty")
    assert [(e.r, e.slot, e.gen) for e in waits] == [(0, 0, -1), (1, 1, -1), (2, 0, 0), (3, 1, 0), (4, 0, 1)]
    assert [(e.slot, e.gen) for e in _events(ex, 1, "wait", "full")] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
    for (fam, slot, g), entry in ex.gens.items():
        if fam in ("full", "empty"):
            assert entry["units"] == 1 and len(entry["contrib"]) == 1, (fam, slot, g)
    # the producer's wait of empty[0] generation 0 (round 2) happens after the consumer's release in round 0, and
    # before the producer's arrival on full[0] generation 1
    release = next(e for e in _events(ex, 1, "arrive", "empty") if e.r == 0)
    rearm = next(e for e in _events(ex, 0, "arrive", "full") if e.r == 2)
    assert ex.hb(release.node, waits[2].node) and ex.hb(waits[2].node, rearm.node)
    assert not ex.hb(rearm.node, release.node)
    assert ex.acyclic and ex.check() == []


def test_a_producer_starting_in_phase_zero_has_a_happens_before_cycle():
    """Its first empty wait (parity 0) waits for a release that follows its own first arrival."""
    func, m, _ = model_of("ring_producer_phase0", "ROUNDS")
    ex = Execution(m, {"ROUNDS": 1})
    assert not ex.acyclic
    fails = ex.check()
    assert fails[-1].prop == "P4" and "cycle" in fails[-1].condition
    kinds = {ex.events[i].kind for i in fails[-1].nodes if ex.events[i] is not None}
    assert {"wait", "arrive"} <= kinds


def test_overtaking_breaks_the_wait_before_the_next_mutation():
    func, m, _ = model_of("producer_overtaking", "ROUNDS")
    assert Execution(m, {"ROUNDS": 1}).check() == []
    fails = Execution(m, {"ROUNDS": 2}).check()
    assert [(f.family, f.prop) for f in fails] == [("full", "P3")]
    assert "generation 0 does not happen before a mutation of generation 1" in fails[0].condition


def test_tma_completions_belong_to_the_transaction_their_warp_announced():
    """The persistent GEMM's producer crosses tiles with one ring cursor: every generation of `full` gets exactly
    the bytes its expect_tx announced, from the TMA copies issued after it."""
    func, m, _ = model_of("gemm_persistent", "K_TILES")
    ex = Execution(m, {"K_TILES": 4})
    fulls = {k: v for k, v in ex.gens.items() if k[0] == "full"}
    assert len(fulls) == 3 * 4 and all(v["bytes"] == v["expect"] > 0 for v in fulls.values())
    for e in ex.events:
        if e is not None and e.kind == "tma" and e.delivery:
            announce = [x for x in _events(ex, e.warp, "expect_tx", "full") if x.slot == e.slot and x.node < e.node]
            assert announce and announce[-1].gen == e.gen


def test_paths_take_the_fewest_barrier_hops():
    func, m, _ = model_of("ring_pipeline", "ROUNDS", STAGES=2)
    ex = Execution(m, {"ROUNDS": 5})
    w = _events(ex, 0, "wait", "empty")[2]
    rearm = next(e for e in _events(ex, 0, "arrive", "full") if e.r == 2)
    assert ex.path(w.node, rearm.node) == [w.node, rearm.node]        # program order, no hop
    c = next(e for e in _events(ex, 1, "wait", "full") if e.r == 0)
    path = ex.path(c.node, w.node)
    assert sum(ex.events[i] is None for i in path) == 1                       # one generation: empty[0] g0
