"""The module level of a kernel file: imports, constants, symbolic dimensions, functions.

Assumes the builder's scope and expression builder.  Guarantees, after `scan(module)`:
every module constant evaluated with Python semantics (overrides applied, sizes bounded
before computing: `10 ** 10 ** 9` is an error, not a hang) and bound as a `ConstRef`;
every `X = TypeVar("X")` a symbolic dimension (`dims`); the functions split into kernels
(decorated `@T.prim_func`, `@T.function`, `@T.jit`, with or without arguments), inline
helpers (`@T.inline`, `@T.macro`: expanded where a kernel calls them) and plain Python
functions (host code beside the kernel: ignored unless a kernel calls one).  `pick(name)`
chooses the kernel to build.  Anything else at module level is a `ParseError` naming it.
"""
from __future__ import annotations

from . import dtypes as dt
from . import syntax as sx
from .errors import ParseError, UsageError
from .nodes import Const, ConstRef, Constant, Expr, Var
from .scope import CONST, DIM, NAMESPACE, Binding

KERNEL_DECORATORS = ("function", "prim_func", "jit")
INLINE_DECORATORS = ("inline", "macro")
MAX_CONST_BITS = 256


class ModuleScan:
    def __init__(self, builder):
        self.b = builder
        self.constants: list[Constant] = []
        self.env: dict[str, int | float] = {}       # name -> value of the constants so far
        self.dims: dict[str, Var] = {}               # symbolic dimensions by name
        self.kernels: list[sx.FunctionDef] = []
        self.inlines: dict[str, sx.FunctionDef] = {}
        self.plain: dict[str, sx.FunctionDef] = {}
        self.decorated: dict[str, sx.Node] = {}       # plain functions with a decorator not of T's

    def error(self, what, node, hint="", expected="") -> ParseError:
        return self.b.error(what, node, hint=hint, expected=expected)

    # ------------------------------------------------------------------ statements
    def scan(self, m: sx.Module) -> None:
        for node in m.body:
            if isinstance(node, sx.Import):
                self.import_(node)
            elif isinstance(node, (sx.Assign, sx.AnnAssign)):
                try:
                    if not self.typevar(node):
                        self.constant(node)
                except RecursionError:
                    raise self.b.too_deep(node) from None
            elif isinstance(node, sx.FunctionDef):
                self.function(node)
            elif isinstance(node, sx.ExprStmt) and isinstance(node.value, sx.Str):
                continue  # module docstring
            elif isinstance(node, sx.If) and _is_main_guard(node.test):
                continue  # `if __name__ == "__main__":` host code, not part of the kernel
            elif isinstance(node, sx.Pass):
                continue
            else:
                raise self.error("statement outside the function", node,
                                 hint="the module level holds imports, constants and the kernel function;"
                                      " move this statement into the kernel body")
        unknown = sorted(set(self.b.overrides) - {c.name for c in self.constants})
        if unknown:
            known = ", ".join(c.name for c in self.constants) or "none"
            raise UsageError(f"unknown constant(s) {', '.join(unknown)} for {self.b.file}; module constants: {known}")

    def import_(self, node: sx.Import) -> None:
        scope = self.b.scope
        for name, alias in node.names:
            if name in ("tirx", "tir") and node.module.endswith("script"):
                scope.define(alias or name, Binding(NAMESPACE, node.pos))
        if not node.names and node.alias and node.module.endswith(("script.tirx", "script.tir")):
            scope.define(node.alias, Binding(NAMESPACE, node.pos))

    def typevar(self, node) -> bool:
        """`X = TypeVar("X")` (the 0.27 printer's symbolic buffer dimension)."""
        if not isinstance(node, sx.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], sx.Name):
            return False
        value = node.value
        if not (isinstance(value, sx.Call) and _callee(value.func) == "TypeVar"):
            return False
        target = node.targets[0]
        if len(value.args) != 1 or not isinstance(value.args[0], sx.Str) or value.kwargs:
            raise self.error("TypeVar takes the dimension's name", value,
                             expected=f'{target.id} = TypeVar("{target.id}")')
        self.dim(target.id, target)
        return True

    def dim(self, name: str, at) -> Var:
        """The symbolic dimension `name` (declared once, by a TypeVar, a string extent or `T.int64()`)."""
        var = self.dims.get(name)
        if var is None:
            if name in self.env:
                raise self.error(f"'{name}' is both a module constant and a symbolic dimension", at)
            var = self.dims[name] = Var(name, "int64", span=self.b.ex.span(at))
            self.b.used.add(name)
            self.b.scope.define(name, Binding(DIM, getattr(at, "pos", None), expr=var))
        return var

    def function(self, fn: sx.FunctionDef) -> None:
        kinds = set()
        for dec in fn.decorators:
            path = self.b.ex.namespace_path(dec.func if isinstance(dec, sx.Call) else dec)
            if path and len(path) == 1 and path[0] in KERNEL_DECORATORS:
                kinds.add("kernel")
            elif path and len(path) == 1 and path[0] in INLINE_DECORATORS:
                kinds.add("inline")
            elif path is not None:
                raise _unknown_decorator(self, dec)
            else:
                self.decorated.setdefault(fn.name, dec)     # not T's: host code, unless it was meant as the kernel
        if len(kinds) > 1:
            raise self.error(f"'{fn.name}' is decorated both as a kernel and as an inline helper", fn.header)
        if "kernel" in kinds:
            self.kernels.append(fn)
        elif "inline" in kinds:
            self.inlines[fn.name] = fn
        else:
            self.plain[fn.name] = fn     # host code beside the kernel (e.g. a launch() helper)

    def pick(self, name: str | None) -> sx.FunctionDef:
        """The kernel to build: the one named, else the only one in the file."""
        if name is not None:
            for fn in self.kernels:
                if fn.name == name:
                    return fn
            known = ", ".join(fn.name for fn in self.kernels) or "none"
            raise UsageError(f"no kernel named {name!r} in {self.b.file}; its kernels: {known}")
        if not self.kernels:
            if self.decorated:
                raise _unknown_decorator(self, next(iter(self.decorated.values())))
            plain = next(iter(self.plain.values()), None)
            if plain is not None:
                raise self.error(f"function '{plain.name}' has no @T.function decorator", plain.header,
                                 hint="decorate the kernel with @T.function (or @T.prim_func)")
            raise ParseError("no kernel function in this file", sx.Pos(1, 1, 1, 1).span(self.b.file),
                             hint="define one function decorated with @T.prim_func (or @T.function)",
                             source=self.b.source)
        if len(self.kernels) > 1:
            first, second = self.kernels[0], self.kernels[1]
            raise self.error(f"several kernels in this file ({', '.join(fn.name for fn in self.kernels)}): choose one",
                             second.header, hint=f"pass --kernel NAME (load(path, kernel_name=...)); '{first.name}' "
                                                 f"is defined at line {first.header.line}")
        return self.kernels[0]

    # ------------------------------------------------------------------ constants
    def constant(self, node: sx.Assign | sx.AnnAssign) -> None:
        if isinstance(node, sx.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], sx.Name):
                raise self.error("statement outside the function", node,
                                 hint="module level assignments must be `NAME = <integer expression>`")
            target, value = node.targets[0], node.value
        else:
            if not isinstance(node.target, sx.Name) or node.value is None:
                raise self.error("statement outside the function", node,
                                 hint="module level assignments must be `NAME = <integer expression>`")
            target, value = node.target, node.value
        if isinstance(value, sx.Call) and \
                not (isinstance(value.func, sx.Name) and value.func.id in ("min", "max", "abs")):
            # `x = foo()`, `bar = T.alloc_tensor(...)`: kernel code written at module level
            raise self.error("statement outside the function", node,
                             hint="the module level holds imports, integer constants (`NAME = <integer expression>`,"
                                  " with min/max/abs) and the kernel; move this statement into the kernel body")
        name = target.id
        env = self.env
        if name in env or name in self.dims:
            raise self.error(f"module constant '{name}' is defined twice", target,
                             hint="give each constant one definition; override values with load(path, NAME=value)")
        overrides = self.b.overrides
        if name in overrides:
            v = overrides[name]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                try:
                    v = int(v)
                except (TypeError, ValueError):
                    raise UsageError(f"override for constant {name} must be a number, got {v!r}") from None
            expr = const_node(v)
        else:
            v = self.py_eval(value, env, name)
            if isinstance(v, int) and abs(v).bit_length() > MAX_CONST_BITS:
                raise self.error(f"module-level constant '{name}' is too large: more than {MAX_CONST_BITS} bits",
                                 value, hint="kernel constants fit in 64 bits; check the expression")
            try:
                expr = self.b.ex.expr(value)
            except ParseError:
                expr = const_node(v)
            if isinstance(expr, Const):
                # folded to a constant: the Python value is the definition (TIR folding wraps at int32, and
                # its dtype is not what the printed number reads back as)
                expr = const_node(v)
        self.b.used.add(name)
        self.constants.append(Constant(name, v, expr, span=self.b.ex.span(node)))
        env[name] = v
        self.b.scope.define(name, Binding(CONST, target.pos, expr=ConstRef(name, const_node(v).dtype)))

    def py_eval(self, node: sx.Node, env: dict, owner: str):
        """Module constants are Python values: evaluate with Python semantics."""
        def bad():
            return self.error(f"module-level constant '{owner}' must be an integer expression", node,
                              hint="use literals, earlier constants and + - * // % << >> & | ^ ** min max")
        if isinstance(node, sx.Num):
            return node.value
        if isinstance(node, sx.Lit) and isinstance(node.value, bool):
            return int(node.value)
        if isinstance(node, sx.Name):
            if node.id in env:
                return env[node.id]
            raise self.b.ex.undefined(node.id, node) if node.id not in ("T",) else bad()
        if isinstance(node, sx.UnaryOp):
            v = self.py_eval(node.operand, env, owner)
            return {"-": lambda: -v, "+": lambda: v, "~": lambda: ~int(v), "not": lambda: int(not v)}[node.op]()
        if isinstance(node, sx.BinOp):
            a, b = self.py_eval(node.left, env, owner), self.py_eval(node.right, env, owner)
            if too_big(node.op, a, b):
                raise self.error(f"module-level constant '{owner}' is too large: more than {MAX_CONST_BITS} bits",
                                 node, hint="kernel constants fit in 64 bits; check the expression")
            try:
                return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
                        "%": lambda: a % b, "**": lambda: a ** b, "<<": lambda: a << b, ">>": lambda: a >> b,
                        "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b, "/": lambda: a / b}[node.op]()
            except (ZeroDivisionError, KeyError, TypeError, ValueError, OverflowError):
                raise bad() from None
        if isinstance(node, sx.Call) and isinstance(node.func, sx.Name) and node.func.id in ("min", "max", "abs") \
                and not node.kwargs:
            vals = [self.py_eval(a, env, owner) for a in node.args]
            if not vals or (node.func.id == "abs" and len(vals) != 1):
                raise self.error(f"{node.func.id}() in module-level constant '{owner}' needs "
                                 f"{'one argument' if node.func.id == 'abs' else 'at least one argument'}", node,
                                 hint="give min/max one or more values, abs exactly one")
            return {"min": min, "max": max, "abs": lambda *x: abs(x[0])}[node.func.id](*vals)
        raise bad()


