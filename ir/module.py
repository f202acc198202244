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

from collections import ChainMap
from collections.abc import Mapping
from dataclasses import replace

from . import dtypes as dt
from . import meta
from . import syntax as sx
from .errors import ParseError, UsageError
from .nodes import Const, ConstRef, Constant, Expr, Var
from .scope import CONST, DIM, NAMESPACE, Binding

KERNEL_DECORATORS = ("function", "prim_func", "jit")
INLINE_DECORATORS = ("inline", "macro")
MAX_CONST_BITS = meta.MAX_CONST_BITS


class ModuleScan:
    def __init__(self, builder):
        self.b = builder
        self.constants: list[Constant] = []
        self.env: dict[str, int | float] = {}       # name -> value of the constants so far
        self.meta: dict[str, object] = {}           # compile-time values that are not numbers (tuples, strings...)
        self.meta_nodes: dict[str, sx.Node] = {}    # ... and the definitions of tuples of constants, spelled at use
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
            if name in self.env or name in self.meta:
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
    def evaluator(self) -> meta.Evaluator:
        return meta.Evaluator(lambda what, node, hint="", expected="": self.error(what, node, hint=hint,
                                                                                  expected=expected),
                              self.b.ex.undefined, self.b.ex.namespace_path)

    def constant(self, node: sx.Assign | sx.AnnAssign) -> None:
        """`NAME = value` or `A, B = values`: numbers become module constants (`ConstRef`s, overridable), other
        compile-time values (tuples, strings, dicts, dtypes) are spliced in where the kernel uses them."""
        value: sx.Node | None
        if isinstance(node, sx.Assign):
            if len(node.targets) != 1:
                raise self.error("chained assignment at module level", node, hint="assign one name per line")
            target, value = node.targets[0], node.value
        else:
            target, value = node.target, node.value
        if value is None or not isinstance(target, (sx.Name, sx.TupleLit, sx.ListLit)) or \
                (not isinstance(target, sx.Name) and not all(isinstance(e, sx.Name) for e in target.elts)):
            raise self.error("statement outside the function", node,
                             hint="module level assignments must be `NAME = <compile-time value>` "
                                  "(or `A, B = <tuple>`)")
        if isinstance(value, sx.Call) and not _compile_time_call(self, value):
            # `bar = T.alloc_tensor(...)`: kernel code written at module level
            raise self.error("statement outside the function", node,
                             hint="the module level holds imports, compile-time constants and the kernel;"
                                  " move this statement into the kernel body")
        if isinstance(target, sx.Name):
            self.define(target, value, node)
            return
        names = [e for e in target.elts if isinstance(e, sx.Name)]     # all are: checked above
        v = self.evaluator()(value, self.values(), names[0].id)
        if not isinstance(v, (tuple, list)) or len(v) != len(names):
            raise self.error(f"cannot unpack {type(v).__name__} into {len(names)} names", value,
                             hint="the right side must be a tuple or list of as many values")
        elts = value.elts if isinstance(value, (sx.TupleLit, sx.ListLit)) and len(value.elts) == len(names) else None
        for k, name in enumerate(names):
            self.define(name, elts[k] if elts is not None else None, node, known=v[k])

    def values(self) -> Mapping:
        # a view, not a copy: copying both dicts per constant made a module of n constants O(n^2)
        return ChainMap(self.env, self.meta)

    def define(self, target: sx.Name, value: sx.Node | None, node, known=None) -> None:
        name = target.id
        if name in self.env or name in self.dims or name in self.meta:
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
            v = known if value is None else self.evaluator()(value, self.values(), name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.meta[name] = v
                if isinstance(value, (sx.TupleLit, sx.ListLit)) and all(_arithmetic(e) and not isinstance(e, sx.Call)
                                                                          for e in value.elts):
                    self.meta_nodes[name] = value
                self.b.used.add(name)
                return
            if isinstance(v, int) and abs(v).bit_length() > MAX_CONST_BITS:
                raise self.error(f"module-level constant '{name}' is too large: more than {MAX_CONST_BITS} bits",
                                 value or target, hint="kernel constants fit in 64 bits; check the expression")
            expr = const_node(v)
            if value is not None and _arithmetic(value):
                try:
                    expr = self.b.ex.expr(value)
                except ParseError:
                    pass
                if isinstance(expr, Const):
                    # folded to a constant: the Python value is the definition (TIR folding wraps at int32, and
                    # its dtype is not what the printed number reads back as)
                    expr = const_node(v)
        self.b.used.add(name)
        self.constants.append(Constant(name, v, expr, span=self.b.ex.span(node)))
        self.env[name] = v
        self.b.scope.define(name, Binding(CONST, target.pos, expr=ConstRef(name, const_node(v).dtype)))

    def compile_time_params(self, fn: sx.FunctionDef) -> sx.FunctionDef:
        """`N: T.constexpr = 64` parameters (and, in an `@T.jit` kernel, every defaulted or keyword-only
        parameter that is not a tensor) are compile-time values: module constants, overridable like them."""
        jit = any(self.b.ex.namespace_path(d.func if isinstance(d, sx.Call) else d) == ["jit"]
                  for d in fn.decorators)
        keep = []
        for p in fn.params:
            ann = p.annotation
            ann_path = None if ann is None else self.b.ex.namespace_path(ann.value if isinstance(ann, sx.Subscript)
                                                                         else ann)
            constexpr = ann_path == ["constexpr"]
            tensor = isinstance(ann, sx.Call) and self.b.ex.namespace_path(ann.func) in (["Tensor"], ["Buffer"])
            if not (constexpr or (jit and (p.default is not None or p.kwonly) and not tensor)):
                keep.append(p)
                continue
            if p.default is None and p.name not in self.b.overrides:
                raise UsageError(f"{self.b.file}:{p.pos.line}:{p.pos.col}: compile-time parameter {p.name} of kernel "
                                 f"{fn.name} has no default value: pass --const {p.name}=VALUE "
                                 f"(load(path, {p.name}=VALUE))")
            self.define(sx.Name(p.pos, p.name), p.default, p)
            if p.name in self.meta and not isinstance(self.meta[p.name], str):
                raise self.error(f"compile-time parameter '{p.name}' must be a number or a string", p.default or p)
        return replace(fn, params=tuple(keep))

    def check_overrides(self) -> None:
        unknown = sorted(set(self.b.overrides) - {c.name for c in self.constants})
        if unknown:
            known = ", ".join(c.name for c in self.constants) or "none"
            raise UsageError(f"unknown constant(s) {', '.join(unknown)} for {self.b.file}; module constants: {known}")


def _compile_time_call(scan: ModuleScan, call: sx.Call) -> bool:
    """Calls module-level Python may make: builtins over values and `tvm.DataType(...)`."""
    if isinstance(call.func, sx.Name):
        return call.func.id in ("min", "max", "abs", "len", "int", "str", "tuple", "list", "bool", "float", "sum",
                                "DataType")
    return isinstance(call.func, sx.Attr) and call.func.attr == "DataType" and isinstance(call.func.value, sx.Name) \
        and call.func.value.id in ("tvm", "T")


def _arithmetic(node: sx.Node) -> bool:
    """Integer arithmetic over literals and names (what the builder can keep as an expression of constants)."""
    if isinstance(node, (sx.Num, sx.Name)):
        return True
    if isinstance(node, sx.UnaryOp):
        return _arithmetic(node.operand)
    if isinstance(node, sx.BinOp):
        return _arithmetic(node.left) and _arithmetic(node.right)
    if isinstance(node, sx.Call) and isinstance(node.func, sx.Name) and node.func.id in ("min", "max", "abs"):
        return all(_arithmetic(a) for a in node.args) and not node.kwargs
    return False


def _unknown_decorator(scan: ModuleScan, dec) -> ParseError:
    return scan.error("unknown decorator", dec, expected="@T.function or @T.prim_func",
                      hint="kernels are written as `@T.function def name(...):` (or @T.prim_func, @T.jit; "
                           "helpers as @T.inline)")


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
