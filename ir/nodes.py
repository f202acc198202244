"""The IR: small frozen dataclasses, each with a source span.

One IR for all three TIRx text forms.  Invariants the builder guarantees:
- every expression has a `dtype` (TIR's typing; implicit conversions are explicit
  `Cast` nodes, as the TVM printer shows them);
- thread indices are `ThreadIndex(tag)` expressions; the launch shape is `PrimFunc.launch`;
- buffers are referred to by name; a buffer alias records its root allocation and
  byte offset (`Buffer.data`, `Buffer.byte_offset`);
- module constants stay `ConstRef(name)` with values in `PrimFunc.constants`;
- PTX/CUDA/TIR intrinsic calls are `OpCall(op=<canonical mnemonic>)`; names outside
  the modeled set are `Unsupported` nodes.
Spans never take part in equality.  No pass mutates nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Iterator, Union

from .errors import Span

@dataclass(frozen=True, slots=True)
class Node:
    # inline, not a shared module-level field(): type checkers see kw_only only here
    span: Span | None = field(default=None, compare=False, kw_only=True, repr=False)


# --------------------------------------------------------------------------- expressions

@dataclass(frozen=True, slots=True)
class Expr(Node):
    """An expression; every concrete expression node has a `dtype` field."""

    if TYPE_CHECKING:      # for type checkers only: at run time each subclass defines the field
        @property
        def dtype(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Const(Expr):
    """An integer, float or bool literal of a given dtype."""

    value: Union[int, float, bool]
    dtype: str


@dataclass(frozen=True, slots=True)
class StrConst(Expr):
    value: str
    dtype: str = "string"


@dataclass(frozen=True, slots=True)
class ConstRef(Expr):
    """A module constant by name; its value lives in `PrimFunc.constants`."""

    name: str
    dtype: str


@dataclass(frozen=True, slots=True)
class Var(Expr):
    """A bound variable: scalar parameter, loop variable or `T.let`."""

    name: str
    dtype: str


@dataclass(frozen=True, slots=True)
class ThreadIndex(Expr):
    """threadIdx.x/y/z, blockIdx.x/y/z or clusterCtaIdx.x/y/z of the executing thread."""

    tag: str
    dtype: str = "int32"


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """Binary operator.  `op` is one of + - * / // % tdiv tmod min max & | ^ << >>
    == != < <= > >= and or (`//`/`%` floor, `tdiv`/`tmod` truncating, `/` float only)."""

    op: str
    a: Expr
    b: Expr
    dtype: str


@dataclass(frozen=True, slots=True)
class UnaryOp(Expr):
    """`not` (logical) or `~` (bitwise).  Negation is `x * -1`, as TIR spells it."""

    op: str
    a: Expr
    dtype: str


@dataclass(frozen=True, slots=True)
class Select(Expr):
    """`T.Select` (lazy=False: both sides evaluated) or `T.if_then_else` (lazy=True)."""

    cond: Expr
    true_value: Expr
    false_value: Expr
    dtype: str
    lazy: bool


@dataclass(frozen=True, slots=True)
class LetExpr(Expr):
    """`T.Let(body, where={var: value})`: `body` with `var` bound to `value` (evaluated once, per lane).
    The lowered form's spelling of a shared subexpression; `var` is unique in the function."""

    var: Var
    value: Expr
    body: Expr
    dtype: str


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    dtype: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Load(Expr):
    """Element `buffer[indices]`."""

    buffer: str
    indices: tuple[Expr, ...]
    dtype: str


@dataclass(frozen=True, slots=True)
class Address(Expr):
    """Address of `buffer[indices]` in the buffer's own state space.

    One form for `buf.ptr_to([i])`, `T.address_of(buf[i])` and
    `T.cuda.cvta_generic_to_shared(T.address_of(buf[i]))`."""

    buffer: str
    indices: tuple[Expr, ...]
    dtype: str = "handle"


@dataclass(frozen=True, slots=True)
class OpCall(Expr):
    """A modeled operation: PTX (`op` = canonical mnemonic, e.g. `mbarrier.arrive.shared.b64`),
    `cuda.<name>` or `tir.<name>` intrinsics.  `pred` is the guard predicate (`@p`), if any."""

    op: str
    operands: tuple[Expr, ...]
    pred: Expr | None
    dtype: str


@dataclass(frozen=True, slots=True)
class Unsupported(Expr):
    """A call outside the modeled set, kept with its name and arguments.  Executing it is
    `UnsupportedTIRxError` (verdict incomplete), never silently skipped."""

    name: str
    args: tuple[Expr, ...]
    dtype: str = "void"


# --------------------------------------------------------------------------- buffers, params

@dataclass(frozen=True, slots=True)
class Buffer(Node):
    """A tensor: a parameter (global), an allocation, or an alias of another allocation.

    `data` is the root allocation's name for an alias (`T.decl_buffer(data=X.data, ...)`),
    else None; `byte_offset` is the alias's offset into the root, in bytes.  `layout` is "" for
    the row-major layout, else the text of the layout the kernel gives (a swizzle, a tile layout):
    NumSim reports a buffer whose layout it does not model as incomplete."""

    name: str
    shape: tuple[Expr, ...]
    dtype: str
    scope: str
    data: str | None = None
    byte_offset: Expr = Const(0, "int64")
    align: int = 0
    layout: str = ""


