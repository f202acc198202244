"""IR expressions -> Python closures `f(w) -> value` (compiled once per run).

Assumes names are unique in the IR (the builder guarantees it) and that module
constants and scalar parameters are known at compile time.  A closure returns a
warp-uniform scalar where it can (constants, parameters, `threadIdx.x // 32` and
other thread-index forms that are equal across a warp, loads at a uniform
address) and a 32-lane numpy vector otherwise.  Readable form of the hand-made
fast paths: `binop(op)(fa(w), fb(w))`; tests compare both.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

import ir
from ir import dtypes as dt

from . import expr_cse, expr_memo
from . import values as V
from .errors import EngineError, UnsupportedTIRxError

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_OPERATORS = (ir.BinOp, ir.UnaryOp, ir.Cast, ir.Select)


class BufferInfo:
    """Static facts about one buffer for this run (shapes resolved to ints)."""

    __slots__ = ("name", "space", "dtype", "np_dtype", "itemsize", "bits", "shape", "strides", "numel", "alloc",
                 "offset", "slot", "span")

    def __init__(self, name, space, dtype, shape, alloc, offset, slot, span):
        self.name = name
        self.space = space                       # "global" | "shared" | "local"
        self.dtype = dtype
        # sub-byte elements (float4_e2m1fn, two per byte) are stored as bytes; only their addresses are modeled
        self.bits = ir.dtypes.bits(dtype) if dtype in ir.dtypes.SUBBYTE_TYPES else 0
        self.np_dtype = np.dtype(np.uint8 if self.bits else V.NP_DTYPE[dtype])
        self.itemsize = self.np_dtype.itemsize if dtype != "bool" else 1
        self.shape = shape
        strides, acc = [], 1
        for extent in reversed(shape):
            strides.append(acc)
            acc *= extent
        self.strides = tuple(reversed(strides))
        self.numel = acc
        self.alloc = alloc                       # root allocation name (global param or shared allocation)
        self.offset = offset                     # byte offset of element 0 in the root allocation
        self.slot = slot
        self.span = span


class ExprCompiler:
    def __init__(self, func: ir.PrimFunc, constants: dict, scalars: dict, buffers: dict[str, BufferInfo],
                 block: tuple[int, int, int], ops):
        self.func = func
        self.constants = constants
        self.scalars = scalars
        self.buffers = buffers
        self.block = block
        self.slots: dict[str, int] = {}
        self.ops = ops                  # the op compiler (modelcheck.numsim.ops)
        self.one_d = block[1] == 1 and block[2] == 1
        self._pure_parent: tuple | None = None     # inputs of the pure expression being compiled (expr_memo)
        self._pure_seen: dict = {}
        self._depth = 0                 # nesting of expr() calls: 0 at an expression's root (expr_cse)
        self._shared: dict = {}         # repeated subtree -> its cell, while its root compiles (expr_cse)
        self._cells: list = []
        self._reads: list[list] = []    # register reads compiled inside the occurrences being compiled
        self._registers: dict[str, tuple[int, int]] = {}    # expr_memo input name -> (local slot, index)

    # ------------------------------------------------------------------ helpers
    def slot(self, name: str) -> int:
        s = self.slots.get(name)
        if s is None:
            s = self.slots[name] = len(self.slots)
        return s

    def const_value(self, e: ir.Expr):
        """The value of `e` if it is a compile-time constant, else None."""
        if isinstance(e, ir.Const):
            return V.scalar_of(e.dtype, e.value)
        if isinstance(e, ir.ConstRef):
            return V.scalar_of(e.dtype, self.constants[e.name])
        if isinstance(e, ir.Var) and e.name in self.scalars:
            return self.scalars[e.name]
        return None

    def is_tid(self, e: ir.Expr) -> bool:
        return isinstance(e, ir.ThreadIndex) and e.tag == "threadIdx.x" and self.one_d

    # ------------------------------------------------------------------ entry
    def expr(self, e: ir.Expr):
        c = self.const_value(e)
        if c is not None:
            return lambda w, _c=c: _c
        if self._depth == 0:
            return self._root(e)
        if self._shared and isinstance(e, _OPERATORS) and e in self._shared:
            k = self._shared[e]
            self._reads.append([])
            try:
                fn = self._node(e)
            finally:
                reads = self._reads.pop()
            if self._reads:         # the enclosing occurrence reads them too
                self._reads[-1].extend(reads)
            return expr_cse.shared(fn, self._cells, k, reads)
        fn = self._node(e)
        if self._reads and isinstance(e, ir.Load):
            self._reads[-1].append(fn)
        return fn

    def _root(self, e: ir.Expr):
        """An expression compiled from outside: repeated subtrees share one value per evaluation (expr_cse)."""
        saved = self._shared, self._cells
        repeated = expr_cse.plan(e, self.const_value, self._register_read)
        self._shared = {node: k for k, node in enumerate(repeated)}
        self._cells = cells = [None] * len(repeated)
        self._depth += 1
        try:
            fn = self._node(e)
        finally:
            self._depth -= 1
            self._shared, self._cells = saved
        return expr_cse.fresh(fn, cells) if cells else fn

    def _register_read(self, e: ir.Load) -> bool:
        info = self.buffers.get(e.buffer)
        return info is not None and info.space == "local" and not info.bits \
            and info.name not in self.ops.cc.async_destinations \
            and all(self.const_value(i) is not None for i in e.indices)

    def _node(self, e: ir.Expr):
        self._depth += 1
        try:
            return self._compile(e)
        finally:
            self._depth -= 1

    def _compile(self, e: ir.Expr):
        method = getattr(self, "_" + type(e).__name__)
        if not isinstance(e, _OPERATORS):
            parent, self._pure_parent = self._pure_parent, None
            try:
                return method(e)
            finally:
                self._pure_parent = parent
        pure = expr_memo.inputs(e, self.const_value, self._pure_seen, self._register_input)
        parent, self._pure_parent = self._pure_parent, pure
        try:
            fn = method(e)
        finally:
            self._pure_parent = parent
        # kept values where a pure part reads fewer inputs than the whole (the whole changes more often)
        if pure is not None and pure[2] >= 2 and (
                parent is None or set(pure[0]) != set(parent[0]) or set(pure[1]) != set(parent[1])):
            regs = [self._registers[n] for n in pure[0] if n in self._registers]
            return expr_memo.memoized(fn, [self.slot(n) for n in pure[0] if n not in self._registers], pure[1],
                                      regs)
        return fn

    def _register_input(self, e: ir.Load) -> str | None:
        """A read of a register element at constant indices as an input of a pure expression (expr_memo)."""
        if not self._register_read(e):
            return None
        info = self.buffers[e.buffer]
        flat = sum(int(self.const_value(i)) * s for i, s in zip(e.indices, info.strides))
        if not 0 <= flat < info.numel:
            return None                 # out of bounds: the load raises it
        name = expr_memo.register_name(info.name, flat)
        self._registers[name] = (info.slot, flat)
        return name

    def _Var(self, e: ir.Var):
        s = self.slot(e.name)
        return lambda w: w.env[s]

    def _ConstRef(self, e):  # pragma: no cover - handled by const_value
        raise AssertionError

    def _StrConst(self, e: ir.StrConst):
        return lambda w, _v=e.value: _v

    def _ThreadIndex(self, e: ir.ThreadIndex):
        tag = e.tag
        if tag.startswith("blockIdx"):
            k = "xyz".index(tag[-1])
            return lambda w: w.block_idx[k]
        if tag.startswith("clusterCtaIdx"):
            k = "xyz".index(tag[-1])
            return lambda w: w.rt.cluster_idx[k]
        k = "xyz".index(tag[-1])
        # one array per warp index, shared by every CTA's warp of that index (block dimensions are fixed for the
        # compiled program): the values kept by expr_memo, keyed by identity, serve every CTA
        shared: dict = {}

        def tid(w):
            if w.COHORT:
                return w.tid if k == 0 else w.tid_yz[k - 1]
            t = shared.get(w.index)
            if t is None:
                t = shared[w.index] = w.tid if k == 0 else w.tid_yz[k - 1]
            return t
        return tid

    # ------------------------------------------------------------------ operators
    def _BinOp(self, e: ir.BinOp):
        op = e.op
        special = self._thread_uniform(e)
        if special is not None:
            return special
        fa, fb = self.expr(e.a), self.expr(e.b)
        cb = self.const_value(e.b)
        operand = e.a.dtype
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return _compare(op, fa, fb, cb)
        if op in ("and", "or"):
            return _logical(op == "and", fa, fb)
        if operand in ("int32",) and op in ("+", "-", "*"):
            return _int32_arith(op, fa, fb, cb)
        if cb is not None and op in ("//", "%") and dt.is_integral(operand) and operand != "bool" \
                and not isinstance(cb, bool) and cb > 0:
            # floor division/modulo by a positive constant: Python's and numpy's // and % are TIR's
            # floordiv/floormod, and the result cannot overflow
            if op == "//":
                return lambda w: fa(w) // cb
            return lambda w: fa(w) % cb
        f = V.binop(op, operand, e.dtype)
        if cb is not None:
            if op in ("//", "%", "tdiv", "tmod") and dt.is_integral(operand) and cb == 0:
                span = e.span

                def divzero(w):
                    raise EngineError("division_by_zero", "integer division by zero", span)
                return divzero

            def fc(w):
                return f(fa(w), cb)
            return _guard_div(fc, e) if op in ("//", "%", "tdiv", "tmod") else fc

        if op in ("//", "%", "tdiv", "tmod"):
            span = e.span

            def fdiv(w):
                a, b = fa(w), fb(w)
                try:
                    return f(a, b)
                except V.DivisionByZero as err:
                    # masked-off lanes never fault: `if d != 0: q = n // d` divides only where d != 0
                    if type(b) is np.ndarray and w.mask is not None and not (b[w.mask] == 0).any():
                        return f(a, np.where(w.mask, b, np.ones_like(b)))
                    raise EngineError("division_by_zero", str(err), span) from None
            return fdiv

        def ff(w):
            return f(fa(w), fb(w))
        return ff

    def _thread_uniform(self, e: ir.BinOp):
        """threadIdx.x forms that are equal across a warp: x // 32k, x >> (5+k), x < 32k, x >= 32k."""
        if not self.is_tid(e.a):
            return None
        c = self.const_value(e.b)
        if e.op == "//" and c is not None and c > 0 and c % 32 == 0:
            return lambda w: w.warp_base // c
        if e.op == ">>" and c is not None and c >= 5:
            return lambda w: w.warp_base >> c
        if c is not None and not isinstance(c, bool) and e.op == "&" and c >= 31 and (c + 1) & c == 0:
            c, op = c + 1, "%"          # x & (2**m - 1) is x % 2**m for x >= 0 (lowered code's `tid & 31`)
        else:
            op = e.op
        if op == "%" and c is not None and c > 0 and c % 32 == 0:
            # the lane id (c = 32) or a lane's place in a group of warps: one read-only array per value, shared
            # by the warps that have it (expr_memo keys by identity)
            shared: dict = {}

            def lane_in_group(w):
                base = w.warp_base % c
                if w.COHORT:
                    return base + w.lane
                v = shared.get(base)
                if v is None:
                    v = shared[base] = base + w.lane
                    v.flags.writeable = False
                return v
            return lane_in_group
        if e.op in ("<", ">=", "<=", ">"):
            fb = self.expr(e.b)
            # x < k and x >= k are uniform when k is a multiple of 32; x <= k, x > k when k + 1 is
            shift = 0 if e.op in ("<", ">=") else 1
            less = e.op in ("<", "<=")

            def cmp(w):
                k = fb(w)
                if type(k) is not np.ndarray and (k + shift) % 32 == 0:
                    return (w.warp_base < k + shift) if less else (w.warp_base >= k + shift)
                return (w.tid < k + shift) if less else (w.tid >= k + shift)
            return cmp
        return None

    def _UnaryOp(self, e: ir.UnaryOp):
        fa = self.expr(e.a)
        f = V.unary(e.op, e.a.dtype)
        return lambda w: f(fa(w))

    def _Select(self, e: ir.Select):
        fc, ft, ff = self.expr(e.cond), self.expr(e.true_value), self.expr(e.false_value)
        dtype = e.dtype
        lazy = e.lazy

        def select(w):
            c = fc(w)
            if type(c) is np.ndarray:
                c = V.truthy(c)
                if lazy:    # if_then_else: each side only for the lanes that take it (guarded loads)
                    t, f = _under(ft, w, c), _under(ff, w, ~c)
                else:
                    t, f = ft(w), ff(w)
                if type(t) is not np.ndarray and type(f) is not np.ndarray:
                    npd = V.NP_DTYPE[dtype]     # (c's length: a warp's 32 lanes, or a CTA cohort's)
                    return np.where(c, np.full(c.shape, t, dtype=npd), np.full(c.shape, f, dtype=npd))
                return np.where(c, t, f).astype(V.NP_DTYPE[dtype], copy=False)     # (np.where's own new array)
            if lazy:
                return ft(w) if c else ff(w)
            t, f = ft(w), ff(w)
            return t if c else f
        return select

    def _LetExpr(self, e: ir.LetExpr):
        # the value once, into the variable's slot (names are unique), then the body: a lane-varying value
        # stays a per-lane vector, as a statement `Let`'s does
        slot = self.slot(e.var.name)
        fv, fb = self.expr(e.value), self.expr(e.body)

        def let(w):
            w.env[slot] = fv(w)
            return fb(w)
        return let

    def _Cast(self, e: ir.Cast):
        src, dst = e.value.dtype, e.dtype
        if src in dt.VECTOR_TYPES or dst in dt.VECTOR_TYPES:
            # a vector value is its bytes here: converting one (or broadcasting a scalar) is not modeled
            return self.ops.unsupported(e, f"cast {src} -> {dst}", "a conversion of a vector value")
        fa = self.expr(e.value)
        return lambda w: V.cast(fa(w), src, dst)

    # ------------------------------------------------------------------ memory
    def _Load(self, e: ir.Load):
        info = self.buffers[e.buffer]
        if info.bits:
            return self.ops.unsupported(e, f"load of {info.name}", subbyte_access(info))
        idx = self.flat_index(info, e.indices)
        site = self.ops.site(e, "element load " + info.space)
        if info.space == "local":
            return self.ops.local_load(info, idx, site)
        return self.ops.memory_load(info, idx, site, e.span)

    def flat_index(self, info: BufferInfo, indices) -> Callable:
        fns = [self.expr(i) for i in indices]
        consts = [self.const_value(i) for i in indices]
        strides = info.strides
        if all(c is not None for c in consts):
            flat = sum(int(c) * s for c, s in zip(consts, strides))

            def const(w):
                return flat
            const.const = flat      # type: ignore[attr-defined]  # (element accessors specialise on it)
            return const
        if len(fns) == 1:
            return fns[0]
        pairs = list(zip(fns, strides))
        if len(pairs) in (2, 3) and strides[-1] == 1 and all(dt.is_integral(i.dtype) and i.dtype != "bool"
                                                             for i in indices):
            # the sum below without its `0 +` and `* 1` (copies of a lane vector; for integers the same value):
            # every element access computes one of these, most with two or three indices
            (f0, s0), (f1, s1) = pairs[0], pairs[1]
            if len(pairs) == 2:
                return lambda w: f0(w) * s0 + f1(w)
            f2 = pairs[2][0]
            return lambda w: f0(w) * s0 + f1(w) * s1 + f2(w)

        def flat_fn(w):
            total = 0
            for f, s in pairs:
                total = total + f(w) * s
            return total
        return flat_fn

    def _Address(self, e: ir.Address):
        info = self.buffers[e.buffer]
        idx = self.flat_index(info, e.indices)
        base_fn = self.ops.buffer_base(info)
        size = info.itemsize
        if info.bits:
            return _subbyte_address(info, idx, base_fn, e.span)

        def address(w):
            i = idx(w)
            if type(i) is np.ndarray:
                i = i.astype(np.int64)   # 64-bit addresses: an int32 lane vector would overflow
            return base_fn(w) + i * size
        return address

    # ------------------------------------------------------------------ calls
    def _OpCall(self, e: ir.OpCall):
        fn, blocking = self.ops.compile_call(e)
        if blocking:
            raise UnsupportedTIRxError(e.op, e.span, "a blocking operation inside an expression")
        return fn

    def _Unsupported(self, e: ir.Unsupported):
        return self.ops.unsupported(e, e.name, "not in the modeled set of operations")


