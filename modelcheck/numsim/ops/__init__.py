"""Compiling modeled operations (`ir.OpCall`) to closures, one module per op family.

Each family module exposes `HANDLERS: {spec name: compile function}`; a compile
function takes `(ctx, call, info)` and returns `(fn, blocking)` where `fn(w)` runs
the operation for the warp's active lanes (and returns its value, if any) and
`blocking` says whether `fn` is a generator that may yield `Wait`/`Poll`.  An op
outside the modeled set, or one the registry marks unsupported, compiles to a
closure that raises `UnsupportedTIRxError` when executed — never a silent skip.
"""
from __future__ import annotations

import numpy as np

import ir

from .. import pointers, register_views, registers
from .. import values as V
from ..errors import EngineError, UnsupportedTIRxError
from ..trace import Site
from .access import Accessors


def family_modules() -> tuple:
    """The op family modules, each with its `HANDLERS` (one list, so compiling and the static census agree)."""
    from . import (async_copy, barrier, clc, cluster, cuda_float, encode, fence, fragments, mbarrier, memory, misc,
                   ptx_bits, ptx_math, st_async, tcgen05, tma, tma_reduce, tmap, umma, wait_until, warp, wgmma)
    return (memory, mbarrier, barrier, cluster, warp, fragments, async_copy, tma, fence, misc, tcgen05, umma, ptx_math,
            cuda_float, ptx_bits, encode, clc, wgmma, st_async, wait_until, tmap, tma_reduce)


# operations that dereference their address operands only to read (no address escapes into a register or to
# memory): computing a global buffer's address for one of them does not make the buffer writable
_READS_THROUGH = frozenset({"ld", "prefetch", "applypriority"})


