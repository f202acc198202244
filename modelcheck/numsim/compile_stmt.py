"""IR statements -> closures; the compiled `Program` of one run.

Assumes unique binding names and resolved module constants/scalar parameters.
Guarantees: a statement compiles to a plain function `f(w)` unless it can block,
in which case it is a generator function (yielding `Wait`/`Poll` to the scheduler);
control flow runs under lane masks — a divergent `if` runs both sides, a loop runs
while any lane is active, and divergent `break`/`continue` remove lanes from the
loop or the iteration.  While loops yield every `QUANTUM` iterations so spinning
warps let others run; a loop past the iteration budget raises `ResourceLimit`.
"""
from __future__ import annotations

import numpy as np

import ir

from . import pointers
from . import values as V
from .budget import CHECK_EVERY
from .control import (_Break, _Continue, _Return, _if_closure, _left_loop, _next_iteration, _note_iters, _or,
                      _run_for, _run_for_gen)
from .compile_expr import BufferInfo, ExprCompiler, nbytes, subbyte_access
from .errors import EngineError, ResourceLimit, UnsupportedTIRxError
from .memory import SharedLayout
from .ops import OpContext, async_destinations
from .runtime import Loop, Poll
from .schedule import hold

QUANTUM = 64


class Program:
    """A kernel compiled for one launch: `body(w)` is the generator every warp runs."""

    def __init__(self, func, body, sites, buffers, layout, nslots, global_slot, shared_infos, unsupported=None,
                 written_globals=None):
        self.func = func
        # global buffer parameters the kernel may write: stored to, or their address taken (compiled code only;
        # tensor maps are apart).  The others are bound without a private copy (Engine.run).
        self.written_globals = set(written_globals or ())
        self.buffers_alloc = lambda name: buffers[name].alloc      # a buffer's global allocation name
        self.unsupported = unsupported or {}     # site -> (op name, why): operations outside the modeled set
        self.body = body
        self.sites = sites
        self.buffers = buffers
        self.layout = layout
        self.nslots = nslots
        self.global_slot = global_slot
        self.shared_infos = shared_infos


_LEAVES = (ir.Evaluate, ir.Store, ir.Let)


def _with_hold(compiled, sites: tuple):
    """A statement that first waits for the forced schedule to let the warp run it."""
    fn, blocking = compiled
    wait_turn = hold(sites)
    if blocking:
        def run_gen(w):
            yield from wait_turn(w)
            result = yield from fn(w)
            return result
        return run_gen

    def run_plain(w):
        yield from wait_turn(w)
        fn(w)
    return run_plain


_OPERATIONS = (ir.BinOp, ir.UnaryOp, ir.Select, ir.Cast, ir.Load, ir.Address, ir.OpCall, ir.Unsupported)


def cost(*exprs) -> int:
    """Warp-instructions of one statement: 1 plus every operator, memory access and call it evaluates
    (the nearest analogue of the PTX instructions a warp would issue for it)."""
    n = 1
    for e in exprs:
        if e is not None:
            n += sum(1 for node in ir.walk(e) if isinstance(node, _OPERATIONS))
    return n


