"""The happens-before certificate: path templates and their refinement, the ranking, the whole proof."""
from __future__ import annotations

import time

import pytest
import z3

import modelcheck
from modelcheck import prove
from modelcheck.prover import solving
from modelcheck.prover.certificate import Certifier, certify
from modelcheck.prover.execution import Execution
from modelcheck.prover.execution import Executions
from modelcheck.prover.model import roles
from modelcheck.prover.paths import Pair, PathProver, template_of
from modelcheck.prover.ranking import Ranking
from modelcheck.prover.symbolic import SymEvent
from tests.manifest import KERNELS
from tests.modelcheck.prover.models import model_of


def _pair(c: Certifier, family: str, x: tuple, y: tuple) -> Pair:
    return next(p for p in c.pairs() if (p.family, p.x, p.y) == (family, x, y))


def test_a_template_is_the_chain_of_a_concrete_path():
    """The producer's empty wait in round r happens before the consumer's release in round r through the
    producer's full arrival and the consumer's full wait of that round."""
    func, m, _ = model_of("ring_pipeline", "ROUNDS")
    ex = Execution(m, {"ROUNDS": 6})
    x = next(e for e in ex.events if e is not None and e.warp == 0 and e.kind == "wait" and e.r == 5)
    y = next(e for e in ex.events if e is not None and e.warp == 1 and e.kind == "arrive" and e.family == "empty"
             and e.r == 5)
    t = template_of(ex, ex.path(x.node, y.node), roles(m))
    assert t.describe() == "X -po-> w0.s3@X+0 -bar-> w1.s2@X+0 -po-> Y"


def test_refinement_finds_the_templates_from_nothing():
    """With no harvested templates, z3's instances are looked up concretely and their paths become templates
    until one query is unsat."""
    func, m, _ = model_of("kda_ring_m_o", "NC")
    c = Certifier(m, time.monotonic() + 60, {}, {})
    stats: dict = {}
    prover = PathProver(m, roles(m), Executions(m), m.domain(), stats)
    for pair in c.pairs():
        status, info = prover.prove(pair, time.monotonic() + 60)
        assert status == "proved", (pair, info)
    assert stats["path_refinements"] == sum(len(ts) for ts in prover.templates.values()) >= 2


def test_a_pair_without_a_path_is_a_counterexample_with_its_events():
    """One m_o barrier for two accumulators: the store warps' wait of generation 0 does not happen before the
    MMA warp's commit of generation 1 (it is gated only by the other accumulator's o_empty)."""
    func, m, _ = model_of("kda_ring_m_o_single", "NC")
    c = Certifier(m, time.monotonic() + 60, {}, {})
    prover = PathProver(m, roles(m), Executions(m), m.domain(), {})
    wait = next(st for st in m.proc(1).steps if st.cmd.kind == "wait" and st.cmd.family == "m_o")
    commit = next(st for st in m.proc(0).steps if st.cmd.kind == "commit" and st.cmd.family == "m_o")
    status, (env, xn, yn, ex) = prover.prove(_pair(c, "m_o", (1, wait.index), (0, commit.index)),
                                              time.monotonic() + 60)
    assert status == "failed" and env["NC"] >= 2
    assert not ex.hb(xn, yn) and ex.events[yn].delivery and ex.events[xn].gen + 1 == ex.events[yn].gen


def test_the_ranking_grows_along_every_edge_of_an_unseen_size():
    func, m, _ = model_of("ring_pipeline", "ROUNDS", STAGES=3)
    rank = Ranking(m, roles(m), m.domain(), {})
    assert rank.prove([Execution(m, {"ROUNDS": 4})], time.monotonic() + 60, {})[0] == "proved"
    ex = Execution(m, {"ROUNDS": 23})

    def value(e):
        r = SymEvent(m, m.proc(e.warp), e.step)
        term = rank.rank(r, e.delivery)
        s = z3.Solver()
        s.add(m.syms["ROUNDS"] == 23, *r.side)
        if r.r is not None:
            s.add(r.r == e.r)
        assert s.check() == z3.sat
        return s.model().eval(term, model_completion=True).as_long()
    values = {i: value(e) for i, e in enumerate(ex.events) if e is not None}
    for i, succ in enumerate(ex.succ):
        for j in succ:
            # through a generation node: contribution -> generation -> wait
            for k in ([j] if ex.events[j] is not None else ex.succ[j]):
                if ex.events[i] is not None:
                    assert values[k] > values[i], (ex.events[i], ex.events[k])


