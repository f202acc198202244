"""The z3 terms of a symbolic event agree with the concrete intended execution at sampled sizes."""
from __future__ import annotations

import pytest
import z3

from modelcheck.prover.certificate import Certifier
from modelcheck.prover.execution import ARRIVALS, Execution
from modelcheck.prover.symbolic import Ends, SymEvent, po_le
from tests.manifest import KERNELS as KERNEL_DIR
from tests.manifest import ROOT
from tests.modelcheck.prover.models import model_at, model_of

KERNELS = [("ring_guarded", "ROUNDS"), ("kda_ring_dvec", "NC"), ("gemm_persistent", "K_TILES"), ("fa4_fwd", "NKV"),
           ("gdn_prefill", "NUM_CHUNKS")]
# loop shapes beyond the manifest's: a ring of three stages, a straight epilogue, a loop nested in a concrete
# one (unrolled into several symbolic loops), a cursor entering each tile's loop at a term in the symbolic size
SHAPES = [(KERNEL_DIR / "ring_pipeline.py", "ROUNDS", {"STAGES": 3}),
          (KERNEL_DIR / "ring_short_arrival_fixed.py", "ROUNDS", {}),
          (ROOT / "tests" / "fixtures" / "prover" / "nested_symbolic.py", "K", {}),
          (ROOT / "tests" / "fixtures" / "prover" / "cursor_tiles.py", "K", {})]


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
    c = Certifier(m, float("inf"), {}, {})
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


@pytest.mark.parametrize("path,sym,consts", SHAPES, ids=[p[0].stem for p in SHAPES])
def test_events_and_end_counts_of_loop_shapes_match_the_concrete_execution(path, sym, consts):
    """The closed-form counts on other loop shapes: every event's existence, slot and generation, and every
    warp's arrival units, waits and expect_tx per slot over the whole run (`Ends`), at sizes 1 .. 5."""
    func, m = model_at(path, sym, **consts)
    ends = Ends(m)
    checked = 0
    for size in range(1, 6):
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
                        assert slot.as_long() == x.slot and (x.gen is None or g.as_long() == x.gen)
                        checked += 1
            for fam, prm in m.params.items():
                for s in range(prm.size):
                    mine = [x for x in ex.events if x is not None and x.warp == p.warp and x.family == fam
                            and x.slot == s and not x.delivery]
                    want = (sum(x.step.cmd.units for x in mine if x.kind in ARRIVALS),
                            sum(1 for x in mine if x.kind in ("wait", "bar_wait")),
                            sum(1 for x in mine if x.kind == "expect_tx"))
                    at = z3.IntVal(s)
                    terms = [ends.units(p.warp, fam, at), ends.waits(p.warp, fam, at),
                             ends.executions(p.warp, fam, at, "expect_tx")]
                    sv = z3.Solver()
                    sv.add(m.syms[sym] == size, *ends.side, *m.size_terms.side)
                    assert sv.check() == z3.sat
                    got = tuple(sv.model().eval(t, model_completion=True).as_long() for t in terms)
                    assert got == want, (path.stem, size, p.warp, fam, s)
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
