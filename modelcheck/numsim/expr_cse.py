"""Shared values of repeated subexpressions within one evaluation of an expression.

Lowered and swizzled index arithmetic repeats whole subtrees: a swizzled shared-memory address spells
`(stage * 32 + row) * 128 + col` out six times around its `^`, each a chain of numpy calls on 32 lanes.  In an
expression made only of operators, casts, non-lazy selects, constants, variables, thread indices and reads of
registers at constant indices (no memory load, call, `let`, `and`/`or`, lazy select or division by a variable),
nothing changes between the occurrences of a subtree: they have the same value.  Each occurrence keeps its own
closure and its own register reads; the first one evaluated stores its value in a cell that the expression
empties at every evaluation, and the others return that value after running their own register reads (so each
read's site still notes an uninitialized register exactly as before).  Values are never changed in place
(numsim.values), so sharing one is sharing equal ones.
"""
from __future__ import annotations

from collections import Counter

import ir

_DIVISIONS = ("/", "//", "%", "tdiv", "tmod")
_MIN_NODES = 3          # a smaller repeated subtree costs about what its lookup does


def plan(root: ir.Expr, const_value, register_read) -> list[ir.Expr]:
    """The repeated subtrees of `root` worth sharing (structurally equal nodes: spans do not compare), or
    [] when `root` holds anything whose evaluation is not the same at every occurrence.  `register_read(load)`:
    whether a Load reads a register at constant indices that no asynchronous operation writes."""
    size: dict[int, int] = {}
    total = _size(root, const_value, register_read, size)
    if total is None or total < 2 * _MIN_NODES + 1:
        return []               # (most roots: too small to hold a repeat worth sharing)
    counts: Counter = Counter()
    for node in ir.walk(root):
        if size.get(id(node), 0) >= _MIN_NODES and _is_operator(node):
            counts[node] += 1
    if not counts or max(counts.values()) < 2:
        return []
    # top down: a subtree repeated more often than the shared subtree around it (none: once) is shared too
    chosen: list[ir.Expr] = []
    stack: list = [(root, 1)]
    while stack:
        node, around = stack.pop()
        n = counts.get(node, 0) if node is not root and _is_operator(node) else 0
        if n > around and size.get(id(node), 0) >= _MIN_NODES:
            if node not in chosen:
                chosen.append(node)
            around = n
        stack.extend((child, around) for child in ir.children(node))
    return chosen


def _is_operator(e) -> bool:
    return isinstance(e, (ir.BinOp, ir.UnaryOp, ir.Cast, ir.Select))


def _size(e, const_value, register_read, size: dict) -> int | None:
    """Nodes in `e`, or None when `e` is outside the fragment above (recorded per node id in `size`)."""
    if isinstance(e, (ir.Const, ir.ConstRef, ir.Var, ir.ThreadIndex)) or const_value(e) is not None:
        n: int | None = 1
    elif isinstance(e, ir.Load):
        n = 1 if register_read(e) else None
    elif isinstance(e, ir.Address):
        n = _sum(e.indices, const_value, register_read, size)
    elif isinstance(e, ir.BinOp):
        if e.op in ("and", "or"):
            n = None
        elif e.op in _DIVISIONS and not isinstance(const_value(e.b), int):
            n = None        # a variable divisor faults only on active lanes: mask-dependent
        else:
            n = _sum((e.a, e.b), const_value, register_read, size)
    elif isinstance(e, ir.UnaryOp):
        n = _sum((e.a,), const_value, register_read, size)
    elif isinstance(e, ir.Cast):
        n = _sum((e.value,), const_value, register_read, size)
    elif isinstance(e, ir.Select) and not e.lazy:
        n = _sum((e.cond, e.true_value, e.false_value), const_value, register_read, size)
    else:
        n = None
    if n is not None:
        size[id(e)] = n
    return n


def _sum(parts, const_value, register_read, size) -> int | None:
    total = 1
    for p in parts:
        k = _size(p, const_value, register_read, size)
        if k is None:
            return None
        total += k
    return total


def shared(fn, cells: list, k: int, reads: list):
    """An occurrence: the value an earlier occurrence stored in `cells[k]` in this evaluation (after this
    occurrence's own register `reads`, for their side effects), else `fn`'s, stored."""
    own = tuple(reads)

    def occurrence(w):
        v = cells[k]
        if v is None:
            v = cells[k] = fn(w)
            return v
        for r in own:
            r(w)
        return v
    return occurrence


def fresh(fn, cells: list):
    """The root: its cells emptied before each evaluation (an expression is never evaluated inside itself; the
    cells live with the closure, not the warp: a CTA cohort's op evaluates it per row, whose variables are
    read-only)."""
    empty = [None] * len(cells)

    def root(w):
        cells[:] = empty
        return fn(w)
    return root
