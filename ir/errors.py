"""User-facing errors of the front end, each carrying a source span.

`ParseError` is the only exception the parser lets out for bad text: it names the
file, line and column, shows a caret excerpt, says what was expected, and gives a
hint.  Nothing from lark escapes `ir.parse`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A source range: 1-based line and column; end is exclusive in columns."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def excerpt(source: str | None, span: Span | None, context: int = 0, max_lines: int = 5) -> str:
    """Render up to `max_lines` source lines of `span` with right-aligned numbers and a caret line."""
    if source is None or span is None:
        return ""
    # number lines as the lexer does: '\n' only (str.splitlines also breaks at \f, \v, \x1c, \u2028, ...)
    lines = [line.rstrip("\r") for line in (source if source.endswith("\n") else source + "\n").split("\n")[:-1]]
    if not 1 <= span.line <= len(lines):
        return ""
    first = max(1, span.line - context)
    last = min(len(lines), max(span.end_line, span.line), first + max_lines - 1)
    width = len(str(last))
    out = []
    for n in range(first, last + 1):
        out.append(f"{n:>{width}} | {lines[n - 1]}")
        if n == span.line:
            text = lines[n - 1]
            start = max(span.col - 1, 0)
            if span.end_line == span.line and span.end_col > span.col:
                length = span.end_col - span.col
            else:
                length = max(len(text.rstrip()) - start, 1)
            out.append(f"{' ' * width} | {' ' * start}{'^' * max(length, 1)}")
    return "\n".join(out)


class TIRxError(Exception):
    """Base of user errors in kernel text (they carry spans)."""


class ParseError(TIRxError):
    """Kernel text that is not valid TIRx for modelcheck.

    Attributes: `span` (where), `what` (what was found), `expected` (what the parser
    wanted, may be empty), `hint` (how to fix it), `source` (the text, for excerpts).
    """

    def __init__(self, what: str, span: Span | None, *, expected: str = "", hint: str = "",
                 source: str | None = None):
        self.what = what
        self.span = span
        self.expected = expected
        self.hint = hint
        self.source = source
        super().__init__(self.render())

    def with_source(self, source: str) -> "ParseError":
        if self.source is None:
            return ParseError(self.what, self.span, expected=self.expected, hint=self.hint, source=source)
        return self

    def render(self) -> str:
        where = f"{self.span}: " if self.span else ""
        parts = [f"{where}error: {self.what}"]
        shown = excerpt(self.source, self.span)
        if shown:
            parts.append(shown)
        if self.expected:
            parts.append(f"expected: {self.expected}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.render()
