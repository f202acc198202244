"""`T.Let(body, where={v: value})`, the let expression TVM's lowering prints: parsed with the binding in scope
(a fresh variable per let), printed back in the same form, and rejected clearly when malformed."""
from __future__ import annotations

from pathlib import Path

import pytest

import ir

FIX = Path(__file__).parent.parent / "fixtures" / "ops2"


def test_let_expressions_parse_with_fresh_variables_and_round_trip():
    func = ir.parse_file(FIX / "let_expr.py")
    lets = [n for n in ir.walk(func.body) if isinstance(n, ir.LetExpr)]
    assert len(lets) == 4
    names = [let.var.name for let in lets]
    assert len(set(names)) == 4            # the reused `rdiv` becomes four distinct variables
    assert all(let.var.dtype == "int32" and let.dtype == "int32" for let in lets)
    text = ir.print_func(func)
    assert "T.Let(" in text and "where={" in text
    again = ir.parse(text)
    assert again == func and ir.same_ir(again, func)


def test_inner_let_shadows_outer_binding():
    func = ir.parse_file(FIX / "let_expr.py")
    outer = next(n for n in ir.walk(func.body) if isinstance(n, ir.LetExpr) and isinstance(n.body, ir.BinOp)
                 and isinstance(n.body.b, ir.LetExpr))
    inner = outer.body.b
    assert isinstance(inner, ir.LetExpr)
    # the inner value reads the outer variable, the inner body the inner one
    assert ir.Var(outer.var.name, "int32") in list(ir.walk(inner.value))
    assert ir.Var(inner.var.name, "int32") in list(ir.walk(inner.body))


@pytest.mark.parametrize("call, what", [
    ("T.Let(x + 1)", "T.Let takes (body, where={variable: value})"),
    ("T.Let(x + 1, where={x: 1, y: 2})", "T.Let takes (body, where={variable: value})"),
    ("T.Let(a + 1, where={a: 3})", "T.Let binds 'a', which is a parameter"),
])
def test_malformed_let_is_a_parse_error(call, what):
    text = (FIX / "let_expr.py").read_text().replace("T.Let(rdiv + T.Let(rdiv * 2, where={rdiv: rdiv + 1}), "
                                                     "where={rdiv: tx - k})", call.replace("a +", "k +")
                                                     .replace("{a:", "{k:"))
    with pytest.raises(ir.ParseError) as err:
        ir.parse(text)
    assert what.replace("'a'", "'k'") in str(err.value)
