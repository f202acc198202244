"""Lexical scopes of a kernel: what each name means while the IR is built."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, cast

from .nodes import Buffer, Expr
from .syntax import Pos

# Binding kinds
CONST = "const"          # module constant (ConstRef)
LET = "let"              # immutable T.let / implicit let / loop variable
PARAM = "param"          # scalar or handle parameter
BUFFER = "buffer"        # tensor (parameter, allocation or alias)
THREAD = "thread"        # a launch_thread variable (ThreadIndex)
NAMESPACE = "namespace"  # the `T` module
BUILTIN = "builtin"      # range
DIM = "dim"              # a symbolic dimension (TypeVar, string extent, T.int64()): a Var bound when the kernel runs


@dataclass(frozen=True, slots=True)
class Binding:
    kind: str
    pos: Pos | None
    expr: Expr | None = None
    buffer: Buffer | None = None
    annotated: bool = False   # a `x: T.let[...]` binding (for messages)
    loop: bool = False        # a loop variable (for messages)
    scalar: bool = False      # a one-element buffer whose bare name reads and writes its element (T.*_scalar)

    # Every CONST/LET/PARAM/THREAD/DIM binding is defined with its expression and every BUFFER one with its
    # buffer (see the Binding(...) calls), so a caller that has checked the kind knows which field is set.
    def bound_expr(self) -> Expr:
        return cast(Expr, self.expr)

    def bound_buffer(self) -> Buffer:
        return cast(Buffer, self.buffer)

    def describe(self) -> str:
        if self.kind == LET:
            return "loop variable" if self.loop else ("T.let" if self.annotated else "let binding")
        return {CONST: "module constant", PARAM: "parameter", BUFFER: "buffer", THREAD: "thread index",
                NAMESPACE: "namespace", BUILTIN: "builtin", DIM: "symbolic dimension"}[self.kind]


class Scope:
    def __init__(self) -> None:
        self._frames: list[dict[str, Binding]] = [{}]

    def lookup(self, name: str) -> Binding | None:
        for frame in reversed(self._frames):
            b = frame.get(name)
            if b is not None:
                return b
        return None

    def define(self, name: str, binding: Binding) -> None:
        self._frames[-1][name] = binding

    def names(self) -> Iterator[str]:
        seen = set()
        for frame in reversed(self._frames):
            for name in frame:
                if name not in seen:
                    seen.add(name)
                    yield name

    @contextmanager
    def block(self):
        self._frames.append({})
        try:
            yield
        finally:
            self._frames.pop()