class OpContext:
    """What op compile functions use: expression closures, sites, accessors, buffer facts."""

    def __init__(self, compiler):
        self.cc = compiler
        self.sites: list[Site] = []
        self.unsupported_sites: dict[int, tuple[str, str]] = {}
        self.acc = Accessors(compiler)
        self.source_lines = (compiler.func.source or "").splitlines()
        self.handlers = {}
        for module in family_modules():
            self.handlers.update(module.HANDLERS)

    # -- sites
    def site(self, node: ir.Node, op: str) -> int:
        span = node.span
        text = ""
        if span is not None and 1 <= span.line <= len(self.source_lines):
            text = self.source_lines[span.line - 1].strip()
        sid = len(self.sites)
        self.sites.append(Site(sid, op, span, text))
        return sid

    def expr(self, e: ir.Expr):
        return self.cc.exprs.expr(e)

    def unsupported(self, node: ir.Node, name: str, why: str):
        """The closure of an operation outside the modeled set: raises `UnsupportedTIRxError` when run.  Every
        such site is listed (`self.unsupported_sites`), so one these inputs never reach is still reported."""
        site = self.site(node, name)
        self.unsupported_sites[site] = (name, why)
        span = node.span

        def fn(w):
            w.eng.unsupported_reached.add(site)
            raise UnsupportedTIRxError(name, span, why)
        return fn

    def const(self, e: ir.Expr):
        return self.cc.exprs.const_value(e)

    # -- element access (used by the expression and statement compilers)
    def local_load(self, info, idx, site, span=None):
        return self.acc.local_load(info, idx, site, span)

    def memory_load(self, info, idx, site, span):
        if info.space == "pointer":
            return pointers.load(info, idx, site, span)
        if info.space == "register_view":
            return register_views.load(info, self.cc.buffers[info.alloc], idx, site, span,
                                       info.alloc in self.cc.async_destinations)
        fn = self.acc.memory_load(info, idx, site, span)
        return fn if self.cc.wrap_access is None else self.cc.wrap_access(info, fn, idx, None, site)   # a cohort

    def memory_store(self, info, idx, value, site, span):
        if info.space == "global":
            self.cc.written_globals.add(info.alloc)
        if info.space == "pointer":
            return pointers.store(info, idx, value, site, span)
        if info.space == "register_view":
            return register_views.store(info, self.cc.buffers[info.alloc], idx, value, site, span,
                                        info.alloc in self.cc.async_destinations)
        fn = self.acc.memory_store(info, idx, value, site, span)
        return fn if self.cc.wrap_access is None else self.cc.wrap_access(info, fn, idx, value, site)  # a cohort

    def buffer_base(self, info):
        if info.space == "global":
            self.cc.written_globals.add(info.alloc)     # an address escapes: any op may write through it
        if info.space == "pointer":     # resolved when the buffer was declared, per warp
            return lambda w: w.env[info.slot]
        base = self.acc.base_address(info)
        return lambda w: base

    def lvalue(self, e: ir.Expr, what: str):
        """A writer `set(w, value)` for a destination operand (a register element)."""
        if not isinstance(e, ir.Load):
            raise UnsupportedTIRxError(what, e.span, "destination operand is not a buffer element")
        info = self.cc.buffers[e.buffer]
        idx = self.cc.exprs.flat_index(info, e.indices)
        holder = [None]
        if info.space == "local":
            watched = info.name in self.cc.async_destinations
            store_site = self.site(e, "element store local") if watched else None
            fast = _register_setter(self.cc.exprs, info, e.indices, store_site)
            if fast is not None:
                fast.dtype = info.dtype
                fast.slot = info.slot
                fast.index = idx
                return fast
            store = self.acc.local_store(info, idx, lambda w: holder[0], e.span,
                                         site=store_site)
        else:
            if info.space == "register_view" and info.name in self.cc.async_destinations:
                return self._view_register(info, e, idx, what)
            site = self.site(e, "element store " + info.space)
            store = self.memory_store(info, idx, lambda w: holder[0], site, e.span)

        def write(w, value):
            holder[0] = value
            store(w)
            holder[0] = None
        # a store closure carries what its callers need as attributes (mypy does not model function attributes)
        write.dtype = info.dtype  # type: ignore[attr-defined]
        # a local register's place, for ops whose results arrive later (modelcheck.numsim.registers)
        write.slot = info.slot if info.space == "local" else None  # type: ignore[attr-defined]
        write.index = idx  # type: ignore[attr-defined]
        return write

    def _view_register(self, info, e: ir.Load, idx, what: str):
        """The root register a view element names, as the writer of an asynchronous result: the result's bits
        land in it unchanged (`.dtype` the root's, so a b32 result is reinterpreted, not converted).  A view
        whose element does not cover exactly one root register is not modeled."""
        root = self.cc.buffers[info.alloc]
        size = root.itemsize
        if info.itemsize != size or info.offset % size:
            raise UnsupportedTIRxError(what, e.span, f"register view {info.name} ({info.dtype}) over {root.name} "
                                                     f"({root.dtype}) as the destination of an asynchronous result: "
                                                     f"an element spanning part of a register or several")
        first = info.offset // size
        index = (lambda w: idx(w) + first) if first else idx
        holder = [None]
        store = self.acc.local_store(root, index, lambda w: holder[0], e.span,
                                     site=self.site(e, "element store local"))

        def write(w, value):
            holder[0] = value
            store(w)
            holder[0] = None
        write.dtype = root.dtype  # type: ignore[attr-defined]
        write.slot = root.slot  # type: ignore[attr-defined]
        write.index = index  # type: ignore[attr-defined]
        return write

    # -- dispatch
    def compile_call(self, call: ir.OpCall):
        info = ir.classify(call.op, tuple(o.dtype for o in call.operands))
        if info is None:
            return self.unsupported(call, call.op, "not in the modeled set of operations"), False
        if not info.supported:
            return self.unsupported(call, call.op, info.why_unsupported), False
        handler = self.handlers.get(info.name)
        if handler is None:
            return self.unsupported(call, call.op, _pending_reason(info)), False
        written = set(self.cc.written_globals) if info.name in _READS_THROUGH else None
        fn, blocking = handler(self, call, info)
        if written is not None:
            # the addresses it computed only reach its own reads: their buffers stay unwritten (bound read-only,
            # `RunInfo.unwritten`), unless an operand is itself an element of one (a destination)
            self.cc.written_globals = written | {self.cc.buffers[o.buffer].alloc for o in call.operands
                                                 if isinstance(o, ir.Load) and o.buffer in self.cc.buffers
                                                 and self.cc.buffers[o.buffer].space == "global"}
        if self.cc.wrap_op is not None:       # a CTA cohort's program (numsim.cohort)
            fn = self.cc.wrap_op(info, fn, blocking)
        if call.pred is not None:
            fn = _predicated(self.expr(call.pred), fn, blocking)
        return fn, blocking


