"""Shared values of repeated subexpressions (numsim.expr_cse): which subtrees are shared, and a kernel whose
outputs and uninitialized-read diagnostics are those of the unshared compile."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir
from modelcheck import numsim
from modelcheck.numsim import expr_cse as C

I32 = "int32"
LANE = ir.Var("lane", I32)
FIXTURE = Path(__file__).parents[2] / "fixtures" / "numsim" / "cse_swizzle.py"


def c(v):
    return ir.Const(v, I32)


def b(op, x, y, dtype=I32):
    return ir.BinOp(op, x, y, dtype)


def _consts(e):
    return e.value if isinstance(e, ir.Const) else None


REG = ir.Load("stage", (c(0),), I32)
LIN = b("+", b("*", b("+", REG, LANE), c(128)), b("&", LANE, c(15)))       # repeated below
SWZ = b("+", b("*", b("%", b("//", LIN, c(64)), c(2)), c(4096)), b("%", LIN, c(64)))


def test_plan_shares_nested_repeats():
    e = b("^", SWZ, b("<<", b("&", b(">>", SWZ, c(6)), c(7)), c(3)))
    got = C.plan(e, _consts, lambda load: True)
    assert got == [SWZ, LIN]            # LIN repeats more often than SWZ around it


@pytest.mark.parametrize("e", [
    b("+", b("//", c(64), LANE), b("//", c(64), LANE)),                             # variable divisor
    b("+", ir.Select(b("<", LANE, c(4), "bool"), LIN, c(0), I32, True), LIN),       # lazy select
    b("+", LIN, b("*", LIN, ir.Load("smem", (LANE,), I32))),                        # memory load
])
def test_plan_refuses_mask_or_memory_dependent_roots(e):
    assert C.plan(e, _consts, lambda load: load.buffer == "stage") == []


def _run(monkeypatch, share: bool):
    if not share:
        monkeypatch.setattr(C, "plan", lambda *a: [])
    func = ir.parse_file(FIXTURE)
    return numsim.run(func, {"out": np.zeros((2, 4, 64), np.int32)})


def test_kernel_matches_the_unshared_compile_and_numpy(monkeypatch):
    func = ir.parse_file(FIXTURE)
    store = next(s for s in ir.walk(func.body) if isinstance(s, ir.Store) and s.buffer == "out")
    assert C.plan(store.value, _consts, lambda load: True), "the fixture repeats subtrees"
    shared = _run(monkeypatch, True)
    plain = _run(monkeypatch, False)
    np.testing.assert_array_equal(shared.outputs["out"], plain.outputs["out"])
    # every register read still notes its site, as often as before
    assert [(d.kind, d.span, d.details) for d in shared.diagnostics] == \
        [(d.kind, d.span, d.details) for d in plain.diagnostics]
    assert sum(d.details["count"] for d in shared.diagnostics if d.kind == "uninitialized_read") == 4 * 4 * 4
    tx = np.arange(64)
    lane, warp = tx & 31, tx // 32
    for bx in range(2):
        lin = (bx * 32 + warp * 16 + (lane >> 1)) * 128 + (lane & 15) * 4
        swz = lin // 64 % 2 * 4096 + lin % 64
        for i in range(4):
            np.testing.assert_array_equal(shared.outputs["out"][bx, i], swz ^ ((swz >> 6 & 7) << 3) + i)


class _Warp:
    COHORT = False

    def __init__(self, env):
        self.env = env


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=2, max_size=2),
       st.sampled_from(["+", "-", "*", "&", "^", ">>", "<<"]))
def test_shared_closures_agree_with_plain_ones(vals, op):
    """A compiled root with shared occurrences gives the plain closures' values, uniform or per lane."""
    from modelcheck.numsim.compile_expr import ExprCompiler

    x, y = ir.Var("x", I32), ir.Var("y", I32)
    rhs = c(3) if op in (">>", "<<") else y
    inner = b(op, b("+", x, rhs), b("*", x, c(3)))
    e = b("^", b("-", inner, y), b("+", inner, b(op, inner, rhs)))

    class _Ops:
        class cc:
            async_destinations = frozenset()

    def compiled(share):
        ec = ExprCompiler(ir.PrimFunc.__new__(ir.PrimFunc), {}, {}, {}, (32, 1, 1), _Ops)
        ec.slot("x"), ec.slot("y")
        saved = C.plan
        try:
            if not share:
                C.plan = lambda *a: []
            return ec.expr(e)
        finally:
            C.plan = saved

    shared, plain = compiled(True), compiled(False)
    lanes = (np.arange(32, dtype=np.int64) * 7919 + vals[0]).astype(np.int32)
    for env in ([vals[0], vals[1]], [lanes, vals[1]], [vals[0], lanes[::-1].copy()]):
        with np.errstate(over="ignore"):
            got, want = shared(_Warp(list(env))), plain(_Warp(list(env)))
        assert np.array_equal(np.asarray(got), np.asarray(want)) and type(got) is type(want)
