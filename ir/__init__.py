"""TIRx text -> IR.

Stage 1 of modelcheck's pipeline (text -> IR -> NumSim trace -> checkers -> report).
Entry points: `parse(text, path=..., **consts)` and `parse_file(path, **consts)`
return an `ir.PrimFunc`; `print_func` prints canonical text; `canonical`/`same_ir`
compare kernels spelled differently.  This package imports nothing of `modelcheck`.
"""
from __future__ import annotations

from pathlib import Path

from .build import build
from .canonical import canonical, same_ir
from .errors import ParseError, Span, TIRxError, UsageError, excerpt
from .nodes import (Address, Assert, BinOp, Break, Buffer, Cast, Const, ConstRef, Constant, Continue, DeclBuffer,
                    Evaluate, Expr, For, If, Launch, Let, LetExpr, Load, Node, OpCall, Param, PrimFunc, Return, Select,
                    Stmt, Store, StrConst, TensorMapEncode, ThreadIndex, UnaryOp, Unsupported, Var, While, children,
                    walk)
from .ops import OpInfo, classify
from .printer import print_func
from .source_map import from_object
from .syntax import parse_syntax

__all__ = [
    "parse", "parse_file", "as_func", "print_func", "canonical", "same_ir", "classify", "OpInfo", "ParseError", "Span",
    "UsageError",
    "TIRxError", "excerpt", "walk", "children",
    "Address", "Assert", "BinOp", "Break", "Buffer", "Cast", "Const", "ConstRef", "Constant", "Continue",
    "DeclBuffer", "Evaluate", "Expr", "For", "If", "Launch", "Let", "LetExpr", "Load", "Node", "OpCall", "Param",
    "PrimFunc", "Return", "Select", "Stmt", "Store", "StrConst", "TensorMapEncode", "ThreadIndex", "UnaryOp",
    "Unsupported", "Var", "While",
]


def parse(text: str, path: str = "<string>", *, kernel_name: str | None = None, **consts) -> PrimFunc:
    """Parse TIRx text into a PrimFunc; module constants can be overridden by keyword.  A file with several
    kernels needs `kernel_name`."""
    if "\r" in text:   # CRLF and CR-only line endings are Python too; lines are numbered the same either way
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    module = parse_syntax(text, path)
    return build(module, path, text, consts, kernel_name)


def as_func(kernel, *, kernel_name: str | None = None) -> PrimFunc:
    """Accept an `ir.PrimFunc`, anything with a `.func` (a modelcheck Kernel, or a TVM kernel object whose
    `.func` is the real PrimFunc), or any object whose `.script()` returns TIRx text (a tvm / tvm_tirx
    PrimFunc or IRModule; `kernel_name` picks the function of a module that prints several).  Spans point
    at the user's source where a real object carries it (`ir/source_map.py`; `PrimFunc.origin` says how)."""
    if isinstance(kernel, PrimFunc):
        return kernel
    inner = getattr(kernel, "func", None)
    if isinstance(inner, PrimFunc):
        return inner
    name = getattr(kernel, "__name__", None) or getattr(kernel, "name", None) or type(kernel).__name__
    if inner is not None and callable(getattr(inner, "script", None)):
        kernel = inner           # a TVM kernel object (tirx-lite's Kernel): its PrimFunc, under the kernel's name
    script = getattr(kernel, "script", None)
    if callable(script):
        return from_object(kernel, str(name), kernel_name, parse)
    raise TypeError(f"expected an ir.PrimFunc, a modelcheck.Kernel or an object with .script(), got "
                    f"{type(kernel).__name__}")


def parse_file(path: str | Path, *, kernel_name: str | None = None, **consts) -> PrimFunc:
    p = Path(path)
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        # point at the first bad byte: its line, and its column in characters (as the parser counts)
        head = data[:err.start]
        line = head.count(b"\n") + 1
        col = len(head[head.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        raise ParseError(f"{p} is not UTF-8 text: byte 0x{data[err.start]:02x} ({err.reason})",
                         Span(str(path), line, col, line, col + 1), hint="save the kernel as UTF-8",
                         expected="UTF-8 encoded text", source=data.decode("utf-8", "replace")) from None
    return parse(text, str(path), kernel_name=kernel_name, **consts)
