"""Each warp's skeleton laid out as numbered steps in blocks, and how its slots and guards repeat.

A warp's program becomes blocks: straight runs of commands (one step each) and loops
over a symbolic trip count whose body is a fixed run of commands (nested loops with
small concrete trip counts are unrolled; a command's guard on the loop variable makes
it a no-op step in iterations where the guard fails, so every iteration has the same
length).  A position in the warp's program is (block, iteration, offset in the block).

What the protocol needs is how many times each command has run before a position, per
barrier slot (`model.State.count`).  For a loop command that is the number of iterations r
in a range whose slot `slot(r)` is s and whose guard holds.  Slots and guards on r are
periodic patterns (evaluated concretely over a period, `slot_form`, `guard_set`)
intersected with ranges whose bounds may be symbolic, so the count is
`(x // P) * k + #{residues < x % P}` — linear with the quotient lowered to variables.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

import ir

from .exprs import OutsideFragment, conj, evaluate, free_vars, substitute
from .skeleton import Command, Guarded, Loop
from .z3expr import Terms, affine

PERIOD_LIMIT = 64
NESTED_UNROLL = 256


# ---------------------------------------------------------------------------------- iteration sets
@dataclass(frozen=True)
class IterSet:
    """Iterations r with lo <= r < hi (either bound may be None = open) and pattern[r % period]."""

    lo: ir.Expr | None
    hi: ir.Expr | None
    period: int
    pattern: tuple[bool, ...]
    factor: ir.Expr | None = None     # a condition on symbolic constants only


@dataclass(frozen=True)
class SlotForm:
    """How a loop command's barrier slot depends on the iteration r.

    const: always `value`; rot: (r + offset) % size; table: values[r % period]; expr: `expr`, a term in
    the symbolic constants only (an epilogue's `(2 * N - 1) % D`)."""

    kind: str
    value: int = 0
    offset: int = 0
    size: int = 1
    values: tuple = ()
    expr: ir.Expr | None = None     # expr: the slot; rot: the offset when it is a term in the symbolic constants


def _periodic(fn, what: str, span) -> tuple[int, tuple]:
    """(period, values over one period) of fn(r) for r >= 0."""
    n = 4 * PERIOD_LIMIT
    vals = [fn(r) for r in range(n)]
    for p in range(1, PERIOD_LIMIT + 1):
        if all(vals[r] == vals[r + p] for r in range(n - p)):
            return p, tuple(vals[:p])
    raise OutsideFragment(f"{what} that is not periodic in the loop variable (period > {PERIOD_LIMIT})", span)


def _range_of(cond: ir.Expr, var: str):
    """Bounds (lo, hi) from a conjunction of comparisons of `var` with expressions free of it, or None."""
    if isinstance(cond, ir.BinOp) and cond.op in ("and", "&&"):
        a, b = _range_of(cond.a, var), _range_of(cond.b, var)
        if a is None or b is None:
            return None
        return _tighter(a[0], b[0], "max"), _tighter(a[1], b[1], "min")
    if isinstance(cond, ir.UnaryOp) and cond.op in ("not", "!") and isinstance(cond.a, ir.BinOp):
        flip = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}.get(cond.a.op)
        if flip:
            return _range_of(ir.BinOp(flip, cond.a.a, cond.a.b, "bool"), var)
        return None
    if not isinstance(cond, ir.BinOp) or cond.op not in ("<", "<=", ">", ">=", "=="):
        return None
    a, b, op = cond.a, cond.b, cond.op
    if var in free_vars(b) and var not in free_vars(a):
        a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}[op]
    off = 0
    # r + c OP e  /  r - c OP e
    while isinstance(a, ir.BinOp) and a.op in ("+", "-") and isinstance(a.b, ir.Const) and \
            isinstance(a.a, (ir.Var, ir.BinOp)):
        off += int(a.b.value) if a.op == "+" else -int(a.b.value)
        a = a.a
    if not (isinstance(a, ir.Var) and a.name == var) or var in free_vars(b):
        return None
    e = b if off == 0 else ir.BinOp("-", b, ir.Const(off, "int32"), "int32")
    one = ir.Const(1, "int32")
    if op == "<":
        return None, e
    if op == "<=":
        return None, ir.BinOp("+", e, one, "int32")
    if op == ">":
        return ir.BinOp("+", e, one, "int32"), None
    if op == ">=":
        return e, None
    return e, ir.BinOp("+", e, one, "int32")


