"""IR -> canonical TIRx text (the authoring form).

Guarantees `parse(print_func(f)) == f` (spans aside): every constant whose dtype a
bare literal would not give is printed typed (`T.uint32(1)`), every conversion is an
explicit `T.Cast`, PTX calls use the `T.ptx["mnemonic"](...)` spelling, addresses
`T.address_of(buf[i])`, and parentheses follow Python's precedence.
"""
from __future__ import annotations

import math

from . import dtypes as dt
from . import ops as opreg
from .nodes import (Address, Assert, BinOp, Break, Buffer, Cast, Const, ConstRef, Continue, DeclBuffer, Evaluate,
                    Expr, For, If, Let, LetExpr, Load, OpCall, Param, PrimFunc, Return, Select, Stmt, Store, StrConst,
                    TensorMapEncode, ThreadIndex, UnaryOp, Unsupported, Var, While, walk)

# Python precedence, loosest first
_PREC_TERNARY, _PREC_OR, _PREC_AND, _PREC_NOT, _PREC_CMP = 0, 1, 2, 3, 4
_PREC_BOR, _PREC_BXOR, _PREC_BAND, _PREC_SHIFT = 5, 6, 7, 8
_PREC_ADD, _PREC_MUL, _PREC_UNARY, _PREC_ATOM = 9, 10, 11, 13

_INFIX = {"+": _PREC_ADD, "-": _PREC_ADD, "*": _PREC_MUL, "/": _PREC_MUL, "//": _PREC_MUL, "%": _PREC_MUL,
          "<<": _PREC_SHIFT, ">>": _PREC_SHIFT, "&": _PREC_BAND, "^": _PREC_BXOR, "|": _PREC_BOR,
          "==": _PREC_CMP, "!=": _PREC_CMP, "<": _PREC_CMP, "<=": _PREC_CMP, ">": _PREC_CMP, ">=": _PREC_CMP,
          "and": _PREC_AND, "or": _PREC_OR}
_CALL_FORM = {"tdiv": "T.truncdiv", "tmod": "T.truncmod", "min": "T.min", "max": "T.max"}
_THREAD_NAMES = {"blockIdx.x": "bx", "blockIdx.y": "by", "blockIdx.z": "bz", "threadIdx.x": "tx",
                 "threadIdx.y": "ty", "threadIdx.z": "tz", "clusterCtaIdx.x": "cx", "clusterCtaIdx.y": "cy",
                 "clusterCtaIdx.z": "cz"}


def dtype_text(dtype: str) -> str:
    return f"T.{dtype}"


def _float_text(value: float) -> str:
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    return repr(float(value))


