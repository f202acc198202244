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


MAX_EXCERPT_COLS = 160


def excerpt(source: str | None, span: Span | None, context: int = 0, max_lines: int = 5) -> str:
    """Render up to `max_lines` source lines of `span` with right-aligned numbers and a caret line.

    A line longer than MAX_EXCERPT_COLS is cut to a window around the span, marked with '...'."""
    if source is None or span is None:
        return ""
    # number lines as the lexer does ('\r\n', '\r' and '\n' all end a line; str.splitlines also breaks at
    # \f, \v, \x1c, \u2028, ...)
    lines = _lines(source)
    if not 1 <= span.line <= len(lines):
        return ""
    first = max(1, span.line - context)
    last = min(len(lines), max(span.end_line, span.line), first + max_lines - 1)
    width = len(str(last))
    start = max(span.col - 1, 0)
    window = _window(start)
    out = []
    for n in range(first, last + 1):
        text, shift = _cut(lines[n - 1], window)
        out.append(f"{n:>{width}} | {text}")
        if n == span.line:
            if span.end_line == span.line and span.end_col > span.col:
                length = span.end_col - span.col
            else:
                length = max(len(lines[n - 1].rstrip()) - start, 1)
            lo = start - shift
            length = max(min(length, len(text) - lo), 1)
            out.append(f"{' ' * width} | {' ' * lo}{'^' * length}")
    return "\n".join(out)


def _lines(source: str) -> list[str]:
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    return (text if text.endswith("\n") else text + "\n").split("\n")[:-1]


def _window(start: int) -> tuple[int, int]:
    """Columns [lo, hi) of long lines to show: the span's start with some context, at most MAX_EXCERPT_COLS."""
    lo = max(start - 40, 0)
    return lo, lo + MAX_EXCERPT_COLS


def shown_line(line: str, col: int) -> tuple[str, int]:
    """How an excerpt shows source `line` for a span starting at column `col` (long lines are cut), and how many
    columns the caret moves left with it."""
    return _cut(line, _window(max(col - 1, 0)))


def _cut(line: str, window: tuple[int, int]) -> tuple[str, int]:
    """The line as shown, and how many columns were dropped before it (the caret moves left by as many)."""
    if len(line) <= MAX_EXCERPT_COLS:
        return line, 0
    lo, hi = window
    head = "..." if lo > 0 else ""
    tail = "..." if hi < len(line) else ""
    return head + line[lo:hi] + tail, lo - len(head)


def shorten(text: str, limit: int = 480) -> str:
    """A message part cut to about `limit` characters (names and numbers from the kernel can be huge)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 40]}... ({len(text):,} characters)"


class TIRxError(Exception):
    """Base of user errors in kernel text (they carry spans)."""


class UsageError(ValueError):
    """A bad request by the caller, not by the kernel text: an unknown constant override, a malformed
    option, an output path that would overwrite an input."""


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
        super().__init__(what)      # rendered on demand (__str__): making one must stay cheap

    def with_source(self, source: str) -> "ParseError":
        if self.source is None:
            return ParseError(self.what, self.span, expected=self.expected, hint=self.hint, source=source)
        return self

    def render(self) -> str:
        where = f"{self.span}: " if self.span else ""
        parts = [f"{where}error: {shorten(self.what)}"]
        shown = excerpt(self.source, self.span)
        if shown:
            parts.append(shown)
        if self.expected:
            parts.append(f"expected: {shorten(self.expected)}")
        if self.hint:
            parts.append(f"hint: {shorten(self.hint)}")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.render()
