"""The z3 terms of a symbolic event agree with the concrete intended execution at sampled sizes."""
from __future__ import annotations

import pytest
import z3

from modelcheck.prover.certificate import _Certifier
from modelcheck.prover.execution import Execution
from modelcheck.prover.symbolic import SymEvent, po_le
from tests.modelcheck.prover.models import model_of

KERNELS = [("ring_guarded", "ROUNDS"), ("kda_ring_dvec", "NC"), ("gemm_persistent", "K_TILES"), ("fa4_fwd", "NKV"),
           ("gdn_prefill", "NUM_CHUNKS")]


def _evaluate(m, sym, size, event, r, terms):
    s = z3.Solver()
    s.add(m.syms[sym] == size, *event.side, *m.size_terms.side)
    if event.r is not None:
        s.add(event.r == r)
    assert s.check() == z3.sat
    model = s.model()
    return [model.eval(t, model_completion=True) for t in terms]


@pytest.mark.parametrize("name,sym", KERNELS, ids=[k[0] for k in KERNELS])
def test_existence_slot_and_generation_match_the_concrete_execution(name, sym):
    """Every step of every warp at iterations -1 .. size: the event exists exactly when the concrete execution has
    it, with the same slot and intended generation (TMA completions through the expect_tx runs' lemma)."""
    func, m, _ = model_of(name, sym)
    c = _Certifier(m, float("inf"), {}, {})
    c.swept = [{sym: n} for n in (1, 2, 3, 4)]
    c.tx_runs()
    checked = 0
    for size in (1, 2, 3):
        ex = Execution(m, {sym: size})
        for p in m.procs:
            for st in p.steps:
                e = SymEvent(m, p, st)
                gen = e.gen()
                concrete = {x.r: x for x in ex.events if x is not None and x.warp == p.warp and x.step is st
                            and not x.delivery}
                for r in (range(-1, size + 2) if st.block.kind == "loop" else [None]):
                    exists, slot, g = _evaluate(m, sym, size, e, r, [e.exists, e.slot, gen])
                    x = concrete.get(r)
                    assert z3.is_true(exists) == (x is not None), (p.warp, st.index, r)
                    if x is not None:
                        assert slot.as_long() == x.slot and (x.gen is None or g.as_long() == x.gen), \
                            (p.warp, st.index, st.cmd.kind, r, slot, g, x)
                        checked += 1
    assert checked > 20


def test_program_order_of_two_events_of_one_warp():
    func, m, _ = model_of("ring_pipeline", "ROUNDS")
    p = m.proc(0)
    wait, arrive = p.steps[2], p.steps[3]           # inside the loop: wait empty, arrive full
    a, b = SymEvent(m, p, wait), SymEvent(m, p, arrive)
    s = z3.Solver()
    s.add(a.r == 3, b.r == 3)
    assert s.check(z3.Not(po_le(a, b))) == z3.unsat          # same iteration: the wait first
    assert s.check(po_le(b, a)) == z3.unsat
    s2 = z3.Solver()
    s2.add(a.r == 4, b.r == 3)
    assert s2.check(po_le(b, a, strict=True)) == z3.sat