def test_no_ranking_orders_a_cyclic_happens_before():
    func, m, _ = model_of("ring_producer_phase0", "ROUNDS")
    rank = Ranking(m, roles(m), m.domain(), {})
    assert rank.prove([Execution(m, {"ROUNDS": 3})], time.monotonic() + 60, {})[0] == "infeasible"


def test_residue_splitting_uses_the_kernels_period(monkeypatch):
    """A query the quick budget does not settle is asked once per residue of the size modulo the period."""
    func, m, _ = model_of("gemm_persistent", "K_TILES")
    assert solving.period(m) == 6                 # three ring stages, two accumulators, parities
    k = m.syms["K_TILES"]
    q = m.size_terms.floormod(k, 3)
    monkeypatch.setattr(solving, "QUICK", 1)      # the whole query runs out of budget at once
    answer = solving.check(m, [k >= 1, (k + 1) % 3 != (q + 1) % 3], "fact")
    assert answer.result == z3.unsat
    assert m.ledger.checks["fact"] == 1 + 6 and m.ledger.rlimit["fact"] > 0


@pytest.mark.parametrize("name,sym", [("kda_fwd", "NC"), ("fa4_fwd", "NKV"), ("gemm_ws", "K_TILES")])
def test_realistic_kernels_are_proved_by_the_certificate(name, sym):
    func, m, _ = model_of(name, sym)
    cert = certify(m, time.monotonic() + 120)
    assert cert.status == "proved", cert.reason
    assert cert.stats["path_templates"] > 0 and cert.stats["ranking_coefficients"] > 0
    assert set(cert.seconds) == {(f, p) for f in m.params for p in (("P1", "P4") if f.startswith("bar")
                                                                    else ("P1", "P2", "P3", "P4"))}


def test_the_report_says_how_the_certificate_was_decided():
    func = modelcheck.load(KERNELS / "ring_arith.py").func
    cert = prove(func, symbolic=["ROUNDS"])
    assert cert.verdict == "proved" and cert.stats["method"] == "certificate"
    assert "happens-before certificate:" in cert.format() and "invariant" not in cert.to_dict()


def test_a_certificate_out_of_time_is_incomplete_not_proved():
    func = modelcheck.load(KERNELS / "ring_arith.py").func
    report = prove(func, symbolic=["ROUNDS"], max_seconds=0.0)
    assert report.verdict == "incomplete"
    assert "the happens-before certificate is open" in report.reasons[0]
    assert "wall-clock safety net" in report.reasons[0] and "max_seconds" in report.reasons[0]


def test_a_failure_synccheck_does_not_confirm_is_incomplete_with_the_condition():
    """A barrier whose count is one more than its arrivals, never waited on in the last round, ends with a partial
    generation (P4: arrivals balance at exit); nothing hangs at that size, so Synccheck reports nothing there, but
    the next size deadlocks and is the counterexample."""
    from tests.mutation import mutants
    text = (KERNELS / "kda_ring_m_o.py").read_text()
    name, mutant = next((n, t) for n, t in mutants(text) if "count 4->5" in n)
    func = modelcheck.parse(mutant, path="kda_ring_m_o.py")
    report = prove(func, symbolic=["NC"])
    assert report.verdict == "refuted" and report.counterexample["sizes"] == {"NC": 3}, report.format()
    refuted = next(p for p in report.properties if p.status == "refuted")
    assert "the certificate already fails at NC=1" in refuted.note and "partial generation" in refuted.note


def test_a_rounds_later_mutations_are_dominated_by_its_expect_tx():
    """The TMA producer's round is expect_tx, arrive, TMA, TMA on one slot and generation: the arrive and the
    completions follow the expect_tx in program order, so only the expect_tx's pairs are queried."""
    func, m, _ = model_of("gemm_ws", "K_TILES")
    c = Certifier(m, time.monotonic() + 60, {}, {})
    producer = next(p for p in m.procs if any(st.cmd.kind == "expect_tx" for st in p.steps))
    kinds = {st.index: st.cmd.kind for st in producer.steps if st.cmd.family == "full"}
    dominated = {i for w, i in c.dominated() if w == producer.warp}
    assert {kinds[i] for i in dominated} == {"arrive", "tma"}
    assert not any(kinds[i] == "expect_tx" for i in dominated)
