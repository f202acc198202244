"""The kernel rewritten with its compile-time Python: names substituted, f-strings formatted, helpers inlined.

Assumes the module scan (`ir.module.ModuleScan`: compile-time values `meta`, their definitions
`meta_nodes`, `@T.inline` helpers `inlines`, constants `env`) and the builder's scope, errors and
namespace paths.  Guarantees: `Expander.function` returns the kernel's syntax tree with every
compile-time value spelled as TIR syntax (a tuple of constant arithmetic keeps its constants' names),
every `T.meta_var` name replaced by its value, every f-string a string, and every inline helper call
expanded at its call site with its own locals renamed apart (at most `MAX_INLINE_DEPTH` deep, no
`return` inside); a kernel without any of these comes back unchanged.  Errors are `ParseError`s
placed in the kernel file.
"""
from __future__ import annotations

import re
from dataclasses import fields, replace

from . import dtypes as dt
from . import syntax as sx
from .meta import DTYPE_ATTRS, DType, Evaluator, to_syntax

MAX_INLINE_DEPTH = 32


# ----------------------------------------------------------------------------- the kernel's syntax tree

def assigned_names(nodes) -> list[str]:
    """Every name a block binds (assignment, loop and `with ... as` targets), in order, nested blocks included."""
    out: list[str] = []

    def target(t):
        if isinstance(t, sx.Name):
            out.append(t.id)
        elif isinstance(t, (sx.TupleLit, sx.ListLit)):
            for e in t.elts:
                target(e)

    def walk(n):
        if isinstance(n, sx.Assign):
            for t in n.targets:
                target(t)
        elif isinstance(n, (sx.AnnAssign, sx.AugAssign)):
            target(n.target)
        elif isinstance(n, sx.For):
            for t in n.targets:
                target(t)
        elif isinstance(n, sx.With):
            for item in n.items:
                if item.name is not None:
                    target(item.name)
        for body in _bodies(n):
            for s in body:
                walk(s)

    for node in nodes:
        walk(node)
    return list(dict.fromkeys(out))


def _bodies(n) -> list[tuple]:
    if isinstance(n, sx.If):
        return [n.body, n.orelse]
    if isinstance(n, (sx.For, sx.While, sx.With)):
        return [n.body]
    return []


def syntax_nodes(root):
    """Every syntax node under `root` (a node or a tuple of them), iteratively: a deeply nested expression is
    the builder's to report, at its statement."""
    stack: list = [root]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif isinstance(n, sx.Node):
            yield n
            stack.extend(getattr(n, f.name) for f in fields(n) if f.name != "pos")


def all_names(node, out: set[str]) -> set[str]:
    for n in syntax_nodes(node):
        if isinstance(n, sx.Name):
            out.add(n.id)
        elif isinstance(n, sx.Param):
            out.add(n.name)
    return out