def _unknown_decorator(scan: ModuleScan, dec) -> ParseError:
    return scan.error("unknown decorator", dec, expected="@T.function or @T.prim_func",
                      hint="kernels are written as `@T.function def name(...):` (or @T.prim_func, @T.jit; "
                           "helpers as @T.inline)")


def too_big(op: str, a, b) -> bool:
    """Could `a op b` exceed MAX_CONST_BITS?  Decided from an upper bound before computing it (`10 ** 10 ** 9`
    never finishes); `constant` checks the exact size of what passes."""
    if isinstance(a, float) or isinstance(b, float):
        return op == "**" and isinstance(b, (int, float)) and abs(b) > 1e4
    bits = max(abs(a).bit_length(), 1)
    if op == "**":
        return b > 0 and abs(a) > 1 and bits * b > 2 * MAX_CONST_BITS
    if op == "<<":
        return b > 0 and a != 0 and bits + b > 2 * MAX_CONST_BITS
    return False        # + - * // % & | ^ >> of operands that passed stay within twice the bound


def const_node(v) -> Expr:
    from . import typing as ty
    if isinstance(v, bool):
        return Const(v, "bool")
    if isinstance(v, float):
        return ty.const(v, "float32")
    return Const(v, dt.literal_int_dtype(v))


def _callee(node) -> str | None:
    """The last name of a called function: `TypeVar` for `TypeVar(...)` and `typing.TypeVar(...)`."""
    if isinstance(node, sx.Name):
        return node.id
    if isinstance(node, sx.Attr):
        return node.attr
    return None


def _is_main_guard(test: sx.Node) -> bool:
    return (isinstance(test, sx.Compare) and isinstance(test.left, sx.Name) and test.left.id == "__name__"
            and test.ops == ("==",))
