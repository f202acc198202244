"""The lark Transformer of `ir.syntax_parser`: grammar rules -> `ir.syntax` nodes, with source positions.

Assumes the rule and alias names of `grammars/tirx.lark` and the tokens the lexer and the indentation
postlexer (`ir.syntax_parser`) hand over, each with its position set.  Guarantees: run inline by the LALR
parser, `ToSyntax` turns every rule into a node (or a small tuple/list its parent rule unpacks) whose
`Pos` spans its tokens; `elif` chains nest as an `If` in the else branch; f-string fields stay text
(the meta pass parses them: the parser is not reentrant).  Its only errors are malformed f-strings.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import cast

from lark import Token, Transformer

from .errors import ParseError
from .syntax import (Pos, Node, Name, Num, Str, FStr, Lit, Attr, Slice, Subscript, Keyword, Starred, Call, BinOp,
                     UnaryOp, BoolOp, Compare, IfExp, TupleLit, ListLit, DictLit, ExprStmt, Assign, AnnAssign,
                     AugAssign, Pass, Break, Continue, Return, Assert, Import, If, For, While, WithItem, With,
                     Param, FunctionDef, Module)


def _tok_pos(tok: Token) -> Pos:
    # tokens reaching the transformer come from the lexer, which sets every position field
    line, col = cast(int, tok.line), cast(int, tok.column)
    return Pos(line, col, tok.end_line or line, tok.end_column or col + len(tok))


_LAYOUT = ("_NEWLINE", "_INDENT", "_DEDENT")


def _edge(items, first: bool):
    """(line, col) of the first item's start, or the last item's end, searching nested sequences."""
    seq = items if first else reversed(items)
    for x in seq:
        if isinstance(x, Token):
            if x.type in _LAYOUT or x.line is None:
                continue
            return (x.line, x.column) if first else (x.end_line, x.end_column)
        if isinstance(x, Node):
            return (x.pos.line, x.pos.col) if first else (x.pos.end_line, x.pos.end_col)
        if isinstance(x, _Clause):
            return _edge([x.keyword, x.body], first)
        if isinstance(x, (list, tuple)):
            found = _edge(x, first)
            if found:
                return found
    return None


def _bounds(items) -> Pos:
    a = _edge(items, True) or (1, 1)
    b = _edge(items, False) or a
    return Pos(a[0], a[1], b[0], b[1])


def _nodes(items) -> list:
    return [c for c in items if isinstance(c, Node)]


@dataclass(frozen=True, slots=True)
class _Clause:
    """An `elif`/`else` clause while its `if` is being assembled."""

    kind: str
    test: "Node | None"
    body: tuple
    keyword: Token


def _string_prefix(tok: Token) -> str:
    text = str(tok)
    k = 0
    while k < len(text) and text[k] in "rbufRBUF":
        k += 1
    return text[:k].lower()


def _fstring_parts(tok: Token, pos: Pos) -> list:
    """The parts of one f-string token: literal text and (expression, conversion, format spec) fields.
    Each field's expression is parsed with the same grammar and placed at the string's position."""
    import string as _string
    prefix = _string_prefix(tok)
    text = str(tok)[len(prefix):]
    quote = 3 if text[:3] in ('"""', "'''") else 1
    body = text[quote:-quote]
    try:
        fields = list(_string.Formatter().parse(body))
    except ValueError as err:
        raise ParseError(f"malformed f-string: {err}", pos.span(""), hint="balance the braces; write {{ and }} "
                         "for literal braces") from None
    parts: list = []
    for literal, field, spec, conv in fields:
        if literal:
            parts.append(literal if "r" in prefix else _unescape(literal))
        if field is None:
            continue
        if not field.strip():
            raise ParseError("empty expression in an f-string", pos.span(""), hint="write an expression inside {}")
        parts.append((field, conv or "", spec or ""))     # parsed by the meta pass (the parser is not reentrant)
    return parts


def _unescape(body: str) -> str:
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return body


def _parse_string(tok: Token) -> str:
    text = str(tok)
    prefix = ""
    while text and text[0] in "rbufRBUF":
        prefix += text[0].lower()
        text = text[1:]
    quote = 3 if text[:3] in ('"""', "'''") else 1
    body = text[quote:-quote]
    if "r" in prefix:
        return body
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return body


def _statements(children) -> tuple[Node, ...]:
    """A block's statements: simple statements come as lists (one per `;`-joined line), compound ones alone."""
    body: list[Node] = []
    for c in children:
        if isinstance(c, list):
            body.extend(c)
        elif isinstance(c, Node):
            body.append(c)
    return tuple(body)