def nbytes(info: BufferInfo) -> int:
    """Bytes a buffer covers (sub-byte elements packed)."""
    return (info.numel * info.bits + 7) // 8 if info.bits else info.numel * info.itemsize


def subbyte_access(info: BufferInfo) -> str:
    return f"loads and stores of {info.dtype} elements ({8 // info.bits} per byte) are not modeled; their addresses are"


def _subbyte_address(info: BufferInfo, idx, base_fn, span):
    """`&buf[i]` of packed sub-byte elements: the byte holding element i, which must start a byte."""
    bits = info.bits

    def address(w):
        i = idx(w)
        if type(i) is np.ndarray:
            i = i.astype(np.int64)
        if np.any((i * bits) % 8):
            raise UnsupportedTIRxError(f"address of {info.name}", span, f"an element of {info.dtype} that does not "
                                                                        f"start a byte has no byte address")
        return base_fn(w) + (i * bits) // 8
    return address


def _logical(is_and, fa, fb):
    """`a and b` / `a or b` short-circuit per lane like the generated C (`i < n and x[i] > 0` guards the
    load): `b` is evaluated only for the lanes whose `a` does not decide."""
    def f(w):
        a = fa(w)
        if type(a) is not np.ndarray:
            if bool(a) != is_and:
                return not is_and
            return V.truthy(fb(w))
        a = V.truthy(a)
        b = V.truthy(_under(fb, w, a if is_and else ~a))
        return (a & b) if is_and else (a | b)
    return f


