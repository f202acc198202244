"""The z3 encoding against a plain-Python reading of the same model.

At states reached by random concrete schedules, every barrier counter, generation and
enabled move computed from the z3 terms must equal what `sample.Concrete` computes by
counting executions one by one — so a wrong closed form (slot rotation, guard range,
clamping at block ends) fails here, independently of any proof.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import z3

import modelcheck
from modelcheck.prover.induction import counters
from modelcheck.prover.model import Model
from modelcheck.prover.sample import reachable_states
from modelcheck.prover.skeleton import extract
from modelcheck.prover.transitions import moves

ROOT = Path(__file__).resolve().parents[3]


# the symbolic constant of each fixture that is not a ROUNDS ring
_SYMBOLIC = {"nested_symbolic": "TILES", "cursor_tiles": "K", "kda_ring_dvec": "NC"}


def _model(path, symbolic="ROUNDS", **consts):
    kernel = modelcheck.load(ROOT / path, **consts)
    values = {c.name: c.value for c in kernel.func.constants}
    skel = extract(kernel.func, (symbolic,), values)
    return Model(skel, {symbolic: (1, None)}, {})


def _position(c, warp: int, t: int):
    """(block, q, offset) of step counter t, as the symbolic state encodes it."""
    p = c.m.proc(warp)
    for i, b in enumerate(p.blocks):
        base = c.bases[(warp, id(b))]
        if b.kind == "straight":
            if base <= t < base + b.length:
                return i, 0, t - base
            continue
        trips = c.trips[(warp, id(b))]
        if base <= t < base + trips * b.length:
            q, off = divmod(t - base, b.length)
            return i, q, off
    return len(p.blocks), 0, 0


def _bind(m, st, c, state):
    t, d = state
    eqs = [v == c.env[n] for n, v in m.syms.items()]
    for w in t:
        blk, q, off = _position(c, w, t[w])
        eqs += [st.blk[w] == blk, st.q[w] == q, st.pos[w] == off]
    eqs += [st.d[k] == v for k, v in d.items()]
    return eqs


@pytest.mark.parametrize("path,consts", [("kernels/ring_pipeline.py", {"STAGES": 3}),
                                         ("kernels/ring_guarded.py", {}),
                                         ("kernels/ring_short_arrival_fixed.py", {}),
                                         ("tests/fixtures/prover/nested_symbolic.py", {}),
                                         ("tests/fixtures/prover/cursor_tiles.py", {}),
                                         ("kernels/kda_ring_dvec.py", {})])
def test_counters_and_enabled_moves_match_the_concrete_model(path, consts):
    symbolic = _SYMBOLIC.get(Path(path).stem, "ROUNDS")
    m = _model(path, symbolic, **consts)
    samples = reachable_states(m, [{symbolic: 1}, {symbolic: 4}], walks=2, seed=3)
    st = m.state("x")
    slot = z3.Int("slot")
    mvs = moves(m, st, None)
    checked = 0
    for c, state in samples[::max(7, len(samples) // 8)]:
        solver = z3.Solver()
        solver.add(*_bind(m, st, c, state))
        terms = {fam: counters(m, st, fam, slot) for fam in m.params}
        enabled = [mv.pre for mv in mvs if mv.what != "exit"]
        solver.add(*st.side)
        for fam, prm in m.params.items():
            for s in range(prm.size):
                solver.push()
                solver.add(slot == s)
                assert solver.check() == z3.sat
                model = solver.model()
                want = c.counters(state, fam, s)
                got = {k: model.eval(v, model_completion=True).as_long() for k, v in terms[fam].items()}
                assert got == want, (path, fam, s, state)
                solver.pop()
        assert solver.check() == z3.sat
        model = solver.model()
        z3_moves = sum(1 for e in enabled if z3.is_true(model.eval(e, model_completion=True)))
        assert z3_moves == len(c.enabled(state)), (path, state)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("path,consts", [("kernels/ring_pipeline.py", {"STAGES": 3}),
                                         ("kernels/ring_guarded.py", {}),
                                         ("kernels/ring_short_arrival.py", {}),
                                         ("kernels/producer_overtaking_fixed.py", {}),
                                         ("tests/fixtures/prover/nested_symbolic.py", {})])
def test_incremental_walk_counts_like_recounting_from_the_start(path, consts):
    """The sampler keeps counters move by move; recounting every command from scratch must agree."""
    from modelcheck.prover.sample import Concrete, Walk
    symbolic = "TILES" if "nested" in path else "ROUNDS"
    m = _model(path, symbolic, **consts)
    checked = 0
    for n in (1, 3):
        walk = Walk(Concrete(m, {symbolic: n}))
        fresh = Concrete(m, {symbolic: n})
        rng = __import__("random").Random(5)
        while True:
            walk.record()
            state = walk.state()
            assert sorted(walk.enabled()) == sorted(fresh.enabled(state)), (path, state)
            for fam, prm in m.params.items():
                for s in range(prm.size):
                    assert walk.c.counters(state, fam, s) == fresh._counters(state, fam, s), (path, fam, s, state)
            checked += 1
            moves = walk.enabled()
            if not moves:
                break
            walk.apply(rng.choice(moves))
    assert checked >= 20