class ToSyntax(Transformer):
    """The one lark Transformer: grammar rules -> surface AST nodes, run inline by the LALR parser."""

    # -- module and statements
    def file_input(self, children):
        body = _statements(children)
        return Module(_bounds(body) if body else Pos(1, 1, 1, 1), body)

    def simple_stmt(self, children):
        return _nodes(children)

    def expr_stmt(self, children):
        return ExprStmt(children[0].pos, children[0])

    def assign(self, children):
        nodes = _nodes(children)
        return Assign(_bounds(nodes), tuple(nodes[:-1]), nodes[-1])

    def annassign(self, children):
        target, annotation, value = (list(children) + [None])[:3]
        return AnnAssign(_bounds(children), target, annotation, value)

    def augassign(self, children):
        target, op, value = children
        return AugAssign(_bounds(children), target, str(op)[:-1], value)

    def pass_stmt(self, children):
        return Pass(_bounds(children))

    def break_stmt(self, children):
        return Break(_bounds(children))

    def continue_stmt(self, children):
        return Continue(_bounds(children))

    def return_stmt(self, children):
        nodes = _nodes(children)
        return Return(_bounds(children), nodes[0] if nodes else None)

    def assert_stmt(self, children):
        nodes = _nodes(children)
        return Assert(_bounds(children), nodes[0], nodes[1] if len(nodes) > 1 else None)

    def dotted_name(self, children):
        return ".".join(str(c) for c in children)

    def import_name(self, children):
        module = next(c for c in children if type(c) is str)
        names = [c for c in children if isinstance(c, Token) and c.type == "NAME"]
        return Import(_bounds(children), module, (), str(names[-1]) if names else None)

    def import_from(self, children):
        module = next(c for c in children if type(c) is str)
        names = next(c for c in children if isinstance(c, tuple))
        return Import(_bounds(children), module, names)

    def import_names(self, children):
        if any(isinstance(c, Token) and c.type == "STAR" for c in children):
            return (("*", None),)
        return tuple(c for c in children if isinstance(c, tuple))

    def import_alias(self, children):
        name, alias = (list(children) + [None])[:2]
        return (str(name), str(alias) if alias is not None else None)

    def suite(self, children):
        return _statements(children)

    def if_stmt(self, children):
        test = _nodes(children)[0]
        body = next(c for c in children if isinstance(c, tuple))
        clauses = [c for c in children if isinstance(c, _Clause)]
        orelse: tuple[Node, ...] = ()
        if clauses and clauses[-1].kind == "else":
            orelse = clauses.pop().body
        # `elif` chains nest as an If in the else branch, as TVM prints them
        for clause in reversed(clauses):
            orelse = (If(_bounds([clause.keyword, clause.body]), clause.test, clause.body, orelse),)
        return If(_bounds(children), test, body, orelse)

    def elif_clause(self, children):
        return _Clause("elif", _nodes(children)[0], children[-1], children[0])

    def else_clause(self, children):
        return _Clause("else", None, children[-1], children[0])

    def for_stmt(self, children):
        return For(_bounds(children), children[1], children[3], children[-1])

    def for_target(self, children):
        return tuple(Name(_tok_pos(t), str(t)) for t in children)

    def while_stmt(self, children):
        return While(_bounds(children), children[1], children[-1])

    def with_stmt(self, children):
        return With(_bounds(children), tuple(c for c in children if isinstance(c, WithItem)), children[-1])

    def with_item(self, children):
        ctx, name = (list(children) + [None])[:2]
        target = Name(_tok_pos(name), str(name)) if name is not None else None
        return WithItem(_bounds([ctx, name] if name is not None else [ctx]), ctx, target)

    def decorated(self, children):
        *decorators, func = children
        return FunctionDef(_bounds(children), func.name, func.params, func.body, tuple(decorators), func.header)

    def decorator(self, children):
        return _nodes(children)[0]

    def funcdef(self, children):
        name = children[1]
        params = children[3]
        return FunctionDef(_bounds(children), str(name), params or (), children[-1], (), _tok_pos(name))

    def parameters(self, children):
        out, kwonly = [], False
        for c in children:
            if isinstance(c, Token) and c.type == "STAR":
                kwonly = True        # `*,` the parameters after it are keyword-only
            elif isinstance(c, Param):
                out.append(replace(c, kwonly=True) if kwonly else c)
        return tuple(out)

    def param(self, children):
        name, annotation, default = (list(children) + [None, None])[:3]
        return Param(_bounds(children), str(name), annotation, default)

    # -- expressions
    def ternary(self, children):
        body, test, orelse = children
        return IfExp(_bounds(children), test, body, orelse)

    def or_chain(self, children):
        return BoolOp(_bounds(children), "or", tuple(children))

    def and_chain(self, children):
        return BoolOp(_bounds(children), "and", tuple(children))

    def not_op(self, children):
        return UnaryOp(_bounds(children), "not", children[-1])

    def compare_chain(self, children):
        return Compare(_bounds(children), children[0], tuple(children[1::2]), tuple(children[2::2]))

    def comp_op(self, children):
        return str(children[0])

    def in_op(self, children):
        return "in"

    def not_in_op(self, children):
        return "not in"

    def is_op(self, children):
        return "is"

    def is_not_op(self, children):
        return "is not"

    @staticmethod
    def _fold(op, children):
        node = children[0]
        for rhs in children[1:]:
            node = BinOp(Pos(node.pos.line, node.pos.col, rhs.pos.end_line, rhs.pos.end_col), op, node, rhs)
        return node

    def or_bits(self, children):
        return self._fold("|", children)

    def xor_bits(self, children):
        return self._fold("^", children)

    def and_bits(self, children):
        return self._fold("&", children)

    def binary_chain(self, children):
        node = children[0]
        for op, rhs in zip(children[1::2], children[2::2]):
            node = BinOp(Pos(node.pos.line, node.pos.col, rhs.pos.end_line, rhs.pos.end_col), str(op), node, rhs)
        return node

    def unary(self, children):
        op, operand = children
        return UnaryOp(_bounds(children), str(op), operand)

    def pow(self, children):
        return BinOp(_bounds(children), "**", children[0], children[-1])

    def call(self, children):
        func, _lpar, arguments, _rpar = children
        args: list[Node] = []
        kwargs: list[Keyword] = []
        for a in arguments or ():
            (kwargs if isinstance(a, Keyword) else args).append(a)
        return Call(_bounds(children), func, tuple(args), tuple(kwargs))

    def arguments(self, children):
        return tuple(children)

    def kwarg(self, children):
        name, value = children
        return Keyword(_bounds(children), str(name), value)

    def star_arg(self, children):
        return Starred(_bounds(children), children[-1])

    def double_star_arg(self, children):
        return Keyword(_bounds(children), "**", Starred(_bounds(children), children[-1], double=True))

    def bare_tuple(self, children):
        return TupleLit(_bounds(children), tuple(_nodes(children)))

    def getitem(self, children):
        return Subscript(_bounds(children), children[0], children[2])

    def subscripts(self, children):
        return tuple(children)

    def slice(self, children):
        items = list(children) + [None] * 5
        return Slice(_bounds(children), items[0], items[2], items[4])

    def getattr(self, children):
        return Attr(_bounds(children), children[0], str(children[-1]))

    def name(self, children):
        return Name(_tok_pos(children[0]), str(children[0]))

    @staticmethod
    def _number(tok: Token, value):
        return Num(_tok_pos(tok), value, str(tok))

    def dec_number(self, children):
        return self._number(children[0], int(str(children[0]).replace("_", "")))

    def hex_number(self, children):
        return self._number(children[0], int(str(children[0]).replace("_", ""), 16))

    def bin_number(self, children):
        return self._number(children[0], int(str(children[0]).replace("_", ""), 2))

    def oct_number(self, children):
        return self._number(children[0], int(str(children[0]).replace("_", ""), 8))

    def float_number(self, children):
        return self._number(children[0], float(str(children[0]).replace("_", "")))

    def string(self, children):
        pos = _bounds(children)
        if not any(_string_prefix(t).count("f") for t in children):
            return Str(pos, "".join(_parse_string(t) for t in children))
        parts: list = []
        for t in children:
            if "f" in _string_prefix(t):
                parts.extend(_fstring_parts(t, pos))
            else:
                parts.append(_parse_string(t))
        return FStr(pos, tuple(parts))

    def true(self, children):
        return Lit(_bounds(children), True)

    def false(self, children):
        return Lit(_bounds(children), False)

    def none(self, children):
        return Lit(_bounds(children), None)

    def empty_tuple(self, children):
        return TupleLit(_bounds(children), ())

    def paren(self, children):
        return children[1]

    def tuple(self, children):
        return TupleLit(_bounds(children), tuple(_nodes(children)))

    def list(self, children):
        return ListLit(_bounds(children), tuple(_nodes(children)))

    def dict(self, children):
        return DictLit(_bounds(children), tuple(c for c in children if isinstance(c, tuple)))

    def dict_item(self, children):
        return (children[0], children[1])