def _tighter(x, y, how):
    if x is None:
        return y
    if y is None:
        return x
    return ir.BinOp(how, x, y, "int32")


def guard_set(var: str, guard: ir.Expr | None, symbolic, span) -> IterSet:
    """The iterations where a guarded loop command runs."""
    lo = hi = None
    factor = None
    period, pattern = 1, (True,)
    if guard is not None:
        fv = free_vars(guard)
        if var not in fv:
            factor = guard
        else:
            rng = _range_of(guard, var)
            if rng is not None:
                lo, hi = rng
            elif fv - {var}:
                raise OutsideFragment("a guard mixing the loop variable with a symbolic constant in a way other "
                                      "than a comparison", span)
            else:
                period, pattern = _periodic(lambda r: bool(evaluate(guard, {var: r})), "a guard", span)
    return IterSet(lo, hi, period, pattern, factor)


def slot_form(var: str | None, slot: ir.Expr, symbolic, span) -> SlotForm:
    fv = free_vars(slot)
    if var is None or var not in fv:
        if fv and fv <= set(symbolic):
            return SlotForm("expr", expr=slot)
        if fv:
            raise OutsideFragment("a barrier slot that depends on a symbolic constant", span)
        return SlotForm("const", value=int(evaluate(slot, {})))
    if fv - {var}:
        return _rot_with_symbolic_offset(var, slot, fv - {var}, symbolic, span)
    period, vals = _periodic(lambda r: int(evaluate(slot, {var: r})), "a barrier slot", span)
    if period > 1 and sorted(vals) == list(range(period)) and all(
            vals[e] == (vals[0] + e) % period for e in range(period)):
        return SlotForm("rot", offset=vals[0], size=period)
    if period == 1:
        return SlotForm("const", value=vals[0])
    return SlotForm("table", size=period, values=vals)


def _rot_with_symbolic_offset(var: str, slot: ir.Expr, others: set, symbolic, span) -> SlotForm:
    """A ring cursor that entered its loop at a value depending on the symbolic constants (a persistent
    kernel's stage entering tile t is t * K_TILES % STAGES): `(offset + r) % size` with the offset the slot
    at r = 0, checked at several values of the constants."""
    fail = OutsideFragment("a barrier slot that depends on both the loop variable and a symbolic constant "
                           "other than as a rotating ring cursor", span)
    if not others <= set(symbolic):
        raise fail
    offset = substitute(slot, {var: ir.Const(0, "int32")})
    size = None
    for value in (1, 2, 3, 4, 5, 7, 11, 13):
        env = dict.fromkeys(others, value)
        period, vals = _periodic(lambda r, env=env: int(evaluate(slot, {**env, var: r})), "a barrier slot", span)
        off = int(evaluate(offset, env))
        if period < 2 or size not in (None, period) or any(vals[e] != (off + e) % period for e in range(period)):
            raise fail
        size = period
    assert size is not None                     # the loop above ran at least once
    return SlotForm("rot", size=size, expr=offset)


# ---------------------------------------------------------------------------------- layout
@dataclass
class Step:
    proc: int
    index: int
    cmd: Command
    guard: ir.Expr | None
    block: "Block"
    offset: int


@dataclass
class Block:
    kind: str                   # straight | loop
    length: int                 # straight: commands; loop: body length B
    var: str | None = None
    start: ir.Expr | None = None
    stop: ir.Expr | None = None
    trips: object = None        # z3 term: max(0, stop - start)
    steps: list = field(default_factory=list)


def block_index(proc, block) -> int:
    """The index of `block` among its warp's blocks (by identity: blocks of different warps compare equal)."""
    return next(i for i, b in enumerate(proc.blocks) if b is block)


