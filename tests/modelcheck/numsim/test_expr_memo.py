"""Kept values of pure expressions (numsim.expr_memo): what counts as pure, and hits that return the value the
closure computes."""
import numpy as np
import pytest

import ir
from modelcheck.numsim import expr_memo as M
from modelcheck.numsim import values as V

I32 = "int32"
LANE = ir.Var("lane", I32)
WARP = ir.Var("warp", I32)
N = ir.Var("n", I32)


def c(v):
    return ir.Const(v, I32)


def b(op, x, y, dtype=I32):
    return ir.BinOp(op, x, y, dtype)


def _consts(e):
    """The compiler's `const_value`: literals, and `n` a scalar parameter."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Var) and e.name == "n":
        return 7             # a scalar parameter: a compile-time constant
    return None


@pytest.mark.parametrize("e, names, tags", [
    (b("+", b("*", b("&", WARP, c(3)), c(64)), b("*", b("&", LANE, c(15)), c(4))), ("warp", "lane"), ()),
    (b("//", LANE, c(8)), ("lane",), ()),
    (b("%", ir.ThreadIndex("threadIdx.x", I32), c(32)), (), ("threadIdx.x",)),
    (ir.Select(b("<", LANE, N, "bool"), LANE, c(0), I32, False), ("lane",), ()),
    (b("//", LANE, N), ("lane",), ()),                     # divisor a scalar parameter: constant 7
])
def test_pure_inputs(e, names, tags):
    got = M.inputs(e, _consts, {})
    assert got is not None and got[0] == names and got[1] == tags


@pytest.mark.parametrize("e", [
    b("and", b("<", LANE, c(4), "bool"), b(">", WARP, c(0), "bool"), "bool"),     # short circuit under the mask
    b("//", c(64), LANE),                                                      # faults only on active lanes
    ir.Select(b("<", LANE, c(4), "bool"), LANE, c(0), I32, True),              # if_then_else: per side lanes
    b("+", ir.Load("buf", (LANE,), I32), c(1)),                                # memory
])
def test_not_pure(e):
    assert M.inputs(e, _consts, {}) is None


class _Warp:
    COHORT = False

    def __init__(self, env, index=0):
        self.env = env
        self.index = index


def _counting(fn):
    calls = []

    def f(w):
        calls.append(1)
        return fn(w)
    return f, calls


def test_hits_by_identity_and_int_value():
    lanes = np.arange(32, dtype=np.int32)
    fn, calls = _counting(lambda w: (w.env[0] & 15) * 4 + w.env[1])
    f = M.memoized(fn, [0, 1], ())
    r1 = f(_Warp([lanes, 1000]))
    r2 = f(_Warp([lanes, 999 + 1]))          # another int object of the same value: a hit
    assert r2 is r1 and len(calls) == 1
    assert not r1.flags.writeable              # a kept value is never changed in place
    other = lanes.copy()                       # equal values, another array: computed again (identity key)
    r3 = f(_Warp([other, 1000]))
    assert len(calls) == 2 and np.array_equal(r3, r1)
    r4 = f(_Warp([lanes, 1001]))
    assert len(calls) == 3 and np.array_equal(r4, (lanes & 15) * 4 + 1001)


def test_float_values_are_keyed_by_identity():
    """-0.0 == 0.0, but their results may differ (1 / x): numpy scalars never match by value."""
    fn, calls = _counting(lambda w: np.full(32, np.float32(1)) / w.env[0])
    f = M.memoized(fn, [0], ())
    with np.errstate(divide="ignore"):
        pos, neg = f(_Warp([np.float32(0.0)])), f(_Warp([np.float32(-0.0)]))
    assert len(calls) == 2 and pos[0] == np.inf and neg[0] == -np.inf


def test_uniform_results_turn_the_site_off():
    fn, calls = _counting(lambda w: w.env[0] * 2 + 1)
    f = M.memoized(fn, [0], ())
    assert [f(_Warp([5])) for _ in range(3)] == [11, 11, 11]
    assert len(calls) == 3                      # an int costs less to compute than to look up


def test_thread_index_keys_by_warp_index():
    fn, calls = _counting(lambda w: V.LANES + 32 * w.index)
    f = M.memoized(fn, [], ("threadIdx.x",))
    a, a2, bb = f(_Warp([], 1)), f(_Warp([], 1)), f(_Warp([], 2))
    assert a is a2 and len(calls) == 2 and bb[0] == 64


def test_cohort_warps_evaluate_directly():
    lanes = np.arange(64, dtype=np.int32)
    fn, calls = _counting(lambda w: w.env[0] + 1)
    f = M.memoized(fn, [0], ())
    w = _Warp([lanes])
    w.COHORT = True
    f(w)
    f(w)
    assert len(calls) == 2


def test_kernel_with_kept_index_values_matches_numpy():
    from pathlib import Path

    from modelcheck import numsim
    func = ir.parse_file(Path(__file__).parents[2] / "fixtures" / "numsim" / "memo_lane_index.py")
    res = numsim.run(func, {"out": np.zeros((3, 4, 64), np.int32)})
    tx = np.arange(64)
    lane, warp = tx % 32, tx // 32
    base = (warp & 1) * 32 + (lane & 15) * 2 + (lane >> 4)
    want = np.zeros((3, 4, 64), np.int64)
    for bx in range(3):
        acc = np.full(64, bx)
        for i in range(4):
            acc = np.where(lane >= 8, acc + (lane & 15) * 2, acc)
            want[bx, i] = base * (i + 1) + acc
    np.testing.assert_array_equal(res.outputs["out"], want)


def test_register_reads_are_inputs_while_they_hold_ints():
    """A register element at a constant index is an input (by its int value); an unwritten register or a lane
    vector in it evaluates directly (the read is noted, or the array may be a cohort row's changing copy)."""
    load = ir.Load("stage", (c(0),), I32)
    e = b("+", b("*", load, c(32)), LANE)
    got = M.inputs(e, _consts, {}, lambda ld: M.register_name(ld.buffer, 0))
    assert got is not None and got[0] == (M.register_name("stage", 0), "lane")
    assert M.inputs(e, _consts, {}) is None                      # no register callback: a load is not pure

    lanes = np.arange(32, dtype=np.int32)
    fn, calls = _counting(lambda w: (w.local[3][0] if w.local[3][0] is not None else 0) * 32 + w.env[0])
    f = M.memoized(fn, [0], (), [(3, 0)])
    w = _Warp([lanes])
    w.local = {3: [1]}
    r1, r2 = f(w), f(w)
    assert r2 is r1 and len(calls) == 1 and np.array_equal(r1, lanes + 32)
    w.local = {3: [2]}
    assert np.array_equal(f(w), lanes + 64) and len(calls) == 2
    for held in (None, np.full(32, 2, np.int32)):
        w.local = {3: [held]}
        before = len(calls)
        f(w)
        f(w)
        assert len(calls) == before + 2