def _under(fn, w, lanes):
    """`fn(w)` evaluated for the active lanes in `lanes` only (0 when no lane is left)."""
    saved = w.mask
    m = (w.FULL if saved is None else saved) & lanes
    if not V.nnz(m):
        return 0
    w.mask = m
    try:
        return fn(w)
    finally:
        w.mask = saved


def _guard_div(f, e):
    span = e.span

    def guarded(w):
        try:
            return f(w)
        except V.DivisionByZero as err:
            raise EngineError("division_by_zero", str(err), span) from None
    return guarded


def _compare(op, fa, fb, cb):
    if cb is not None:
        if op == "==":
            return lambda w: fa(w) == cb
        if op == "!=":
            return lambda w: fa(w) != cb
        if op == "<":
            return lambda w: fa(w) < cb
        if op == "<=":
            return lambda w: fa(w) <= cb
        if op == ">":
            return lambda w: fa(w) > cb
        return lambda w: fa(w) >= cb
    if op == "==":
        return lambda w: fa(w) == fb(w)
    if op == "!=":
        return lambda w: fa(w) != fb(w)
    if op == "<":
        return lambda w: fa(w) < fb(w)
    if op == "<=":
        return lambda w: fa(w) <= fb(w)
    if op == ">":
        return lambda w: fa(w) > fb(w)
    return lambda w: fa(w) >= fb(w)


def _int32_arith(op, fa, fb, cb):
    """int32 + - * with wraparound; numpy int32 vectors wrap by themselves."""
    lo, hi = _INT32_MIN, _INT32_MAX
    wrap = V.wrap_int
    if op == "+":
        if cb is not None:
            def f(w):
                r = fa(w) + cb
                return r if type(r) is np.ndarray or lo <= r <= hi else wrap(r, "int32")
            return f

        def f(w):
            r = fa(w) + fb(w)
            return r if type(r) is np.ndarray or lo <= r <= hi else wrap(r, "int32")
        return f
    if op == "-":
        def f(w):
            r = fa(w) - fb(w)
            return r if type(r) is np.ndarray or lo <= r <= hi else wrap(r, "int32")
        return f

    def f(w):
        r = fa(w) * fb(w)
        return r if type(r) is np.ndarray or lo <= r <= hi else wrap(r, "int32")
    return f