class _Printer:
    def __init__(self, func: PrimFunc):
        self.func = func
        used = {p.name for p in func.params} | {c.name for c in func.constants}
        for node in walk(func.body):
            if isinstance(node, Var):
                used.add(node.name)
            elif isinstance(node, DeclBuffer):
                used.add(node.buffer.name)
        # handle lets a buffer may be declared over (a pointer the kernel computed)
        self.pointers = {node.var.name for node in walk(func.body) if isinstance(node, Let)
                         and node.var.dtype == "handle"}
        # thread indices the body refers to: their launch is printed even when its extent is 1
        self.used_tags = {node.tag for node in walk(func.body) if isinstance(node, ThreadIndex)}
        self.thread_names: dict[str, str] = {}
        for tag, short in _THREAD_NAMES.items():
            name = short
            k = 1
            while name in used:
                name = f"{short}_{k}"
                k += 1
            used.add(name)
            self.thread_names[tag] = name

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Expr, parent: int = -1) -> str:
        text, prec = self._expr(e)
        return f"({text})" if prec <= parent else text

    def _expr(self, e: Expr) -> tuple[str, int]:
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, (ConstRef, Var)):
            return e.name, _PREC_ATOM
        if isinstance(e, ThreadIndex):
            return self.thread_names[e.tag], _PREC_ATOM
        if isinstance(e, StrConst):
            return _quote(e.value), _PREC_ATOM
        if isinstance(e, BinOp):
            if e.op in _CALL_FORM:
                return f"{_CALL_FORM[e.op]}({self.expr(e.a)}, {self.expr(e.b)})", _PREC_ATOM
            prec = _INFIX[e.op]
            left = self.expr(e.a, prec - (prec != _PREC_CMP))
            if isinstance(e.a, Const) and isinstance(e.b, Const) and e.a.dtype != "bool":
                # an operator left unfolded (`0 >> 128`): two bare literals would be Python's arithmetic
                left = f"{dtype_text(e.a.dtype)}({int(e.a.value)})" if not dt.is_float(e.a.dtype) else left
            if prec == _PREC_CMP:
                # comparisons chain in Python: parenthesize comparison operands
                return f"{left} {e.op} {self.expr(e.b, prec)}", prec
            # left-associative: the right operand needs parens at equal precedence
            return f"{left} {e.op} {self.expr(e.b, prec)}", prec
        if isinstance(e, UnaryOp):
            if e.op == "not":
                return f"not {self.expr(e.a, _PREC_NOT - 1)}", _PREC_NOT
            return f"~{self.expr(e.a, _PREC_UNARY - 1)}", _PREC_UNARY
        if isinstance(e, Select):
            fn = "T.if_then_else" if e.lazy else "T.Select"
            return f"{fn}({self.expr(e.cond)}, {self.expr(e.true_value)}, {self.expr(e.false_value)})", _PREC_ATOM
        if isinstance(e, LetExpr):
            return f"T.Let({self.expr(e.body)}, where={{{e.var.name}: {self.expr(e.value)}}})", _PREC_ATOM
        if isinstance(e, Cast):
            inner = self.expr(e.value)
            if e.value.dtype == "handle":   # an address as a number: TVM converts cvta's result, not a pointer
                inner = f"T.cuda.cvta_generic_to_shared({inner})"
            return f'T.Cast("{e.dtype}", {inner})', _PREC_ATOM
        if isinstance(e, Load):
            return f"{e.buffer}[{', '.join(self.expr(i) for i in e.indices)}]", _PREC_ATOM
        if isinstance(e, Address):
            return f"T.address_of({e.buffer}[{', '.join(self.expr(i) for i in e.indices)}])", _PREC_ATOM
        if isinstance(e, OpCall):
            return self.call(e.op, e.operands, e.pred), _PREC_ATOM
        if isinstance(e, Unsupported):
            kind, _, fname = e.name.partition(" ")
            if kind in ("call_pure_extern", "call_extern") and fname:   # an external function kept by name
                args = ", ".join([_quote(e.dtype), _quote(fname)] + [self.expr(a) for a in e.args])
                return f"T.{kind}({args})", _PREC_ATOM
            return self.call(e.name, e.args, None), _PREC_ATOM
        raise TypeError(f"cannot print {type(e).__name__}")

    def const(self, c: Const) -> tuple[str, int]:
        if c.dtype == "bool":
            return ("True" if c.value else "False"), _PREC_ATOM
        if dt.is_float(c.dtype):
            return f"{dtype_text(c.dtype)}({_float_text(c.value)})", _PREC_ATOM
        value = int(c.value)
        if c.dtype == "int32" and dt.fits(value, "int32"):   # TVM rejects a bare int64 literal in some places
            return (str(value), _PREC_UNARY if value < 0 else _PREC_ATOM)
        return f"{dtype_text(c.dtype)}({value})", _PREC_ATOM

    def call(self, op: str, operands, pred) -> str:
        args = [self.expr(o) for o in operands]
        if not op.startswith(("cuda.", "tir.", "T.")):
            self.pred_operands(op, operands, args)
        if op == "tir.reinterpret":
            target = operands[0].value if isinstance(operands[0], StrConst) else "uint32"
            return f"T.reinterpret({_quote(target)}, {args[1]})"
        if pred is not None:
            args.append(f"pred={self.expr(pred)}")
        if op.startswith("cuda."):
            return f"T.cuda.{op[5:]}({', '.join(args)})"
        if op.startswith("tir."):
            return f"T.{op[4:]}({', '.join(args)})"
        segs = op.split(".")
        if segs[0] == "T" and len(segs) > 2 and segs[1] not in ("ptx", "cuda") and all(x.isidentifier() for x in segs):
            # an unmodeled T.a.b(...) call (Unsupported), which may take string arguments
            return f"{op}({', '.join(args)})"
        return f'T.ptx["{op}"]({", ".join(args)})'

    def pred_operands(self, op: str, operands, args: list[str]) -> None:
        """A PTX `.pred` operand takes a bool or `T.ptx.pred(x)` (TVM rejects a bare integer there):
        print a 0/1 constant as True/False and wrap any other non-bool value."""
        try:
            info = opreg.classify(op, tuple(o.dtype for o in operands))
        except opreg.OperandCountError:
            return
        for i, spec in enumerate(info.operands if info is not None else ()):
            e = operands[i] if i < len(operands) else None
            if spec.role != "pred" or e is None or e.dtype == "bool":
                continue
            if isinstance(e, Const) and e.value in (0, 1):
                args[i] = "True" if e.value else "False"
            else:
                args[i] = f"T.ptx.pred({args[i]})"

    # ------------------------------------------------------------------ statements
    def stmts(self, body: tuple[Stmt, ...], indent: int, out: list[str]) -> None:
        if not body:
            out.append(" " * indent + "pass")
            return
        for s in body:
            self.stmt(s, indent, out)

    def stmt(self, s: Stmt, indent: int, out: list[str]) -> None:
        pad = " " * indent
        if isinstance(s, Evaluate):
            # a bare call is a statement; any other value needs T.evaluate (TVM drops a bare `x` statement)
            text = self.expr(s.value)
            out.append(pad + (text if isinstance(s.value, (OpCall, Unsupported)) else f"T.evaluate({text})"))
        elif isinstance(s, Store):
            out.append(f"{pad}{s.buffer}[{', '.join(self.expr(i) for i in s.indices)}] = {self.expr(s.value)}")
        elif isinstance(s, Let):
            # an address let leaves its type to the value: TVM types it T.Ptr(elem, scope), never T.handle
            ann = "T.let" if s.var.dtype == "handle" else f"T.let[{dtype_text(s.var.dtype)}]"
            out.append(f"{pad}{s.var.name}: {ann} = {self.expr(s.value)}")
        elif isinstance(s, DeclBuffer):
            out.append(pad + self.decl(s.buffer))
        elif isinstance(s, For):
            out.append(f"{pad}for {s.var.name} in {self.loop_range(s)}:")
            self.stmts(s.body, indent + 4, out)
        elif isinstance(s, While):
            out.append(f"{pad}while {self.expr(s.cond)}:")
            self.stmts(s.body, indent + 4, out)
        elif isinstance(s, If):
            self.if_stmt(s, indent, out, "if")
        elif isinstance(s, Return):
            out.append(pad + "return")
        elif isinstance(s, TensorMapEncode):
            out.extend(self.tensor_map(s, pad))
        elif isinstance(s, Break):
            out.append(pad + "break")
        elif isinstance(s, Continue):
            out.append(pad + "continue")
        elif isinstance(s, Assert):
            out.append(f"{pad}assert {self.expr(s.cond)}, {_quote(s.message)}")
        else:
            raise TypeError(f"cannot print {type(s).__name__}")

    def if_stmt(self, s: If, indent: int, out: list[str], keyword: str) -> None:
        pad = " " * indent
        out.append(f"{pad}{keyword} {self.expr(s.cond)}:")
        self.stmts(s.then_body, indent + 4, out)
        if len(s.else_body) == 1 and isinstance(s.else_body[0], If):
            self.if_stmt(s.else_body[0], indent, out, "elif")
        elif s.else_body:
            out.append(f"{pad}else:")
            self.stmts(s.else_body, indent + 4, out)

    def loop_range(self, s: For) -> str:
        zero = isinstance(s.start, Const) and s.start.value == 0   # range(stop) starts at 0 of stop's type
        unit = isinstance(s.step, Const) and s.step.value == 1
        if s.kind == "unroll" and unit:
            return f"T.unroll({self.expr(s.start)}, {self.expr(s.stop)})"
        if unit and zero:
            return f"range({self.expr(s.stop)})"
        if unit:
            return f"range({self.expr(s.start)}, {self.expr(s.stop)})"
        return f"range({self.expr(s.start)}, {self.expr(s.stop)}, {self.expr(s.step)})"

    def shape(self, shape) -> str:
        inner = ", ".join(self.expr(x) for x in shape)
        return f"({inner},)" if len(shape) == 1 else f"({inner})"

    def decl(self, b: Buffer) -> str:
        """The real parser's spellings: T.alloc_tensor, and T.decl_tensor for an alias (T.alloc_buffer and
        T.decl_buffer are not in its namespace)."""
        tensor = f"T.Tensor({self.shape(b.shape)}, {dtype_text(b.dtype)}, scope={_quote(b.scope)}{self.extras(b)})"
        if b.scope == "pointer" or (b.data is not None and b.data in self.pointers):
            offset = "" if isinstance(b.byte_offset, Const) and b.byte_offset.value == 0 else \
                f", byte_offset={self.expr(b.byte_offset)}"
            scope = "" if b.scope == "pointer" else f", scope={_quote(b.scope)}"
            return (f"{b.name} = T.decl_buffer({self.shape(b.shape)}, {dtype_text(b.dtype)}, data={b.data}"
                    f"{offset}{scope}{self.extras(b)})")
        if b.data is not None:
            pointer = f"{b.data}.data"
            if not (isinstance(b.byte_offset, Const) and b.byte_offset.value == 0):
                pointer = (f"T.ptr_byte_offset({pointer}, {self.expr(b.byte_offset)}, "
                           f"ty=T.Ptr({dtype_text(b.dtype)}, {_quote(b.scope)}))")
            return f"{b.name} = T.decl_tensor({pointer}, ty_args=[{tensor}])"
        return f"{b.name} = T.alloc_tensor(ty_args=[{tensor}])"

    def param(self, p: Param) -> str:
        if p.kind == "buffer" and p.buffer is not None and p.buffer.name == p.name:     # (a buffer param has one)
            return f"{p.name}: T.Tensor({self.shape(p.buffer.shape)}, {dtype_text(p.dtype)}{self.extras(p.buffer)})"
        if p.kind in ("handle", "buffer"):
            return f"{p.name}: T.handle"        # a buffer behind it is matched in the host prelude
        return f"{p.name}: {dtype_text(p.dtype)}"

    def extras(self, b: Buffer) -> str:
        return (f", align={b.align}" if b.align else "") + (f", layout={b.layout}" if b.layout else "")

    def tensor_map(self, s: TensorMapEncode, pad: str) -> list[str]:
        base = f"{s.buffer}.data"
        if not (isinstance(s.byte_offset, Const) and s.byte_offset.value == 0):
            base = f"T.handle_add_byte_offset({base}, {self.expr(s.byte_offset)})"
        fields = [*s.shape, *s.strides, *s.box, *s.elem_strides, s.interleave, s.swizzle, s.l2, s.oob]
        if not (isinstance(s.cu_dtype, Const) and s.cu_dtype.value == -1):
            fields.append(s.cu_dtype)
        args = ", ".join(self.expr(f) for f in fields)
        # apache-tvm-tirx's spellings (T.tvm_stack_alloca and T.let[T.handle("tensormap")] are not in its namespace)
        return [f'{pad}{s.var.name}: T.let[T.Ptr(T.TensorMap())] = T.stack_alloca("tensormap", 1)',
                f'{pad}T.call_packed("runtime.cuTensorMapEncodeTiled", {s.var.name}, {_quote(s.dtype)}, '
                f'{len(s.shape)}, {base}, {args})']

    def render(self) -> str:
        f = self.func
        out = ["from tvm_tirx.script import tirx as T", ""]
        for c in f.constants:
            out.append(f"{c.name} = {self.const_def(c)}")
        if f.constants:
            out.append("")
        out.append("")
        for d in f.dims:
            out.append(f'{d.name} = TypeVar("{d.name}")')
        if f.dims:
            out.append("")
        out.append("@T.function")
        out.append(f"def {f.name}({', '.join(self.param(p) for p in f.params)}):")
        for p in f.params:
            if p.kind == "buffer" and p.buffer is not None and p.buffer.name != p.name:
                b = p.buffer
                out.append(f"    {b.name} = T.match_buffer({p.name}, {self.shape(b.shape)}, {dtype_text(b.dtype)}"
                           f"{self.extras(b)})")
        for h in f.host:
            self.stmt(h, 4, out)
        out.append("    with T.device_entry():")
        indent = 8
        launches = [("blockIdx.x", f.launch.grid[0]), ("blockIdx.y", f.launch.grid[1]),
                    ("blockIdx.z", f.launch.grid[2]), ("clusterCtaIdx.x", f.launch.cluster[0]),
                    ("clusterCtaIdx.y", f.launch.cluster[1]), ("clusterCtaIdx.z", f.launch.cluster[2]),
                    ("threadIdx.x", f.launch.block[0]), ("threadIdx.y", f.launch.block[1]),
                    ("threadIdx.z", f.launch.block[2])]
        for tag, extent in launches:
            trivial = isinstance(extent, Const) and extent.value == 1
            if trivial and tag not in ("blockIdx.x", "threadIdx.x") and tag not in self.used_tags:
                continue
            out.append(f'{" " * indent}with T.launch_thread("{tag}", {self.expr(extent)}) as {self.thread_names[tag]}:')
            indent += 4
        self.stmts(f.body, indent, out)
        return "\n".join(out) + "\n"

    def const_def(self, c) -> str:
        """Module constants are Python values: print plain numbers, no T.* typing."""
        return self.py_expr(c.expr, -1)

    def py_expr(self, e: Expr, parent: int) -> str:
        if isinstance(e, Const):
            text, prec = (("True" if e.value else "False") if e.dtype == "bool" else repr(e.value)), _PREC_ATOM
            if isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and e.value < 0:
                prec = _PREC_UNARY
        elif isinstance(e, ConstRef):
            text, prec = e.name, _PREC_ATOM
        elif isinstance(e, Cast):
            return self.py_expr(e.value, parent)
        elif isinstance(e, BinOp) and e.op in ("min", "max"):
            text, prec = f"{e.op}({self.py_expr(e.a, -1)}, {self.py_expr(e.b, -1)})", _PREC_ATOM
        elif isinstance(e, BinOp) and e.op in _INFIX:
            prec = _INFIX[e.op]
            text = f"{self.py_expr(e.a, prec - (prec != _PREC_CMP))} {e.op} {self.py_expr(e.b, prec)}"
        elif isinstance(e, UnaryOp):
            prec = _PREC_NOT if e.op == "not" else _PREC_UNARY
            text = ("not " if e.op == "not" else "~") + self.py_expr(e.a, prec - 1)
        else:
            raise TypeError(f"cannot print a {type(e).__name__} in a module constant")
        return f"({text})" if prec <= parent else text


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def print_func(func: PrimFunc) -> str:
    """The one entry point: canonical TIRx text for `func`."""
    return _Printer(func).render()