@dataclass
class Proc:
    warp: int
    blocks: list
    steps: list


def layout(warp: int, items: tuple, sizes: Terms, symbolic, lows: dict | None = None) -> Proc:
    """Blocks and steps of one warp; `sizes` builds terms over the symbolic constants (the model's shared ones:
    the quotients a trip count divides go with the sizes' definitions); `lows`: their lower bounds."""
    t = sizes
    blocks: list[Block] = []
    steps: list[Step] = []
    pending: list = []

    def flush():
        if not pending:
            return
        b = Block("straight", len(pending))
        for off, (cmd, guard) in enumerate(pending):
            if guard is not None and free_vars(guard) - set(symbolic):
                raise OutsideFragment("a guard on a variable outside any loop", cmd.span)
            st = Step(0, len(steps), cmd, guard, b, off)
            b.steps.append(st)
            steps.append(st)
        blocks.append(b)
        pending.clear()

    for item in items:
        if isinstance(item, Loop):
            flush()
            body = _flatten(item.body, None, item.var)
            if not body:
                continue
            start, stop = t.int_of(item.start), t.int_of(item.stop)
            trips = _trips(start, stop, t, lows or {})
            b = Block("loop", len(body), item.var, item.start, item.stop, trips)
            for off, (cmd, guard) in enumerate(body):
                st = Step(0, len(steps), cmd, guard, b, off)
                b.steps.append(st)
                steps.append(st)
            blocks.append(b)
        else:
            pending.extend(_flatten((item,), None, None))
    flush()
    for st in steps:
        st.proc = warp
    return Proc(warp, blocks, steps)


def _trips(start, stop, sizes: Terms, lows: dict):
    """max(0, stop - start); just stop - start when that is an affine term in the sizes with nonnegative
    coefficients and nonnegative at their lower bounds (so for every size in range)."""
    n = stop - start
    form = affine(n)
    if form is not None:
        coeffs, const = form
        names = {v.get_id(): name for name, v in sizes.names.items()}
        if all(i in names and c >= 0 and names[i] in lows for i, (_, c) in coeffs.items()) and \
                const + sum(c * lows[names[i]] for i, (_, c) in coeffs.items()) >= 0:
            return n
    return z3.If(n > 0, n, 0)


def _flatten(items, guard, loop_var) -> list:
    out = []
    for item in items:
        if isinstance(item, Command):
            out.append((item, guard))
        elif isinstance(item, Guarded):
            out.extend(_flatten(item.body, conj(guard, item.cond), loop_var))
        elif isinstance(item, Loop):
            if loop_var is None:
                raise OutsideFragment("a loop inside a guarded straight-line region", item.span)
            try:
                lo, hi = int(evaluate(item.start, {})), int(evaluate(item.stop, {}))
            except KeyError:
                raise OutsideFragment("a nested loop with a symbolic trip count", item.span,
                                      "keep inner trip counts concrete, or make the outer loop concrete") from None
            if hi - lo > NESTED_UNROLL:
                raise OutsideFragment(f"a nested loop of {hi - lo} iterations", item.span)
            for i in range(lo, hi):
                body = [_subst_item(x, item.var, i) for x in item.body]
                out.extend(_flatten(body, guard, loop_var))
        else:
            raise OutsideFragment(f"skeleton item {type(item).__name__}")
    return out


def _subst_item(item, var: str, value: int):
    if isinstance(item, Command):
        return Command(item.kind, item.family, substitute(item.slot, {var: value}),
                       None if item.parity is None else substitute(item.parity, {var: value}), item.units,
                       item.site, item.span, item.text)
    if isinstance(item, Guarded):
        return Guarded(substitute(item.cond, {var: value}), tuple(_subst_item(x, var, value) for x in item.body))
    if isinstance(item, Loop):
        return Loop(item.var, substitute(item.start, {var: value}), substitute(item.stop, {var: value}),
                    tuple(_subst_item(x, var, value) for x in item.body), item.span)
    return item