def unmodeled_operations(func: ir.PrimFunc) -> list[tuple[str, str, object]]:
    """Every operation of `func` outside the modeled set, reached or not: (name, why, span) in source order.
    A run reports the ones it executes (incomplete) or not (review); `prove` is incomplete with any."""
    handlers = set()
    for module in family_modules():
        handlers.update(module.HANDLERS)
    out: list[tuple[str, str, object]] = []
    for node in ir.walk(func.body):
        if isinstance(node, ir.Unsupported):
            out.append((node.name, "not in the modeled set of operations", node.span))
        elif isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is None:
                out.append((node.op, "not in the modeled set of operations", node.span))
            elif not info.supported:
                out.append((node.op, info.why_unsupported, node.span))
            elif info.name not in handlers:
                out.append((node.op, _pending_reason(info), node.span))
    return out


def _register_setter(exprs, info, indices, site=None):
    """`set(w, value)` for a register element at a constant in-range index: what `Accessors.local_store` does for
    such an element, without its index and value closures (most PTX destination operands are of this kind); `site`:
    the element may hold a pending async result (checked before the write, as there).  None for any other
    element."""
    consts = [exprs.const_value(i) for i in indices]
    if any(c is None for c in consts):
        return None
    flat = sum(int(c) * s for c, s in zip(consts, info.strides))
    if not 0 <= flat < info.numel:
        return None                 # out of bounds: the general store raises it when (if) it runs
    slot, dtype, name = info.slot, info.dtype, info.name
    watched = site is not None

    def set_(w, v):
        vals = w.local[slot]
        w.effects += 1
        if watched and w.async_regs:
            registers.check(w, slot, flat, site, "write", name)
        if w.mask is None:
            vals[flat] = v
        else:
            old = vals[flat]
            n = w.mask.size
            vals[flat] = np.where(w.mask, V.as_vec(v, dtype, n), V.as_vec(0 if old is None else old, dtype, n))
    return set_


def async_destinations(func: ir.PrimFunc) -> frozenset[str]:
    """Names of the local buffers some op of `func` writes asynchronously (its results arrive at a later
    wait): the destination registers of tcgen05.ld and the accumulators of wgmma.mma_async."""
    from .tcgen05 import ld_destinations
    from .wgmma import accumulator_buffers
    names: set[str] = set()
    for node in ir.walk(func.body):
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is not None and info.supported and info.name == "tcgen05.ld":
                names.update(ld_destinations(node, info))
            elif info is not None and info.supported and info.name == "wgmma.mma_async":
                names.update(accumulator_buffers(node, info))
    # a register view written asynchronously holds its result in its root's registers: watch the root too
    views = {n.buffer.name: n.buffer.data for n in ir.walk(func.body)
             if isinstance(n, ir.DeclBuffer) and n.buffer.data is not None}
    for name in list(names):
        while name in views:
            name = views[name]
            names.add(name)
    return frozenset(names)


def _pending_reason(info) -> str:
    return f"no simulator implementation for {info.name} ({info.family})"




def _predicated(pred, fn, blocking):
    """Run `fn` only for the lanes whose guard predicate holds (`@p op`)."""
    if blocking:
        def gen(w):
            p = pred(w)
            saved = w.mask
            if type(p) is np.ndarray:
                m = w.active() & V.truthy(p)
                if not m.any():
                    return
                w.mask = m
            elif not p:
                return
            try:
                result = yield from fn(w)
            finally:
                w.mask = saved
            return result
        return gen

    def run(w):
        p = pred(w)
        saved = w.mask
        if type(p) is np.ndarray:
            m = w.active() & V.truthy(p)
            if not m.any():
                return None
            w.mask = m
        elif not p:
            return None
        try:
            return fn(w)
        finally:
            w.mask = saved
    return run


