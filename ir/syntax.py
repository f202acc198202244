"""Text -> surface syntax tree (a small Python-like AST with positions).

Assumes: `grammars/tirx.lark` (LALR), parsed by `ir/syntax_parser.py` (lark and the indentation
postlexer) with the Transformer of `ir/syntax_transformer.py`, which builds the nodes below.
Guarantees: `parse_syntax(text, file)` returns a `Module` or raises `ParseError`;
no lark `Tree`/`Token` and no lark exception leaves this package.  A kernel file's tree
is cached (`ir/syntax_cache.py`): a hit loads neither lark nor the grammar.  What the
syntax *means* (T.* calls, scopes, types) is decided by `ir.build`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from . import syntax_cache
from .errors import ParseError, Span


# --------------------------------------------------------------------------- surface AST

@dataclass(frozen=True, slots=True)
class Pos:
    """Position of a syntax node (the file is attached when IR spans are made)."""

    line: int
    col: int
    end_line: int
    end_col: int

    def span(self, file: str) -> Span:
        return Span(file, self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True, slots=True)
class Node:
    pos: Pos


@dataclass(frozen=True, slots=True)
class Name(Node):
    id: str


@dataclass(frozen=True, slots=True)
class Num(Node):
    value: int | float
    text: str


@dataclass(frozen=True, slots=True)
class Str(Node):
    value: str


@dataclass(frozen=True, slots=True)
class FStr(Node):
    """An f-string: literal text and `{expr!conv:spec}` fields, in order (a field is (expression text, conv,
    spec); `field_expr` parses the text)."""

    parts: tuple[str | tuple[str, str, str], ...]


@dataclass(frozen=True, slots=True)
class Lit(Node):
    """`True`, `False` or `None`."""

    value: bool | None


@dataclass(frozen=True, slots=True)
class Attr(Node):
    value: Node
    attr: str


@dataclass(frozen=True, slots=True)
class Slice(Node):
    lower: Node | None
    upper: Node | None
    step: Node | None


@dataclass(frozen=True, slots=True)
class Subscript(Node):
    value: Node
    indices: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Keyword(Node):
    name: str
    value: Node


@dataclass(frozen=True, slots=True)
class Starred(Node):
    """`*value` in a call's arguments (`**value` when `double`)."""

    value: Node
    double: bool = False


@dataclass(frozen=True, slots=True)
class Call(Node):
    func: Node
    args: tuple[Node, ...]       # Starred among them for `*xs`
    kwargs: tuple[Keyword, ...]  # and `**d` as a Keyword named "**"


@dataclass(frozen=True, slots=True)
class BinOp(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class UnaryOp(Node):
    op: str  # "-", "+", "~", "not"
    operand: Node


@dataclass(frozen=True, slots=True)
class BoolOp(Node):
    op: str  # "and" | "or"
    values: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Compare(Node):
    left: Node
    ops: tuple[str, ...]
    comparators: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class IfExp(Node):
    test: Node
    body: Node
    orelse: Node


@dataclass(frozen=True, slots=True)
class TupleLit(Node):
    elts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class ListLit(Node):
    elts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class DictLit(Node):
    items: tuple[tuple[Node, Node], ...]


# statements

@dataclass(frozen=True, slots=True)
class ExprStmt(Node):
    value: Node


@dataclass(frozen=True, slots=True)
class Assign(Node):
    targets: tuple[Node, ...]
    value: Node


@dataclass(frozen=True, slots=True)
class AnnAssign(Node):
    target: Node
    annotation: Node
    value: Node | None


@dataclass(frozen=True, slots=True)
class AugAssign(Node):
    target: Node
    op: str  # the binary operator, e.g. "+"
    value: Node


@dataclass(frozen=True, slots=True)
class Pass(Node):
    pass


@dataclass(frozen=True, slots=True)
class Break(Node):
    pass


@dataclass(frozen=True, slots=True)
class Continue(Node):
    pass


@dataclass(frozen=True, slots=True)
class Return(Node):
    value: Node | None


@dataclass(frozen=True, slots=True)
class Assert(Node):
    test: Node
    msg: Node | None


@dataclass(frozen=True, slots=True)
class Import(Node):
    module: str
    names: tuple[tuple[str, str | None], ...]  # (name, alias); empty for `import x`
    alias: str | None = None


@dataclass(frozen=True, slots=True)
class If(Node):
    test: Node
    body: tuple[Node, ...]
    orelse: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class For(Node):
    targets: tuple[Name, ...]
    iter: Node
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class While(Node):
    test: Node
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class WithItem(Node):
    context: Node
    name: Name | None


@dataclass(frozen=True, slots=True)
class With(Node):
    items: tuple[WithItem, ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Param(Node):
    name: str
    annotation: Node | None
    default: Node | None
    kwonly: bool = False


@dataclass(frozen=True, slots=True)
class FunctionDef(Node):
    name: str
    params: tuple[Param, ...]
    body: tuple[Node, ...]
    decorators: tuple[Node, ...]
    header: Pos  # the `def name(...)` line, for messages


@dataclass(frozen=True, slots=True)
class Module(Node):
    body: tuple[Node, ...]


# --------------------------------------------------------------------------- postlexer


def _at(node, pos: Pos):
    """`node` with every position replaced by `pos` (an f-string field reports at its string)."""
    if isinstance(node, tuple):
        return tuple(_at(n, pos) for n in node)
    if not isinstance(node, Node):
        return node
    changes = {f: _at(getattr(node, f), pos) for f in node.__dataclass_fields__ if f != "pos"}
    return type(node)(pos, **changes)


def field_expr(field: str, pos: Pos, what: str = "f-string field") -> Node:
    """The expression in a string (an f-string field, a string extent), placed at the string's position."""
    try:
        module = parse_syntax(f"_ = ({field})\n", "<string>")
    except ParseError:
        raise ParseError(f"cannot read the {what} {field!r}", pos.span(""),
                         hint=f"a {what} is an expression over names and constants") from None
    return _at(cast(Assign, module.body[0]).value, pos)  # `_ = (...)` parses to one Assign first


def parse_syntax(text: str, file: str = "<string>") -> Module:
    """Parse TIRx text into the surface AST, or raise `ParseError`."""
    module = syntax_cache.lookup(text, file)
    if module is None:
        from .syntax_parser import parse_text     # lark and the grammar: only when the tree is not cached
        module = parse_text(text, file)
        syntax_cache.store(text, file, module)
    return module