class Compiler:
    def __init__(self, func: ir.PrimFunc, scalars: dict, block: tuple[int, int, int], hold_sites=None,
                 shared_limit: int | None = None, wrap_op=None, wrap_access=None):
        self.func = func
        self.wrap_op = wrap_op                # (info, fn, blocking) -> fn for every op (numsim.cohort), or None
        self.wrap_access = wrap_access        # (info, fn) -> fn for every element load/store (numsim.cohort)
        self.shared_limit = shared_limit      # the target's shared memory per CTA (sizes a launch-sized pool)
        # sites a forced schedule names (numsim.schedule): statements holding one wait for their turn
        self.hold_sites = hold_sites
        self.constants = func.constant_values
        self.scalars = scalars
        self.layout = SharedLayout()
        self.global_slot: dict[str, int] = {}
        self.buffers: dict[str, BufferInfo] = {}
        self.shared_infos: list[BufferInfo] = []
        self._collect_buffers()
        # local buffers that an op writes asynchronously (numsim.registers): their accesses are checked
        self.async_destinations = async_destinations(func)
        self.written_globals: set[str] = set()     # see Program.written_globals
        self.ops = OpContext(self)
        self.tail_whiles = _tail_whiles(func.body)
        self.exprs = ExprCompiler(func, self.constants, scalars, self.buffers, block, self.ops)
        for info in self.buffers.values():
            if info.space == "pointer":     # its resolved base lives in the warp's environment
                info.slot = self.exprs.slot(pointers.view_slot_name(info.name))

    # ------------------------------------------------------------------ buffers
    def _shape(self, buf: ir.Buffer) -> tuple[int, ...]:
        out = []
        for e in buf.shape:
            v = _static(e, self.constants, self.scalars)
            if v is None:
                raise UnsupportedTIRxError(f"shape of {buf.name}", buf.span,
                                           "buffer extents must be constants or scalar parameters")
            if int(v) < 0:
                raise EngineError("invalid_buffer_shape", f"buffer {buf.name} has a negative extent ({int(v)})",
                                  buf.span, buffer=buf.name, extent=int(v))
            out.append(int(v))
        return tuple(out)

    def _collect_buffers(self) -> None:
        """Every buffer's place: parameters in global memory (under the parameter's name, reached by the
        buffer's name), shared allocations laid out in declaration order, aliases at their root's offset.  A
        zero-length dynamic pool `alloc_buffer((0,), ..., scope="shared.dyn")` that views carve up is as large as its
        largest alias reaches; a sized root keeps its declared size."""
        views = 0   # global view slots: one per parameter and per alias of one
        for p in self.func.params:
            if p.kind == "buffer":
                assert p.buffer is not None     # a buffer parameter always has its buffer
                _check_modeled(p.buffer)
                self.global_slot[p.name] = len(self.global_slot)
                self.buffers[p.buffer.name] = BufferInfo(p.buffer.name, "global", p.dtype, self._shape(p.buffer),
                                                         p.name, 0, views, p.span)
                views += 1
        decls = [node.buffer for node in ir.walk(self.func.body) if isinstance(node, ir.DeclBuffer)]
        extents = {b.name: 0 for b in decls if b.data is None}      # bytes each shared root must cover
        placed: dict[str, tuple[str, int]] = {}                       # alias name -> (root, byte offset)
        # handle lets a buffer may be declared on: a pointer the kernel computes, resolved when declared
        self.pointer_lets = {n.var.name for n in ir.walk(self.func.body) if isinstance(n, ir.Let)
                             and n.var.dtype == "handle"}
        # and tensor maps: a buffer over a map's own bytes (scope "param") reads the tokens tmap_values gives them
        self.pointer_lets |= {p.name for p in self.func.params if p.kind == "handle"}
        self.pointer_lets |= {h.var.name for h in self.func.host if isinstance(h, ir.TensorMapEncode)}
        for b in decls:
            _check_modeled(b, b.data in self.pointer_lets)
            if b.data is None or b.data in self.pointer_lets:
                continue
            root_name, base = placed.get(b.data, (b.data, 0))
            offset = _static(b.byte_offset, self.constants, self.scalars)
            if offset is None:
                raise UnsupportedTIRxError(f"alias {b.name}", b.span,
                                           "alias offsets must be constants or scalar parameters")
            placed[b.name] = (root_name, base + int(offset))
            if root_name in extents:
                size = _nbytes(_numel(self._shape(b)), b.dtype)
                extents[root_name] = max(extents[root_name], base + int(offset) + size)
        local_slot = 0
        launch_sized = None
        for b in decls:
            shape = self._shape(b)
            if b.data in self.pointer_lets:
                info = BufferInfo(b.name, "pointer", b.dtype, shape, b.data, 0, -1, b.span)
            elif b.data is not None:
                root = self.buffers.get(b.data)
                if root is None:
                    raise UnsupportedTIRxError(f"alias {b.name}", b.span, f"aliased buffer {b.data} is unknown")
                offset = int(_static(b.byte_offset, self.constants, self.scalars)) + root.offset
                if root.space == "shared":
                    slot = len(self.shared_infos)
                    info = BufferInfo(b.name, "shared", b.dtype, shape, root.alloc, offset, slot, b.span)
                    self.shared_infos.append(info)
                elif root.space == "global":
                    info = BufferInfo(b.name, "global", b.dtype, shape, root.alloc, offset, views, b.span)
                    views += 1
                else:   # the same registers as another type or shape (numsim.register_views)
                    info = BufferInfo(b.name, "register_view", b.dtype, shape, root.name, offset, root.slot, b.span)
            elif b.scope in ("shared", "shared.dyn"):
                slot = len(self.shared_infos)
                info = BufferInfo(b.name, "shared", b.dtype, shape, b.name, 0, slot, b.span)
                # a zero-length (launch-sized) pool is as large as its views reach; a sized one is the launch's
                # shared memory as declared -- a view declared past its end does not enlarge it, and an access
                # there is out of bounds, as on the GPU
                declared = nbytes(info)
                size = declared if declared else extents.get(b.name, 0)
                self.layout.add(b.name, size, b.align)
                if b.scope == "shared.dyn" and info.numel == 0 and _launch_sized_dynamic_shared(self.func):
                    launch_sized = b.name
                self.shared_infos.append(info)
            elif b.scope == "local":
                info = BufferInfo(b.name, "local", b.dtype, shape, b.name, 0, local_slot, b.span)
                local_slot += 1
            else:
                raise UnsupportedTIRxError(f"buffer {b.name}", b.span, f"scope {b.scope!r} inside the kernel")
            self.buffers[b.name] = info
        last = next(reversed(self.layout.offsets), None)
        if launch_sized is not None and launch_sized == last and self.shared_limit:
            # the launch gives the size: model the largest the target allows, so accesses through views whose
            # offsets lowering folded stay inside it (anything past the hardware limit is still out of bounds)
            grown = max(self.shared_limit - self.layout.offsets[last], self.layout.sizes[last])
            self.layout.sizes[last] = grown
            self.layout.total = self.layout.offsets[last] + grown
            for info in self.shared_infos:
                if info.alloc == last and len(info.shape) == 1:
                    # a flat view's bound is the pool's end: its indices carry the offset lowering folded in
                    room = grown - info.offset
                    info.numel = max(info.numel, room * 8 // info.bits if info.bits else room // info.itemsize)
        for info in self.shared_infos:
            room = self.layout.sizes.get(info.alloc, 0) - info.offset
            if info.alloc != info.name and nbytes(info) > room:
                # a view declared past its pool's end: its elements there are outside the launch's shared memory
                room = max(room, 0)
                info.numel = room * 8 // info.bits if info.bits else room // info.itemsize

    # ------------------------------------------------------------------ program
    def compile(self) -> Program:
        body, blocking = self.block(self.func.body)
        if not blocking:
            plain = body

            def program(w):
                try:
                    plain(w)
                except _Return:
                    pass
                return
                yield  # the program is always a generator
            entry = program
        else:
            def entry(w):
                try:
                    yield from body(w)
                except _Return:
                    pass
        return Program(self.func, entry, self.ops.sites, self.buffers, self.layout, len(self.exprs.slots),
                       self.global_slot, self.shared_infos, self.ops.unsupported_sites, self.written_globals)

    def block(self, stmts):
        compiled = [self.stmt(s) for s in stmts]
        compiled = [c for c in compiled if c is not None]
        if not compiled:
            return (lambda w: None), False
        if len(compiled) == 1:
            return compiled[0]
        if not any(b for _, b in compiled):
            fns = tuple(f for f, _ in compiled)

            def run(w):
                for f in fns:
                    f(w)
            return run, False
        items = tuple(compiled)

        def run_gen(w):
            for f, b in items:
                if b:
                    yield from f(w)
                else:
                    f(w)
        return run_gen, True

    def stmt(self, s: ir.Stmt):
        if self.hold_sites is None or not isinstance(s, _LEAVES):
            return getattr(self, "_" + type(s).__name__)(s)
        lo = len(self.ops.sites)
        out = getattr(self, "_" + type(s).__name__)(s)
        held = self._held(lo)
        if out is None or not held:
            return out
        return _with_hold(out, held), True

    def _held(self, lo: int) -> tuple:
        """The scheduled sites among those compiled since `lo` (none without a forced schedule)."""
        if self.hold_sites is None:
            return ()
        return tuple(i for i in range(lo, len(self.ops.sites)) if i in self.hold_sites)

    # -- simple statements
    def _Evaluate(self, s: ir.Evaluate):
        v = s.value
        if isinstance(v, ir.OpCall):
            fn, blocking = self.ops.compile_call(v)
        else:
            written = set(self.written_globals)
            fn, blocking = self.exprs.expr(v), False
            if isinstance(v, ir.Address):
                self.written_globals = written    # `T.address_of(q[0])` alone: an address computed and dropped
        k = cost(v) - 1 if isinstance(v, ir.OpCall) else cost(v)
        if blocking:
            def run_gen(w):
                w.instr += k
                yield from fn(w)
            return run_gen, True

        def run(w):
            w.instr += k
            fn(w)
        return run, False

    def _Store(self, s: ir.Store):
        info = self.buffers[s.buffer]
        if info.bits:
            return self.ops.unsupported(s, f"store to {info.name}", subbyte_access(info)), False
        idx = self.exprs.flat_index(info, s.indices)
        value = self.exprs.expr(s.value)
        if info.space == "local":
            site = self.ops.site(s, "element store local") if info.name in self.async_destinations else None
            store = self.ops.acc.local_store(info, idx, value, s.span, site=site)
        else:
            site = self.ops.site(s, "element store " + info.space)
            store = self.ops.memory_store(info, idx, value, site, s.span)
        k = cost(s.value, *s.indices)

        def run(w):
            w.instr += k
            store(w)
        return run, False

    def _Let(self, s: ir.Let):
        slot = self.exprs.slot(s.var.name)
        value = self.exprs.expr(s.value)
        k = cost(s.value)

        def run(w):
            w.instr += k
            w.env[slot] = value(w)
        return run, False

    def _DeclBuffer(self, s: ir.DeclBuffer):
        info = self.buffers[s.buffer.name]
        if info.space == "pointer":
            b = s.buffer
            assert b.data is not None       # a pointer view names its handle
            return pointers.declare(info, self.exprs.expr(ir.Var(b.data, "handle")), self.exprs.expr(b.byte_offset),
                                    b.data, s.span), False
        if info.space != "local":
            return None
        slot, numel = info.slot, info.numel

        def run(w):
            w.local[slot] = [None] * numel
        return run, False

    def _Assert(self, s: ir.Assert):
        cond = self.exprs.expr(s.cond)
        message, span = s.message, s.span

        def run(w):
            c = V.truthy(cond(w))
            failed = (not c) if type(c) is not np.ndarray else bool((~c & w.active()).any())
            if failed:
                raise EngineError("assertion_failed", f"assertion failed: {message or 'condition is false'}", span)
        return run, False

    def _Break(self, s):
        def run(w):
            raise _Break
        return run, False

    def _Return(self, s):
        def run(w):
            raise _Return
        return run, False

    def _Continue(self, s):
        def run(w):
            raise _Continue
        return run, False

    # -- control flow
    def _If(self, s: ir.If):
        lo = len(self.ops.sites)
        cond = self.exprs.expr(s.cond)
        held = self._held(lo)
        then_fn, then_b = self.block(s.then_body)
        else_fn, else_b = self.block(s.else_body) if s.else_body else ((lambda w: None), False)
        has_else = bool(s.else_body)
        k = cost(s.cond)
        if held:
            # a scheduled access in the condition: the whole statement waits its turn first
            return _with_hold(_if_closure(cond, then_fn, then_b, else_fn, else_b, has_else, k), held), True
        return _if_closure(cond, then_fn, then_b, else_fn, else_b, has_else, k)

    def _For(self, s: ir.For):
        start, stop, step = self.exprs.expr(s.start), self.exprs.expr(s.stop), self.exprs.expr(s.step)
        slot = self.exprs.slot(s.var.name)
        body, blocking = self.block(s.body)
        span = s.span

        def bounds(w):
            # a lane-varying start or step runs the loop per lane (each lane its own bounds, like a varying stop)
            a, b, st = start(w), stop(w), step(w)
            return (a if type(a) is np.ndarray else int(a)), b, (st if type(st) is np.ndarray else int(st))

        if not blocking:
            def run(w):
                a, b, st = bounds(w)
                _run_for(w, slot, a, b, st, body, span)
            return run, False

        def run_gen(w):
            a, b, st = bounds(w)
            yield from _run_for_gen(w, slot, a, b, st, body, span)
        return run_gen, True

    def _While(self, s: ir.While):
        lo = len(self.ops.sites)
        cond = self.exprs.expr(s.cond)
        held = self._held(lo)
        wait_turn = hold(held) if held else None
        body, blocking = self.block(s.body)
        site = self.ops.site(s, "while")
        span = s.span
        kc = cost(s.cond)      # (not `k`: run_gen's iteration counter)
        # nothing follows this loop before the kernel ends: a lane its condition lets go has exited
        tail = id(s) in self.tail_whiles

        def run_gen(w):
            loop = Loop()
            w.loops.append(loop)
            w.iters.append(0)
            saved = w.mask
            budget = w.eng.loop_budget
            k = 0
            try:
                while True:
                    if wait_turn is not None:
                        yield from wait_turn(w)
                    c = cond(w)
                    w.instr += kc
                    if type(c) is np.ndarray:
                        c = V.truthy(c)
                        stay = w.active() & c
                        if not V.nnz(stay):
                            break
                        if not stay.all() and (w.active() & ~c).any():
                            # lanes that leave by the condition never come back (not even when a
                            # later break makes _next_iteration rebuild the mask from `saved`)
                            loop.brk = _or(loop.brk, w.active() & ~c)
                            if tail:
                                w.exited = _or(w.exited, w.active() & ~c)
                        w.mask = stay if not stay.all() else saved if saved is None else stay
                    elif not c:
                        break
                    try:
                        if blocking:
                            yield from body(w)
                        else:
                            body(w)
                    except _Continue:
                        pass
                    except _Break:
                        loop.brk = _or(loop.brk, w.active())
                    if not _next_iteration(w, loop, saved):
                        break
                    k += 1
                    w.iters[-1] = k
                    if k > budget:
                        raise ResourceLimit("loop_iterations", f"a while loop ran more than {budget} iterations "
                                                               f"at {span}", span=str(span), budget=budget)
                    if w.instr - w.instr_seen >= CHECK_EVERY:
                        w.eng.checkpoint(w)
                    if k % QUANTUM == 0:
                        yield Poll(None, site, "while loop")
            except EngineError as err:
                _note_iters(err, w)
                raise
            finally:
                w.loops.pop()
                w.iters.pop()
                w.mask = saved
            _left_loop(w, saved)
        return run_gen, True


def _tail_whiles(stmts, out: set[int] | None = None) -> set[int]:
    """The `while` loops after which a lane runs no further statement: the last statement of the kernel, or
    of a branch of an `if` in that position (a loop body is not: its end leads to the next iteration)."""
    out = set() if out is None else out
    last = stmts[-1] if stmts else None
    if isinstance(last, ir.While):
        out.add(id(last))
    elif isinstance(last, ir.If):
        _tail_whiles(last.then_body, out)
        _tail_whiles(last.else_body or [], out)
    return out


def _launch_sized_dynamic_shared(func: ir.PrimFunc) -> bool:
    """A lowered kernel (TVM's launch parameters name `tirx.use_dyn_shared_memory`) takes its dynamic shared
    memory size from the host's launch, and its views have lost the offsets that sized the pool: lowering
    folds a view's `elem_offset` into its indices (`buf[(tid >> 5) + 128]` on a view of extent 1)."""
    for key, value in func.attrs:
        if key == "tirx.kernel_launch_params" and "tirx.use_dyn_shared_memory" in str(value):
            return True
    return False


def _check_modeled(b: ir.Buffer, on_pointer: bool = False) -> None:
    """Buffers NumSim cannot lay out: an unmodeled layout, scope or element type -- never guessed.  A buffer on a
    pointer the kernel computes or on a tensor map's bytes (`on_pointer`) is placed when declared
    (numsim.pointers)."""
    if b.layout:
        raise UnsupportedTIRxError(f"buffer {b.name} with layout={b.layout}", b.span,
                                   "buffer layouts other than row-major are not modeled")
    if b.scope in ("param", "pointer") and not on_pointer:
        what = "a tensor-map parameter's bytes" if b.scope == "param" else "a pointer the kernel computed"
        raise UnsupportedTIRxError(f"buffer {b.name}", b.span, f"a buffer over {what} is not modeled")
    if b.dtype not in V.NP_DTYPE and b.dtype not in ir.dtypes.SUBBYTE_TYPES:
        raise UnsupportedTIRxError(f"buffer {b.name} of {b.dtype}", b.span, f"{b.dtype} elements are not modeled")


def _numel(shape) -> int:
    n = 1
    for x in shape:
        n *= x
    return n


def _nbytes(numel: int, dtype: str) -> int:
    bits = ir.dtypes.bits(dtype)
    return (numel * bits + 7) // 8 if dtype in ir.dtypes.SUBBYTE_TYPES else numel * _itemsize(dtype)


def _itemsize(dtype: str) -> int:
    return 1 if dtype == "bool" else np.dtype(V.NP_DTYPE[dtype]).itemsize


def _static(e: ir.Expr, constants: dict, scalars: dict):
    """Evaluate an expression over constants and scalar parameters (None if it needs more)."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.ConstRef):
        return constants.get(e.name)
    if isinstance(e, ir.Var):
        return scalars.get(e.name)
    if isinstance(e, ir.Cast):
        v = _static(e.value, constants, scalars)
        return None if v is None else V.cast(v, e.value.dtype, e.dtype)
    if isinstance(e, ir.BinOp):
        a, b = _static(e.a, constants, scalars), _static(e.b, constants, scalars)
        if a is None or b is None:
            return None
        try:
            return V.binop(e.op, e.a.dtype, e.dtype)(a, b)
        except V.DivisionByZero:
            return None
    return None