@dataclass(frozen=True, slots=True)
class Param(Node):
    """A kernel parameter: `kind` is buffer (global tensor), scalar, or handle (e.g. a tensor map)."""

    name: str
    kind: str
    dtype: str
    buffer: Buffer | None = None


@dataclass(frozen=True, slots=True)
class Constant(Node):
    """A module-level integer constant; `expr` is its definition over earlier constants."""

    name: str
    value: int
    expr: Expr


@dataclass(frozen=True, slots=True)
class Launch(Node):
    """The thread space: grid, block and cluster extents (x, y, z)."""

    grid: tuple[Expr, Expr, Expr]
    block: tuple[Expr, Expr, Expr]
    cluster: tuple[Expr, Expr, Expr]


# --------------------------------------------------------------------------- statements

@dataclass(frozen=True, slots=True)
class Stmt(Node):
    pass


@dataclass(frozen=True, slots=True)
class Evaluate(Stmt):
    value: Expr


@dataclass(frozen=True, slots=True)
class Store(Stmt):
    buffer: str
    indices: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True, slots=True)
class Let(Stmt):
    """Immutable binding of `var` for the rest of the enclosing body."""

    var: Var
    value: Expr


@dataclass(frozen=True, slots=True)
class DeclBuffer(Stmt):
    buffer: Buffer


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """`kind` is "serial" or "unroll" (same semantics; unroll is a hint)."""

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    kind: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class While(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If(Stmt):
    cond: Expr
    then_body: tuple[Stmt, ...]
    else_body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    """The executing threads leave the kernel (the printed forms' `return 0` after a uniform test)."""


@dataclass(frozen=True, slots=True)
class Assert(Stmt):
    cond: Expr
    message: str


@dataclass(frozen=True, slots=True)
class TensorMapEncode(Stmt):
    """Host prelude: `var` (a handle) is a CUtensorMap that `cuTensorMapEncodeTiled` encodes over global buffer
    `buffer`, starting `byte_offset` bytes into it.  Lists are innermost dimension first; `strides` are in bytes
    and cover dimensions 1..rank-1; `interleave`, `swizzle` (0 none, 1 32B, 2 64B, 3 128B), `l2` and `oob` are
    the enum codes of the call, `cu_dtype` an element type that overrides `dtype` (-1 for none)."""

    var: Var
    buffer: str
    byte_offset: Expr
    dtype: str
    shape: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    box: tuple[Expr, ...]
    elem_strides: tuple[Expr, ...]
    interleave: Expr
    swizzle: Expr
    l2: Expr
    oob: Expr
    cu_dtype: Expr = Const(-1, "int32")    # a forced CUtensorMapDataType code, -1 for none


@dataclass(frozen=True, slots=True)
class PrimFunc(Node):
    """A kernel.  `dims` are its symbolic sizes (a buffer dimension written as a TypeVar, a string, or
    `T.int64()`), bound when it runs from the inputs' shapes or given values; `host` is the host prelude that
    runs before the launch: integer `Let`s, `Assert`s and `TensorMapEncode`s."""

    name: str
    params: tuple[Param, ...]
    constants: tuple[Constant, ...]
    launch: Launch
    body: tuple[Stmt, ...]
    attrs: tuple[tuple[str, object], ...] = field(default=(), compare=False)
    source: str | None = field(default=None, compare=False, repr=False)
    path: str | None = field(default=None, compare=False)
    dims: tuple[Var, ...] = ()
    host: tuple[Stmt, ...] = ()
    # where the spans point when the kernel came from a real tvm / tvm_tirx object (ir/source_map.py), else ""
    origin: str = field(default="", compare=False, repr=False)

    def constant(self, name: str) -> int:
        for c in self.constants:
            if c.name == name:
                return c.value
        raise KeyError(name)

    @property
    def constant_values(self) -> dict[str, int]:
        return {c.name: c.value for c in self.constants}

    def buffers(self) -> dict[str, Buffer]:
        """Every buffer by name: parameters first, then declarations in program order."""
        out = {p.name: p.buffer for p in self.params if p.buffer is not None}
        for node in walk(self.body):
            if isinstance(node, DeclBuffer):
                out.setdefault(node.buffer.name, node.buffer)
        return out

    def script(self) -> str:
        from .printer import print_func
        return print_func(self)


# --------------------------------------------------------------------------- traversal

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in fields(cls) if f.name not in ("span", "source", "path", "attrs", "origin"))
        _CHILD_FIELDS[cls] = names
    return names


def children(node: Node) -> Iterator[Node]:
    """Direct child nodes of `node` (in field order)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    yield item


def walk(root: Node | tuple) -> Iterator[Node]:
    """Pre-order walk over `root` (a node or a tuple of nodes) and every node below it."""
    stack = list(reversed(root)) if isinstance(root, tuple) else [root]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        yield node
        # `children(node)`, inline: a checker's compile walks the kernel several times (tens of thousands of nodes)
        kids = []
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, Node):
                kids.append(value)
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, Node):
                        kids.append(item)
        if kids:
            kids.reverse()
            push(kids)
