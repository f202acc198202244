"""The compiled evaluation of IR expressions agrees with the tree walk it replaces (STYLE item 5)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import ir
from modelcheck.prover.exprs import walk_evaluate, evaluate

OPS = ["+", "-", "*", "//", "%", "floordiv", "floormod", "tdiv", "tmod", "<", "<=", ">", ">=", "==", "!=", "and",
       "&&", "or", "||", "min", "max", "&", "|", "^", "<<", ">>"]
NAMES = ["r", "N", "K"]


def _exprs():
    leaves = st.one_of(st.integers(-7, 9).map(lambda v: ir.Const(v, "int32")),
                       st.booleans().map(lambda v: ir.Const(v, "bool")),
                       st.sampled_from(NAMES + ["unbound"]).map(lambda n: ir.Var(n, "int32")),
                       st.just(ir.ConstRef("N", "int32")))

    def grow(children):
        return st.one_of(
            st.builds(lambda op, a, b: ir.BinOp(op, a, b, "int32"), st.sampled_from(OPS), children, children),
            st.builds(lambda op, a: ir.UnaryOp(op, a, "int32"), st.sampled_from(["not", "!", "-", "~"]), children),
            st.builds(lambda c, a, b: ir.Select(c, a, b, "int32", True), children, children, children),
            st.builds(lambda a: ir.Cast("int64", a), children))
    return st.recursive(leaves, grow, max_leaves=12)


def _outcome(fn, e, env):
    try:
        return "value", fn(e, env)
    except (KeyError, ZeroDivisionError, ValueError) as err:   # ValueError: a negative shift
        return type(err).__name__, str(err)


@settings(max_examples=400, deadline=None)
@given(_exprs(), st.fixed_dictionaries({n: st.integers(-9, 9) for n in NAMES}))
def test_compiled_evaluation_agrees_with_the_tree_walk(e, env):
    assert _outcome(evaluate, e, env) == _outcome(walk_evaluate, e, env)


def test_a_ring_slot_at_successive_iterations():
    e = ir.BinOp("%", ir.BinOp("+", ir.Var("r", "int32"), ir.ConstRef("N", "int32"), "int32"), ir.Const(3, "int32"),
                 "int32")
    assert [evaluate(e, {"r": r, "N": 2}) for r in range(5)] == [2, 0, 1, 2, 0]
