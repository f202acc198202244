"""The lark side of `ir.syntax`: the LALR parser, the indentation postlexer and lark's errors as ours.

Assumes `grammars/tirx.lark`; the grammar's tables come from `ir/grammar_cache.py`, the nodes from the
Transformer in `ir/syntax_transformer.py`, run inline by the parser.
Guarantees: `parse_text(text, file)` returns an `ir.syntax.Module` or raises `ParseError`;
no lark `Tree`/`Token` and no lark exception leaves this module.  Loaded by `ir.syntax.parse_syntax`
only when the tree is not cached, so a cached kernel's process never imports lark.
"""
from __future__ import annotations

import threading
from collections import deque
from importlib import resources
from typing import Iterator, cast

from lark import Token
from lark.grammar import Terminal
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from . import grammar_cache
from .errors import ParseError, Span
from .syntax import Module
from .syntax_transformer import ToSyntax

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
        self.lark = grammar_cache.load(grammar, self.postlex, ToSyntax())
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
    return {n for n in vars(ToSyntax) if not n.startswith("_") and callable(getattr(ToSyntax, n))}
