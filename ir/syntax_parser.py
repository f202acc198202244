"""The lark side of `ir.syntax`: the LALR parser, the indentation postlexer and the Transformer.

Assumes `grammars/tirx.lark`; the grammar's tables come from `ir/grammar_cache.py`.
Guarantees: `parse_text(text, file)` returns an `ir.syntax.Module` or raises `ParseError`;
no lark `Tree`/`Token` and no lark exception leaves this module.  Loaded by `ir.syntax.parse_syntax`
only when the tree is not cached, so a cached kernel's process never imports lark.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, replace
from importlib import resources
from typing import Iterator, cast

from lark import Token, Transformer
from lark.grammar import Terminal
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from . import grammar_cache
from .errors import ParseError, Span
from .syntax import (Pos, Node, Name, Num, Str, FStr, Lit, Attr, Slice, Subscript, Keyword, Starred, Call, BinOp,
                     UnaryOp, BoolOp, Compare, IfExp, TupleLit, ListLit, DictLit, ExprStmt, Assign, AnnAssign,
                     AugAssign, Pass, Break, Continue, Return, Assert, Import, If, For, While, WithItem, With,
                     Param, FunctionDef, Module)

_OPEN = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
_CLOSE = {"RPAR": "(", "RSQB": "[", "RBRACE": "{"}
_PAIR = {"(": ")", "[": "]", "{": "}"}


class _Indenter(Indenter):
    """Python-style INDENT/DEDENT, with bracket matching that reports where.

    Lark's stock indenter asserts on an unmatched close bracket and reports a bad
    dedent without a position; this one raises `ParseError` with spans instead.
    """

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = list(_OPEN)
    CLOSE_PAREN_types = list(_CLOSE)
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def __init__(self) -> None:
        super().__init__()
        self.brackets: list[Token] = []
        self.history: deque[Token] = deque(maxlen=4)  # recent tokens, for messages

    def process(self, stream):
        self.paren_level = 0
        self.indent_level = [0]
        self.brackets = []
        self.history.clear()
        return self._process(stream)

    def handle_NL(self, token: Token) -> Iterator[Token]:
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            yield Token.new_borrow_pos(self.INDENT_type, indent_str, token)
            return
        while indent < self.indent_level[-1]:
            self.indent_level.pop()
            yield Token.new_borrow_pos(self.DEDENT_type, indent_str, token)
        if indent != self.indent_level[-1]:
            line = cast(int, token.end_line or token.line)  # the lexer sets every position of a token
            raise ParseError(
                "bad indentation: this line's indentation does not match any enclosing block",
                Span("", line, 1, line, indent + 1),
                expected=f"an indentation of {self.indent_level[-1]} columns (or one of the enclosing blocks')",
                hint="indent every statement of a block by the same amount, with spaces only",
            )

    def _process(self, stream):
        token = None
        for token in stream:
            self.history.append(token)
            if token.type == self.NL_type:
                yield from self.handle_NL(token)
                continue
            if token.type in _OPEN:
                self.brackets.append(token)
                self.paren_level += 1
            elif token.type in _CLOSE:
                if not self.brackets:
                    raise ParseError(
                        f"unmatched '{token.value}'", _tok_span(token),
                        hint="remove it, or add the opening bracket it closes")
                opener = self.brackets.pop()
                if _OPEN[opener.type] != _CLOSE[token.type]:
                    raise ParseError(
                        f"closing '{token.value}' does not match '{opener.value}' opened at line "
                        f"{opener.line}:{opener.column}", _tok_span(token),
                        expected=f"'{_PAIR[opener.value]}'",
                        hint="balance the brackets")
                self.paren_level -= 1
            yield token
        if self.brackets:
            opener = self.brackets[-1]
            raise ParseError(
                f"'{opener.value}' is never closed", _tok_span(opener),
                expected=f"a matching '{_PAIR[opener.value]}'", hint="balance the brackets")
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            yield (Token.new_borrow_pos(self.DEDENT_type, "", token) if token
                   else Token(self.DEDENT_type, "", 0, 1, 1, 1, 1, 0))


def _tok_span(tok: Token, file: str = "") -> Span:
    line, col = tok.line or 1, tok.column or 1
    end_line = tok.end_line or line
    end_col = tok.end_column or (col + max(len(str(tok.value)), 1))
    return Span(file, line, col, end_line, end_col)


def _tok_pos(tok: Token) -> Pos:
    # tokens reaching the transformer come from the lexer, which sets every position field
    line, col = cast(int, tok.line), cast(int, tok.column)
    return Pos(line, col, tok.end_line or line, tok.end_column or col + len(tok))


def _meta_pos(meta) -> Pos:
    return Pos(meta.line, meta.column, meta.end_line, meta.end_column)


# --------------------------------------------------------------------------- transformer

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



class _ToSyntax(Transformer):
    """The one lark Transformer: grammar rules -> surface AST nodes, run inline by the LALR parser."""

    # -- module and statements
    def file_input(self, children):
        body: list[Node] = []
        for c in children:
            if isinstance(c, list):
                body.extend(c)
            elif isinstance(c, Node):
                body.append(c)
        return Module(_bounds(body) if body else Pos(1, 1, 1, 1), tuple(body))

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
        body: list[Node] = []
        for c in children:
            if isinstance(c, list):
                body.extend(c)
            elif isinstance(c, Node):
                body.append(c)
        return tuple(body)

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


# --------------------------------------------------------------------------- parser object

_TOKEN_NAMES = {
    "NAME": "a name", "DEC_NUMBER": "a number", "HEX_NUMBER": "a number", "BIN_NUMBER": "a number",
    "OCT_NUMBER": "a number", "FLOAT_NUMBER": "a number", "STRING": "a string", "LONG_STRING": "a string",
    "_NEWLINE": "end of line", "_INDENT": "an indented block", "_DEDENT": "the end of the block",
    "$END": "end of file", "COMPARE": "a comparison operator", "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/', '//', '%' or '@'", "SHIFT_OP": "'<<' or '>>'", "UNARY_OP": "'-', '+' or '~'",
    "AUGOP": "an augmented assignment such as '+='", "STAR": "'*'",
}

_UNSUPPORTED_KEYWORDS = {
    "class", "try", "except", "finally", "lambda", "raise", "del", "global", "nonlocal",
    "yield", "async", "await", "match", "case",
}


class _Parser:
    def __init__(self) -> None:
        grammar = resources.files("grammars").joinpath("tirx.lark").read_text(encoding="utf-8")
        self.postlex = _Indenter()
        # The syntax tree is built inline during the LALR parse (no lark Tree, no position pass).
        self.lark = grammar_cache.load(grammar, self.postlex, _ToSyntax())
        self.lock = threading.Lock()
        self.terminals = {t.name: t for t in self.lark.terminals}

    def describe(self, name: str) -> str:
        if name in _TOKEN_NAMES:
            return _TOKEN_NAMES[name]
        term = self.terminals.get(name)
        if term is not None and term.pattern.type == "str":
            return f"'{term.pattern.value}'"
        return name.lower()

    def expected(self, names) -> str:
        described = sorted({self.describe(n) for n in names if not n.startswith("__")})
        if len(described) > 8:
            described = described[:8] + ["..."]
        return ", ".join(described)

    def parse(self, text: str, file: str) -> Module:
        if not text.endswith("\n"):
            text += "\n"
        with self.lock:
            try:
                return cast(Module, self.lark.parse(text))  # the inline transformer builds a Module
            except ParseError as err:  # raised by the postlexer, without a file name
                raise _at_last_line(_relocate(err, file, text), text) from None
            except UnexpectedInput as err:
                raise _at_last_line(self._convert(err, text, file), text) from None
            except RecursionError:
                raise ParseError("expression nested too deeply", Span(file, 1, 1, 1, 1), source=text,
                                 hint="split the expression into named `T.let` steps") from None

    def _parser_expected(self, err: UnexpectedInput) -> set[str]:
        """What the LALR table accepts here (the contextual lexer reports a narrower set)."""
        state = getattr(err, "state", None)
        if state is not None:
            try:
                keys = state.parse_conf.parse_table.states[state.position].keys()
                return {k for k in keys if k in self.terminals or k in ("$END", "_INDENT", "_DEDENT")}
            except AttributeError:
                pass
        return set(getattr(err, "expected", None) or getattr(err, "allowed", None) or ())

    def _expected_text(self, expected: set[str]) -> str:
        if len(expected) <= 6:
            return self.expected(expected)
        keep = [n for n in ("_NEWLINE", "COLON", "RPAR", "RSQB", "RBRACE", "COMMA", "EQUAL") if n in expected]
        return ", ".join(self.describe(n) for n in keep) + (", or an operator" if keep else "an expression")

    def _what(self, tok: Token) -> str:
        if tok.type == "NAME":
            return f"unexpected name {str(tok)!r}"
        if tok.type.endswith("NUMBER"):
            return f"unexpected number {str(tok)}"
        if tok.type in ("STRING", "LONG_STRING"):
            return "unexpected string"
        if tok.type == "_NEWLINE":
            return "unexpected end of line"
        text = str(tok).strip()
        return f"unexpected {tok.type!r}" if not text else f"unexpected '{text}'"

    def _convert(self, err: UnexpectedInput, text: str, file: str) -> ParseError:
        opener = self.postlex.brackets[-1] if self.postlex.brackets else None
        expected = self._parser_expected(err)
        if isinstance(err, UnexpectedCharacters):
            pos = cast(int, err.pos_in_stream)  # set by UnexpectedCharacters; lark types the base's as None
            ch = text[pos] if pos < len(text) else ""
            span = Span(file, err.line, err.column, err.line, err.column + 1)
            if opener is not None and err.line > cast(int, opener.line):  # a lexed bracket has its line
                return _unclosed(opener, file, text)
            if ch in "\"'":
                return ParseError("unterminated string", span, source=text,
                                  hint="close the string with a matching quote on the same line")
            return ParseError(f"unexpected character {ch!r}", span, source=text,
                              expected=self._expected_text(set(err.allowed or ())),
                              hint="TIRx text is Python syntax; remove the character or quote it in a string")
        if not isinstance(err, UnexpectedToken):
            line = getattr(err, "line", 1) or 1
            return ParseError(str(err).splitlines()[0], Span(file, line, getattr(err, "column", 1) or 1, line, 1),
                              source=text)
        tok = err.token
        if opener is not None and tok.line is not None and tok.line > opener.line:
            return _unclosed(opener, file, text)
        if tok.type == "$END" or isinstance(err, UnexpectedEOF):
            line = max(text.count("\n"), 1)
            return ParseError("unexpected end of file", Span(file, line, 1, line, 1), source=text,
                              expected=self._expected_text(expected), hint="finish the last statement or block")
        span = _tok_span(tok, file)
        if tok.type == "_NEWLINE":
            span = Span(file, tok.line, tok.column, tok.line, tok.column + 1)
        elif tok.type in ("_INDENT", "_DEDENT"):
            line = tok.end_line or tok.line
            width = len(str(tok).rsplit("\n", 1)[-1])
            span = Span(file, line, 1, line, width + 1)
        if tok.type == "_INDENT":
            return ParseError("unexpected indentation", span, source=text,
                              hint="indent only the body of a statement that ends with ':'")
        if expected == {"_INDENT"}:
            return ParseError("expected an indented block", Span(file, span.line, span.col, span.line, span.col + 1),
                              source=text, expected="an indented block",
                              hint="indent the body of the statement that ends with ':'")
        if tok.type == "_DEDENT":
            return ParseError("unexpected end of block", span, source=text,
                              expected=self._expected_text(expected), hint="complete the statement before the dedent")
        for word in (*self.postlex.history, tok):
            if word is not None and word.type == "NAME" and str(word) in _UNSUPPORTED_KEYWORDS:
                return ParseError(f"'{word}' is not part of TIRx", _tok_span(word, file), source=text,
                                  hint="kernels use def/if/for/while/with statements and expressions only")
        hint = "check the syntax near this token"
        if tok.type == "EQUAL" and ("COMPARE" in expected or "COLON" in expected):
            hint = "use '==' to compare; '=' only assigns"
        elif tok.type in ("NAME",) or tok.type.endswith("NUMBER") and "_NEWLINE" in expected:
            hint = "put each statement on its own line, or join the operands with an operator"
        elif expected == {"COLON"}:
            hint = "end the statement header with ':'"
        elif tok.type == "COLON":
            hint = "a ':' only ends an if/for/while/with/def header or annotates a name"
        return ParseError(self._what(tok), span, source=text, expected=self._expected_text(expected), hint=hint)


def _unclosed(opener: Token, file: str, text: str) -> ParseError:
    return ParseError(f"'{opener.value}' is never closed", _tok_span(opener, file), source=text,
                      expected=f"a matching '{_PAIR[opener.value]}'", hint="balance the brackets")


def _at_last_line(err: ParseError, text: str) -> ParseError:
    """Tokens made at end of file (a DEDENT, $END) sit on the line after the last one: point at the end
    of the last non-blank line instead (e.g. the `if c:` whose block is missing), so the excerpt shows it."""
    span = err.span
    lines = text.split("\n")[:-1]  # `text` ends with a newline here
    if span is None or span.line <= len(lines):
        return err
    last = next((k for k in range(len(lines), 0, -1) if lines[k - 1].strip()), 1)
    col = len(lines[last - 1].rstrip()) + 1 if lines else 1
    return ParseError(err.what, Span(span.file, last, col, last, col + 1), expected=err.expected, hint=err.hint,
                      source=err.source)


def _relocate(err: ParseError, file: str, text: str) -> ParseError:
    span = err.span
    if span is not None and not span.file:
        span = Span(file, span.line, span.col, span.end_line, span.end_col)
    return ParseError(err.what, span, expected=err.expected, hint=err.hint, source=text)


_PARSER: _Parser | None = None
_PARSER_LOCK = threading.Lock()


def _parser() -> _Parser:
    global _PARSER
    if _PARSER is None:
        with _PARSER_LOCK:
            if _PARSER is None:
                _PARSER = _Parser()
    return _PARSER


def parse_text(text: str, file: str = "<string>") -> Module:
    """Parse TIRx text into the surface AST, or raise `ParseError` (no cache: `ir.syntax.parse_syntax` has it)."""
    return _parser().parse(text, file)


def grammar_rule_names() -> set[str]:
    """Every rule name and alias the grammar can hand to the Transformer (for the handler test)."""
    names = set()
    for rule in _parser().lark.rules:
        kept = [s for s in rule.expansion if not (isinstance(s, Terminal) and s.filter_out)]
        if rule.alias is None and (rule.options.expand1 and len(kept) == 1 or rule.origin.name.startswith("_")):
            continue  # a ?rule alternative with one child is inlined and never reaches the transformer
        names.add(str(rule.alias or rule.origin.name))
    return names


def transformer_handlers() -> set[str]:
    return {n for n in vars(_ToSyntax) if not n.startswith("_") and callable(getattr(_ToSyntax, n))}
