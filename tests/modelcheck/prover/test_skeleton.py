"""The sync skeleton: roles, lane multiplicities, loops, guards, closed forms, and the fragment's edges."""
from __future__ import annotations

from pathlib import Path

import pytest

import ir
import modelcheck
from modelcheck.prover.exprs import OutsideFragment, evaluate
from modelcheck.prover.program import layout
from modelcheck.prover.skeleton import Command, Guarded, Loop, extract

ROOT = Path(__file__).resolve().parents[3]
KERNELS = ROOT / "kernels"
FIXTURES = ROOT / "tests" / "fixtures" / "prover"


def _skeleton(path, symbolic=("ROUNDS",), **consts):
    kernel = modelcheck.load(path, **consts)
    values = {c.name: c.value for c in kernel.func.constants}
    return extract(kernel.func, symbolic, values)


def _loop(items) -> Loop:
    return next(x for x in items if isinstance(x, Loop))


def test_roles_and_elected_arrivals_count_lanes():
    skel = _skeleton(KERNELS / "ring_arith.py")
    assert sorted(skel.warps) == [0, 1]
    producer, consumer = _loop(skel.warps[0]), _loop(skel.warps[1])
    kinds = [(c.kind, c.family, c.units) for c in producer.body]
    # the wait is executed by all 32 lanes, the arrive by lane 0 only
    assert kinds == [("wait", "empty", 32), ("arrive", "full", 1)]
    assert [(c.kind, c.family) for c in consumer.body] == [("wait", "full"), ("arrive", "empty")]
    assert producer.stop == ir.ConstRef("ROUNDS", "int32")
    assert skel.inits[("full", 0)] == ir.Const(1, "uint32") or evaluate(skel.inits[("full", 0)], {}) == 1
    # the CTA barrier after init is a named barrier of all 64 threads
    assert evaluate(skel.inits[("bar0", 0)], {}) == 64


def test_pipeline_state_cursors_get_proved_closed_forms():
    for stages in (1, 3, 4):
        skel = _skeleton(KERNELS / "ring_pipeline.py", STAGES=stages)
        producer = _loop(skel.warps[0])
        wait = producer.body[0]
        assert wait.kind == "wait"
        for r in range(3 * stages + 2):
            env = {producer.var: r}
            # PipelineState(phase=1): stage r % D, parity flips each time the stage wraps
            assert evaluate(wait.slot, env) == r % stages
            assert evaluate(wait.parity, env) == (1 + r // stages) % 2


def test_guards_on_the_loop_variable_stay_guards():
    skel = _skeleton(KERNELS / "ring_guarded.py")
    body = _loop(skel.warps[0]).body
    guarded = next(x for x in body if isinstance(x, Guarded))
    assert [c.kind for c in guarded.body] == ["wait"]
    assert evaluate(guarded.cond, {_loop(skel.warps[0]).var: 1}) is False
    assert evaluate(guarded.cond, {_loop(skel.warps[0]).var: 2}) is True


def test_concrete_small_loops_unroll_and_symbolic_ones_stay():
    skel = _skeleton(FIXTURES / "nested_symbolic.py", symbolic=("TILES",))
    outer = _loop(skel.warps[0])
    assert outer.var == "t"
    # K = 3 iterations of the inner loop were unrolled: three waits and three arrives per tile
    assert [c.kind for c in outer.body if isinstance(c, Command)] == ["wait", "arrive"] * 3


@pytest.mark.parametrize("fixture,symbolic,phrase", [
    ("data_branch.py", ("ROUNDS",), "a branch on a load of flag around sync commands"),
    ("lane_slot.py", ("ROUNDS",), "an mbarrier slot chosen by data or the lane"),
])
def test_outside_the_fragment_names_the_construct(fixture, symbolic, phrase):
    with pytest.raises(OutsideFragment) as info:
        _skeleton(FIXTURES / fixture, symbolic=symbolic)
    assert phrase in info.value.construct
    assert info.value.span is not None and info.value.span.line > 0


def test_nested_symbolic_loops_are_refused_at_layout():
    skel = _skeleton(FIXTURES / "nested_symbolic.py", symbolic=("TILES", "K"))
    import z3

    from modelcheck.prover.z3expr import Terms
    sizes = Terms({n: z3.Int(n) for n in ("TILES", "K")})
    with pytest.raises(OutsideFragment) as info:
        layout(0, skel.warps[0], sizes, ("TILES", "K"))
    assert "nested loop with a symbolic trip count" in info.value.construct


def _commands(items, env: dict) -> list:
    """The commands a warp runs at concrete sizes, in program order: (kind, family, units, slot, parity)."""
    out = []
    for it in items:
        if isinstance(it, Loop):
            for r in range(int(evaluate(it.start, env)), int(evaluate(it.stop, env))):
                out += _commands(it.body, {**env, it.var: r})
        elif isinstance(it, Guarded):
            if evaluate(it.cond, env):
                out += _commands(it.body, env)
        else:
            parity = None if it.parity is None else int(evaluate(it.parity, env)) % 2
            out.append((it.kind, it.family, it.units, int(evaluate(it.slot, env)), parity))
    return out


@pytest.mark.parametrize("path,name", [(FIXTURES / "cursor_tiles.py", "K"), (KERNELS / "gemm_ws.py", "K_TILES")])
def test_a_symbolic_skeleton_runs_the_commands_of_the_concrete_one(path, name):
    """Cursors carried across loops (closed forms, the value a loop leaves them at, symbolic entries of the next
    loop) evaluated at a size must give exactly the commands of the skeleton extracted with that size concrete."""
    for value in (1, 2, 3, 4, 5):
        symbolic = _skeleton(path, (name,), **{name: value})
        concrete = _skeleton(path, (), **{name: value})
        assert sorted(symbolic.warps) == sorted(concrete.warps)
        for w, items in concrete.warps.items():
            assert _commands(symbolic.warps[w], {name: value}) == _commands(items, {}), (path.name, w, value)