class Expander:
    """Rewrite one kernel: compile-time names substituted, f-strings formatted, inline helpers expanded."""

    def __init__(self, builder, scan):
        self.b = builder
        self.scan = scan
        self.ev = Evaluator(lambda what, node, hint="", expected="": builder.error(what, node, hint=hint,
                                                                                   expected=expected),
                            builder.ex.undefined, builder.ex.namespace_path)
        self.taken: set[str] = set()
        self.depth = 0

    def function(self, fn: sx.FunctionDef) -> sx.FunctionDef:
        if not self.scan.meta and not self.scan.inlines and not (_MAY_HAVE_META.search(self.b.source)
                                                                  and _has_meta(fn)):
            return fn
        self.taken = all_names(fn, set()) | set(self.scan.env) | set(self.scan.meta)
        subst = self.module_values()
        for p in fn.params:
            subst.pop(p.name, None)
        params = tuple(replace(p, annotation=self.expr(p.annotation, subst)) if p.annotation is not None else p
                       for p in fn.params)
        return replace(fn, params=params, body=self.block(fn.body, subst))

    def module_values(self) -> dict:
        return {name: _Value(v, self.scan.meta_nodes.get(name)) for name, v in self.scan.meta.items()}

    # ------------------------------------------------------------------ statements
    def block(self, nodes, subst: dict) -> tuple:
        subst = dict(subst)
        out: list = []
        for node in nodes:
            try:
                out.extend(self.stmt(node, subst))
            except RecursionError:
                raise self.b.too_deep(node) from None
        return tuple(out)

    def stmt(self, node, subst: dict) -> list:
        if isinstance(node, sx.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], sx.Name) and self.is_meta_var(node.value):
                subst[node.targets[0].id] = self.meta_var_value(node.value, subst)
                return []
            value = self.expr(node.value, subst)
            return [replace(node, targets=tuple(self.target(t, subst) for t in node.targets), value=value)]
        if isinstance(node, sx.AnnAssign):
            value = None if node.value is None else self.expr(node.value, subst)
            if value is not None and self.is_meta_var(node.value) and isinstance(node.target, sx.Name):
                subst[node.target.id] = self.meta_var_value(node.value, subst)
                return []
            return [replace(node, target=self.target(node.target, subst),
                            annotation=self.expr(node.annotation, subst), value=value)]
        if isinstance(node, sx.AugAssign):
            value = self.expr(node.value, subst)
            return [replace(node, target=self.target(node.target, subst, rebinding=False), value=value)]
        if isinstance(node, sx.ExprStmt):
            call = node.value
            if isinstance(call, sx.Call) and isinstance(call.func, sx.Name) and self.is_inline(call.func.id, subst):
                return self.expand(call, subst)
            return [replace(node, value=self.expr(call, subst))]
        if isinstance(node, sx.If):
            return [replace(node, test=self.expr(node.test, subst), body=self.block(node.body, subst),
                            orelse=self.block(node.orelse, subst))]
        if isinstance(node, sx.While):
            return [replace(node, test=self.expr(node.test, subst), body=self.block(node.body, subst))]
        if isinstance(node, sx.For):
            inner = dict(subst)
            targets = tuple(self.target(t, inner) for t in node.targets)
            return [replace(node, targets=targets, iter=self.expr(node.iter, subst), body=self.block(node.body, inner))]
        if isinstance(node, sx.With):
            inner = dict(subst)
            items = tuple(replace(i, context=self.expr(i.context, subst),
                                  name=None if i.name is None else self.target(i.name, inner)) for i in node.items)
            return [replace(node, items=items, body=self.block(node.body, inner))]
        if isinstance(node, sx.Return) and node.value is not None:
            return [replace(node, value=self.expr(node.value, subst))]
        if isinstance(node, sx.Assert):
            return [replace(node, test=self.expr(node.test, subst),
                            msg=None if node.msg is None else self.expr(node.msg, subst))]
        return [node]

    def target(self, t, subst: dict, rebinding: bool = True):
        """An assignment target: a renamed helper local or a parameter bound to a caller's name is written under
        that name; any other name bound here stops being a compile-time value from now on."""
        if isinstance(t, sx.Name):
            bound = subst.get(t.id)
            if isinstance(bound, sx.Name):
                return replace(bound, pos=t.pos)
            if bound is not None and rebinding:
                del subst[t.id]
            elif bound is not None:
                raise self.b.error(f"'{t.id}' is a compile-time value and cannot be updated", t,
                                   hint="assign it to a T.let or local scalar first")
            return t
        if isinstance(t, (sx.TupleLit, sx.ListLit)):
            return replace(t, elts=tuple(self.target(e, subst, rebinding) for e in t.elts))
        return self.expr(t, subst)

    # ------------------------------------------------------------------ meta_var and inline helpers
    def is_meta_var(self, value) -> bool:
        return isinstance(value, sx.Call) and self.b.ex.namespace_path(value.func) == ["meta_var"]

    def meta_var_value(self, call, subst: dict) -> sx.Node:
        if len(call.args) != 1 or call.kwargs or isinstance(call.args[0], sx.Starred):
            raise self.b.error("T.meta_var takes one value", call, expected="T.meta_var(expr)")
        return self.expr(call.args[0], subst)

    def is_inline(self, name: str, subst: dict) -> bool:
        return name in self.scan.inlines and name not in subst and self.b.scope.lookup(name) is None

    def expand(self, call: sx.Call, subst: dict) -> list:
        assert isinstance(call.func, sx.Name)
        fn = self.scan.inlines[call.func.id]
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.b.error(f"inline helper '{fn.name}' expands more than {MAX_INLINE_DEPTH} levels deep", call,
                               hint="an inline helper that calls itself never stops expanding")
        bound = self.bind(fn, call, subst)
        # hygiene: the helper's own locals get names the caller does not use, its free names are module-level
        inner = self.module_values()
        inner.update(bound)
        for name in assigned_names(fn.body):
            if name in bound:
                continue
            new = name
            k = 0
            while new in self.taken:
                k += 1
                new = f"{name}_{k}"
            self.taken.add(new)
            inner[name] = sx.Name(fn.pos, new)
        body = list(fn.body)
        if body and isinstance(body[-1], sx.Return) and body[-1].value is None:
            body.pop()
        for node in body:
            for ret in _returns(node):
                raise self.b.error(f"return in inline helper '{fn.name}'", ret,
                                   hint="an inline helper expands to statements where it is called: drop the return")
        self.depth += 1
        try:
            return list(self.block(tuple(body), inner))
        finally:
            self.depth -= 1

    def bind(self, fn: sx.FunctionDef, call: sx.Call, subst: dict) -> dict:
        args: list = []
        for a in call.args:
            if isinstance(a, sx.Starred) and not a.double:
                value = self.expr(a.value, subst)
                if not isinstance(value, (sx.TupleLit, sx.ListLit)):
                    raise self.b.error("only a tuple or list constant can be splatted into an inline helper", a)
                args.extend(value.elts)
            else:
                args.append(self.expr(a, subst))
        positional = [p for p in fn.params if not p.kwonly]
        if len(args) > len(positional):
            raise self.b.error(f"inline helper '{fn.name}' takes {len(positional)} positional argument(s), "
                               f"got {len(args)}", call, hint=f"its parameters are defined at line {fn.header.line}")
        bound: dict = {p.name: a for p, a in zip(positional, args)}
        names = {p.name for p in fn.params}
        for kw in call.kwargs:
            if kw.name not in names:
                raise self.b.error(f"inline helper '{fn.name}' has no parameter '{kw.name}'", kw,
                                   hint="its parameters: " + ", ".join(p.name for p in fn.params))
            if kw.name in bound:
                raise self.b.error(f"inline helper '{fn.name}' got two values for '{kw.name}'", kw)
            bound[kw.name] = self.expr(kw.value, subst)
        for p in fn.params:
            if p.name not in bound:
                if p.default is None:
                    raise self.b.error(f"inline helper '{fn.name}' needs a value for '{p.name}'", call,
                                       hint=f"its parameters are defined at line {fn.header.line}")
                bound[p.name] = self.expr(p.default, self.module_values())
        return bound

    # ------------------------------------------------------------------ expressions
    def expr(self, node, subst: dict):
        if node is None:
            return None
        if isinstance(node, sx.Name):
            bound = subst.get(node.id)
            if bound is None:
                return node
            if isinstance(bound, _Value):
                if bound.node is not None:
                    return sx._at(bound.node, node.pos)     # `(BM, BN)` keeps the constants' names
                spelled = to_syntax(bound.value, node.pos)
                if spelled is None:
                    raise self.b.error(f"'{node.id}' ({type(bound.value).__name__}) has no TIR value", node)
                return spelled
            return bound
        if isinstance(node, sx.FStr):
            return sx.Str(node.pos, self.ev.fstring(node, self.scan.env, "an f-string field",
                                                    lambda field: self.expr(field, subst)))
        if isinstance(node, sx.Call):
            if self.is_meta_var(node):
                return self.meta_var_value(node, subst)
            if isinstance(node.func, sx.Name) and self.is_inline(node.func.id, subst):
                raise self.b.error(f"inline helper '{node.func.id}' used as a value", node,
                                   hint="inline helpers expand to statements: call it on a line of its own")
            args: list = []
            for a in node.args:
                if isinstance(a, sx.Starred) and not a.double:
                    value = self.expr(a.value, subst)
                    if isinstance(value, (sx.TupleLit, sx.ListLit)):
                        args.extend(value.elts)
                        continue
                    args.append(replace(a, value=value))
                else:
                    args.append(self.expr(a, subst))
            kwargs = tuple(replace(k, value=self.expr(k.value, subst)) for k in node.kwargs)
            return replace(node, func=self.expr(node.func, subst), args=tuple(args), kwargs=kwargs)
        if isinstance(node, sx.Subscript):
            value = self.expr(node.value, subst)
            indices = tuple(self.expr(i, subst) for i in node.indices)
            if len(indices) == 1 and isinstance(indices[0], sx.TupleLit) and indices[0].elts:
                indices = indices[0].elts       # `buf[idx]` with idx a tuple: Python indexes with its elements
            if isinstance(value, (sx.TupleLit, sx.ListLit, sx.DictLit, sx.Str)) and len(indices) == 1 \
                    and not isinstance(indices[0], sx.Slice):
                return self.pick(node, value, indices[0])
            return replace(node, value=value, indices=indices)
        if isinstance(node, sx.Attr):
            value = self.expr(node.value, subst)
            if isinstance(value, sx.Str) and node.attr in DTYPE_ATTRS and dt.canonical(value.value) is not None:
                return to_syntax(getattr(DType(dt.canonical(value.value)), node.attr), node.pos)
            return replace(node, value=value)
        if isinstance(node, sx.Node):
            changes = {}
            for f in fields(node):
                if f.name == "pos":
                    continue
                old = getattr(node, f.name)
                new = self.expr_field(old, subst)
                if new is not old:
                    changes[f.name] = new
            return replace(node, **changes) if changes else node
        return node

    def pick(self, node: sx.Subscript, value: sx.Node, index: sx.Node) -> sx.Node:
        """`TILE[1]`, `CFG["stages"]` in the kernel: the element's own spelling (a constant's name stays a name)."""
        key = self.ev(index, self.scan.env, "a subscript")
        if isinstance(value, (sx.TupleLit, sx.ListLit)) and isinstance(key, int) and not isinstance(key, bool):
            if -len(value.elts) <= key < len(value.elts):
                return value.elts[key]
            raise self.b.error(f"index {key} is out of range", node)
        if isinstance(value, sx.DictLit):
            for k, v in value.items:
                if self.ev(k, self.scan.env, "a dict key") == key:
                    return v
            raise self.b.error(f"{key!r} is not a key of this dict", node)
        picked = self.ev(replace(node, value=value, indices=(index,)), self.scan.env, "a subscript")
        spelled = to_syntax(picked, node.pos)
        if spelled is None:
            raise self.b.error("this subscript has no TIR value", node)
        return spelled

    def expr_field(self, value, subst):
        if isinstance(value, sx.Node):
            return self.expr(value, subst)
        if isinstance(value, tuple) and value and any(isinstance(v, (sx.Node, tuple)) for v in value):
            return tuple(self.expr_field(v, subst) for v in value)
        return value



class _Value:
    """A module-level compile-time value waiting to be spelled at its use; `node`, when set, is its definition
    (a tuple or list of constant arithmetic), spelled instead so that constants keep their names."""

    __slots__ = ("value", "node")

    def __init__(self, value, node=None):
        self.value = value
        self.node = node


def _returns(node):
    if isinstance(node, sx.Return):
        yield node
    for body in _bodies(node):
        for s in body:
            yield from _returns(s)


# a cheap filter before the walk (most kernels have neither): an f-string prefix before a quote, or meta_var;
# it may match a comment, never miss one
_MAY_HAVE_META = re.compile(r"(?<![A-Za-z0-9_])(?:[rR]?[fF]|[fF][rR])[\"']|meta_var")


def _has_meta(fn: sx.FunctionDef) -> bool:
    """Does the kernel use a compile-time construct (f-string, T.meta_var) the expander rewrites?"""
    return any(isinstance(n, sx.FStr) or (isinstance(n, sx.Attr) and n.attr == "meta_var")
               for n in syntax_nodes(fn.body))