def groups(value, w):
    """Split the active lanes by operand value: [(value, lane mask or None for all, lane count)]."""
    if type(value) is not np.ndarray:
        return [(int(value) if not isinstance(value, (float, np.floating)) else value, w.mask, w.active_count())]
    active = w.active()
    vals = value[active]
    uniq = np.unique(vals)
    if uniq.size == 1:
        return [(int(uniq[0]), w.mask, int(vals.size))]
    out = []
    for u in uniq:
        m = active & (value == u)
        out.append((int(u), m, int(V.nnz(m))))
    return out


def uniform(value, w, what: str, span):
    """A warp-uniform operand (the same on every active lane)."""
    if type(value) is not np.ndarray:
        return value
    vals = value[w.active()]
    if vals.size and (vals == vals[0]).all():
        v = vals[0]
        return int(v) if np.issubdtype(vals.dtype, np.integer) or vals.dtype == np.bool_ else v
    raise EngineError("unsupported_operation", f"{what} must be the same on every active lane", span)


def lane_values(value, w) -> list:
    """(lane, value) for each active lane, in lane order."""
    lanes = np.flatnonzero(w.active())
    if type(value) is np.ndarray:
        return [(int(k), value[k]) for k in lanes]
    return [(int(k), value) for k in lanes]


_MEMBERS: dict[int, np.ndarray] = {}


def _members(membermask: int) -> np.ndarray:
    m = _MEMBERS.get(membermask)
    if m is None:
        m = _MEMBERS[membermask] = ((membermask >> V.LANES.astype(np.int64)) & 1).astype(np.bool_)
        m.setflags(write=False)
    return m


def require_full_warp(w, what: str, span, membermask: int = 0xFFFFFFFF, exited_ok: bool = False):
    """`.sync.aligned` and `.sync` collectives need every lane of the member mask active.  With `exited_ok`
    (shfl/vote/redux.sync: PTX waits only for the *non-exited* member threads) a member lane that has
    exited — returned, or left a loop that ends the kernel — is not required."""
    if w.mask is None:
        return      # the whole (full) warp is active
    active = w.mask
    members = _members(membermask)
    if w.full_mask is not None:
        members = members & w.full_mask     # not in place: `members` is the shared cached mask
    if exited_ok and w.exited is not None:
        members = members & ~w.exited
    missing = members & ~active
    if missing.any():
        lanes = [int(k) for k in np.flatnonzero(missing)]
        raise EngineError("warp_collective_divergence",
                          f"{what} needs every lane of member mask {membermask:#010x} active; lanes "
                          f"{_lane_text(lanes)} are not", span, missing_lanes=lanes, membermask=membermask)


def reject_exited_sources(w, src: np.ndarray, what: str, span) -> None:
    """An active lane reading a lane that has exited gets an undefined value (the source thread is not
    active); only reachable with `require_full_warp(..., exited_ok=True)`."""
    if w.exited is None:
        return
    bad = w.active() & w.exited[np.asarray(src, dtype=np.int64) % 32]
    if bad.any():
        lanes = [int(k) for k in np.flatnonzero(bad)]
        gone = sorted({int(src[k]) % 32 for k in lanes})
        raise EngineError("warp_collective_divergence",
                          f"{what}: lanes {_lane_text(lanes)} read lanes {_lane_text(gone)}, which have exited "
                          "(the value is undefined)", span, missing_lanes=gone)


def _lane_text(lanes: list[int]) -> str:
    if len(lanes) > 6:
        return f"{lanes[0]}..{lanes[-1]} ({len(lanes)} lanes)"
    return ", ".join(map(str, lanes))


def name_of(w, addr: int, itemsize: int = 8) -> str:
    """`full[1]` for a shared address inside buffer `full` (for messages)."""
    alloc = w.rt.shared.find(addr, 1) if w is not None else None
    if alloc is None:
        return f"{addr:#x}"
    return f"{alloc.name}[{(addr - alloc.base) // itemsize}]"
