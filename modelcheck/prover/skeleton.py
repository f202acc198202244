"""A kernel's sync skeleton: per warp, the mbarrier and named-barrier commands in loops.

The prover keeps some module constants symbolic (trip counts); everything else is
concrete.  Each warp's body is evaluated with its thread indices bound: conditions on
warp and lane ids resolve (role dispatch, elected lanes — a lane-dependent condition
narrows the lane mask, so an arrive's multiplicity is the number of lanes that run it),
loops with a concrete small trip count unroll, loops whose bounds involve a symbolic
constant (or are long) stay loops over a symbolic iteration variable, and conditions
on loop variables become guards on the commands they enclose.  Data (memory loads and
stores) is dropped; anything that decides control flow or a sync operand from data, or
a construct outside this fragment, raises `OutsideFragment` naming it.

Mutable locals carried across a symbolic loop (PipelineState-style cursors) are
summarized: the carried values of the first iterations are computed concretely, a
closed form is fitted (constant, `x0 + c*k`, `(x0 + k) % D` with its phase
`(p0 + (x0 + k) // D) % 2`), and the fit is proved for every iteration with z3 against
the body's symbolic effect.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import ir
from ir import ops as irops

from .closed_forms import after_loop, summarize
from .exprs import Opaque, OutsideFragment, Sym, apply_op, collapse, is_lanes, to_expr
from .solving import Ledger

UNROLL_LIMIT = 16
LANES = np.arange(32, dtype=np.int64)


# ---------------------------------------------------------------------------------- skeleton items
@dataclass(frozen=True)
class Command:
    """One sync command of a warp.  kind: arrive | wait | expect_tx | tma | commit | bar_arrive | bar_wait."""

    kind: str
    family: str                    # mbarrier buffer name, or "bar<id>" for a named barrier
    slot: ir.Expr                  # slot index (symbolic in loop variables), Const for named barriers
    parity: ir.Expr | None = None  # wait parity
    units: int = 0                 # arrivals contributed (lanes x count) / tx bytes for expect_tx
    site: int = -1                 # op site id (for reports)
    span: object = field(default=None, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Guarded:
    """Commands that run only in iterations where `cond` holds (conditions on loop variables)."""

    cond: ir.Expr
    body: tuple


@dataclass(frozen=True)
class Loop:
    var: str
    start: ir.Expr
    stop: ir.Expr
    body: tuple
    span: object = field(default=None, compare=False)


@dataclass
class Skeleton:
    warps: dict[int, tuple]                       # warp id -> items
    inits: dict[tuple[str, int], ir.Expr]         # (family, slot) -> expected count
    family_size: dict[str, int]
    symbolic: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    sites: list = field(default_factory=list)     # (span, text) per site id


# ---------------------------------------------------------------------------------- values
# ---------------------------------------------------------------------------------- extraction
class Extractor:
    def __init__(self, func: ir.PrimFunc, symbolic: tuple[str, ...], consts: dict, ledger: Ledger):
        self.func = func
        self.ledger = ledger               # the z3 checks of the closed forms
        self.symbolic = tuple(symbolic)
        self.consts = consts
        self.inits: dict[tuple[str, int], ir.Expr] = {}
        self.family_size: dict[str, int] = {}
        self.notes: list[str] = []
        self.sites: list = []
        self._site_of: dict[int, int] = {}
        self.buffers: dict[str, ir.Buffer] = {}
        for p in func.params:
            if p.buffer is not None:
                self.buffers[p.name] = p.buffer
        block = []
        for e in func.launch.block:
            v = self._const_int(e, "block size")
            block.append(v)
        self.block = tuple(block)
        self.nthreads = block[0] * block[1] * block[2]
        for e in func.launch.grid:
            if self._const_int(e, "grid size") != 1:
                self.notes.append("the grid has more than one CTA: CTA 0's skeleton is analysed (mbarriers are "
                                  "CTA-local; CTAs run the same protocol unless it depends on blockIdx)")
                break

    def _const_int(self, e: ir.Expr, what: str) -> int:
        v = self.eval(e, {}, {})
        if isinstance(v, Sym):
            raise OutsideFragment(f"a symbolic {what}", e.span, "keep launch dimensions concrete")
        if not isinstance(v, (int, np.integer)):
            raise OutsideFragment(f"a non-constant {what}", e.span)
        return int(v)

    # ------------------------------------------------------------------ expressions
    def eval(self, e: ir.Expr, env: dict, locals_: dict, tid=None):
        if isinstance(e, ir.Const):
            return e.value if not isinstance(e.value, float) else e.value
        if isinstance(e, ir.ConstRef):
            if e.name in self.symbolic:
                return Sym(e)
            return self.consts[e.name]
        if isinstance(e, ir.Var):
            if e.name in env:
                return env[e.name]
            raise OutsideFragment(f"variable {e.name} (a scalar parameter or unbound name)", e.span,
                                  "bind scalar parameters with --const")
        if isinstance(e, ir.ThreadIndex):
            return self._thread_index(e, tid)
        if isinstance(e, ir.BinOp):
            a = self.eval(e.a, env, locals_, tid)
            if e.op in ("and", "&&") and a is False:
                return False
            if e.op in ("or", "||") and a is True:
                return True
            b = self.eval(e.b, env, locals_, tid)
            return self._binop(e, a, b)
        if isinstance(e, ir.UnaryOp):
            a = self.eval(e.a, env, locals_, tid)
            if isinstance(a, Opaque):
                return a
            if isinstance(a, Sym):
                return Sym(ir.UnaryOp(e.op, a.e, e.dtype, span=e.span))
            if e.op in ("not", "!"):
                return np.logical_not(a) if is_lanes(a) else not a
            if e.op == "-":
                return -a
            if e.op == "~":
                return ~a
            raise OutsideFragment(f"unary operator {e.op}", e.span)
        if isinstance(e, ir.Cast):
            v = self.eval(e.value, env, locals_, tid)
            if isinstance(v, (Sym, Opaque)) or e.dtype.startswith("float") or e.dtype == "bool":
                return v
            return v
        if isinstance(e, ir.Select):
            c = self.eval(e.cond, env, locals_, tid)
            t = self.eval(e.true_value, env, locals_, tid)
            f = self.eval(e.false_value, env, locals_, tid)
            for x in (c, t, f):
                if isinstance(x, Opaque):
                    return x
            if isinstance(c, Sym) or isinstance(t, Sym) or isinstance(f, Sym):
                if any(is_lanes(x) for x in (c, t, f)):
                    return Opaque("a value depending on both the lane and a loop variable", e.span)
                return Sym(ir.Select(to_expr(c, "bool"), to_expr(t, e.dtype), to_expr(f, e.dtype), e.dtype, True,
                                     span=e.span))
            return collapse(np.where(c, t, f)) if is_lanes(c) else (t if c else f)
        if isinstance(e, ir.Load):
            if e.buffer in locals_:
                key = self._local_key(e, env, locals_, tid)
                if isinstance(key, Opaque):
                    return key
                v = locals_[e.buffer].get(key)
                if v is None:
                    return Opaque(f"local {e.buffer} read before it is set", e.span)
                return v
            return Opaque(f"a load of {e.buffer}", e.span)
        if isinstance(e, ir.OpCall):
            if e.op == "cuda.elect_sync":
                return ("elect",)
            return Opaque(f"the result of {e.op}", e.span)
        return Opaque(f"{type(e).__name__} expression", e.span)

    def _binop(self, e, a, b):
        if isinstance(a, Opaque):
            return a
        if isinstance(b, Opaque):
            return b
        if isinstance(a, Sym) or isinstance(b, Sym):
            if is_lanes(a) or is_lanes(b):
                return Opaque("a value depending on both the lane and a loop variable", e.span)
            if isinstance(a, tuple) or isinstance(b, tuple):
                return Opaque("elect_sync combined with a symbolic value", e.span)
            return Sym(_fold(ir.BinOp(e.op, to_expr(a, e.a.dtype), to_expr(b, e.b.dtype), e.dtype, span=e.span)))
        if isinstance(a, tuple) or isinstance(b, tuple):
            return Opaque("elect_sync inside an expression", e.span)
        if isinstance(a, float) or isinstance(b, float):
            return Opaque("a floating-point value", e.span)
        return collapse(apply_op(e.op, a, b))

    def _thread_index(self, e: ir.ThreadIndex, tid):
        tag = e.tag
        if tag.startswith("blockIdx") or tag.startswith("clusterCtaIdx") or tag.startswith("cluster"):
            return 0
        if tid is None:
            raise OutsideFragment(f"{tag} outside the thread body", e.span)
        bx, by, _ = self.block
        if tag == "threadIdx.x":
            return collapse(tid % bx)
        if tag == "threadIdx.y":
            return collapse((tid // bx) % by)
        if tag == "threadIdx.z":
            return collapse(tid // (bx * by))
        raise OutsideFragment(f"thread index {tag}", e.span)

    def _local_key(self, e, env, locals_, tid):
        idx = tuple(self.eval(i, env, locals_, tid) for i in e.indices)
        for i in idx:
            if not isinstance(i, (int, np.integer)):
                return Opaque(f"a local array {e.buffer} indexed by a non-constant", e.span)
        return tuple(int(i) for i in idx)

    # ------------------------------------------------------------------ statements
    def warp_program(self, warp: int) -> tuple:
        tid = warp * 32 + LANES
        mask = tid < self.nthreads
        return tuple(self.stmts(self.func.body, {}, {}, tid, mask))

    def stmts(self, body, env: dict, locals_: dict, tid, mask) -> list:
        out: list = []
        for s in body:
            if not mask.any():
                break
            out.extend(self.stmt(s, env, locals_, tid, mask))
        return out

    def stmt(self, s, env, locals_, tid, mask) -> list:
        if isinstance(s, ir.Let):
            env[s.var.name] = self._masked(self.eval(s.value, env, locals_, tid), mask)
            return []
        if isinstance(s, ir.DeclBuffer):
            b = s.buffer
            self.buffers[b.name] = b
            if b.scope == "local":
                locals_[b.name] = {}
            return []
        if isinstance(s, ir.Store):
            if s.buffer in locals_:
                key = self._local_key(s, env, locals_, tid)
                val = self.eval(s.value, env, locals_, tid)
                if isinstance(key, Opaque):
                    locals_[s.buffer] = {}
                    return []
                old = locals_[s.buffer].get(key)
                locals_[s.buffer][key] = self._merge(val, old, mask)
            return []
        if isinstance(s, ir.Evaluate):
            if isinstance(s.value, ir.OpCall):
                return self.call(s.value, env, locals_, tid, mask)
            if isinstance(s.value, ir.Unsupported) and _looks_sync(s.value.name):
                raise OutsideFragment(f"unsupported operation {s.value.name}", s.span)
            return []
        if isinstance(s, ir.If):
            return self.branch(s, env, locals_, tid, mask)
        if isinstance(s, ir.For):
            return self.loop(s, env, locals_, tid, mask)
        if isinstance(s, ir.While):
            return self.while_(s, env, locals_, tid, mask)
        if isinstance(s, (ir.Break, ir.Continue)):
            raise OutsideFragment(f"{type(s).__name__.lower()} in a loop with sync commands", s.span)
        return []

    def _masked(self, v, mask):
        return v

    def _merge(self, new, old, mask):
        if mask.all() or old is None:
            return new
        if isinstance(new, (Sym, Opaque)) or isinstance(old, (Sym, Opaque)):
            if _norm_eq(new, old):
                return new
            return Opaque("a local updated by some lanes only", None)
        return collapse(np.where(mask, new, old))

    def branch(self, s: ir.If, env, locals_, tid, mask) -> list:
        c = self.eval(s.cond, env, locals_, tid)
        if isinstance(c, tuple) and c == ("elect",):
            first = np.flatnonzero(mask)[:1]
            c = np.zeros(32, dtype=np.bool_)
            c[first] = True
        if isinstance(c, Opaque):
            if _has_sync(s.then_body) or _has_sync(s.else_body):
                raise OutsideFragment(f"a branch on {c.why} around sync commands", s.span,
                                      "the prover needs branches decided by thread ids, constants or loop variables")
            _taint(s.then_body, locals_)
            _taint(s.else_body, locals_)
            return []
        if isinstance(c, Sym):
            before = {k: dict(v) for k, v in locals_.items()}
            then = self.stmts(s.then_body, env, locals_, tid, mask)
            after_then = locals_
            alt_locals = before
            other = self.stmts(s.else_body, env, alt_locals, tid, mask)
            for name in set(after_then) | set(alt_locals):
                a, b = after_then.get(name, {}), alt_locals.get(name, {})
                merged: dict = {}
                for key in set(a) | set(b):
                    va, vb = a.get(key), b.get(key)
                    if va is None or vb is None:
                        merged[key] = Opaque(f"local {name} set on one side of a branch", s.span)
                    elif _norm_eq(va, vb):
                        merged[key] = va
                    elif isinstance(va, Opaque) or isinstance(vb, Opaque):
                        # an unknown value stays unknown after the join; only a use of it in sync fails
                        merged[key] = va if isinstance(va, Opaque) else vb
                    elif any(is_lanes(x) for x in (va, vb)):
                        merged[key] = Opaque("a local depending on both the lane and a loop variable", s.span)
                    else:
                        merged[key] = Sym(ir.Select(c.e, to_expr(va), to_expr(vb), "int32", True, span=s.span))
                locals_[name] = merged
            out = []
            if then:
                out.append(Guarded(c.e, tuple(then)))
            if other:
                out.append(Guarded(ir.UnaryOp("not", c.e, "bool", span=s.span), tuple(other)))
            return out
        if is_lanes(c):
            m_then = mask & c.astype(np.bool_)
            m_else = mask & ~c.astype(np.bool_)
            out = []
            if m_then.any():
                out.extend(self.stmts(s.then_body, env, locals_, tid, m_then))
            if m_else.any():
                out.extend(self.stmts(s.else_body, env, locals_, tid, m_else))
            return out
        return self.stmts(s.then_body if c else s.else_body, env, locals_, tid, mask)

    def loop(self, s: ir.For, env, locals_, tid, mask) -> list:
        start = self.eval(s.start, env, locals_, tid)
        stop = self.eval(s.stop, env, locals_, tid)
        step = self.eval(s.step, env, locals_, tid) if s.step is not None else 1
        if step != 1:
            raise OutsideFragment("a loop with a step other than 1", s.span)
        for v in (start, stop):
            if isinstance(v, Opaque) or is_lanes(v):
                raise OutsideFragment("a loop bound that depends on data or the lane", s.span)
        sync = _has_sync(s.body)
        if not sync and not _assigns_locals(s.body, locals_):
            return []
        concrete = not isinstance(start, Sym) and not isinstance(stop, Sym)
        if concrete and (stop - start <= UNROLL_LIMIT or not sync):
            out = []
            for i in range(int(start), int(stop)):
                env[s.var.name] = i
                out.extend(self.stmts(s.body, env, locals_, tid, mask))
            return out
        carried = _assigned_locals(s.body, locals_)
        if carried:
            summarize(self, s, env, locals_, tid, mask, carried, start, stop)
        # the closed forms at iteration k: running the body below advances them to k + 1
        at_k = {n: dict(locals_[n]) for n in carried}
        env[s.var.name] = Sym(s.var)
        body = self.stmts(s.body, env, locals_, tid, mask)
        if carried:
            for n in carried:
                locals_[n] = at_k[n]
            after_loop(self, s, locals_, carried, start, stop)
        env.pop(s.var.name, None)
        if not body:
            return []
        return [Loop(s.var.name, to_expr(start), to_expr(stop), tuple(body), span=s.span)]

    def while_(self, s: ir.While, env, locals_, tid, mask) -> list:
        # the polling idiom: `while flag == 0: try_wait(flag, bar, parity)` is one wait
        body = [x for x in s.body]
        if len(body) == 1 and isinstance(body[0], ir.Evaluate) and isinstance(body[0].value, ir.OpCall):
            call = body[0].value
            info = _classify(call)
            if info is not None and info.name.startswith("mbarrier.try_wait") or (
                    info is not None and info.name.startswith("mbarrier.test_wait")):
                return self.call(call, env, locals_, tid, mask, as_wait=True)
        if _has_sync(s.body):
            raise OutsideFragment("a while loop around sync commands", s.span,
                                  "the prover handles for-loops and the try_wait polling loop")
        _taint(s.body, locals_)
        return []

    # ------------------------------------------------------------------ sync calls
    def site(self, call) -> int:
        k = id(call)
        if k not in self._site_of:
            self._site_of[k] = len(self.sites)
            self.sites.append((call.span, call.op))
        return self._site_of[k]

    def call(self, call: ir.OpCall, env, locals_, tid, mask, as_wait: bool = False) -> list:
        info = _classify(call)
        if info is None:
            return []
        if not info.supported and info.family in irops.SYNC_FAMILIES:
            raise OutsideFragment(f"unsupported operation {call.op}", call.span)
        pred = self.eval(call.pred, env, locals_, tid) if call.pred is not None else True
        if isinstance(pred, (Sym, Opaque)):
            raise OutsideFragment("a predicated sync operation with a non-lane predicate", call.span)
        lanes = mask & (np.asarray(pred, dtype=np.bool_) if is_lanes(pred) else bool(pred))
        nlanes = int(np.count_nonzero(lanes))
        if not nlanes:
            return []
        name = info.name
        # the fragment is one CTA's barriers (a cluster launch is refused before): cluster barriers and multicast
        # to the cluster's CTAs are outside it; on one CTA a shared::cluster address is the CTA's own
        if info.family == "cluster_barrier":
            raise OutsideFragment(f"the cluster barrier {name}", call.span)
        if "multicast::cluster" in info.quals:
            raise OutsideFragment(f"{call.op} (multicast to the CTAs of a cluster)", call.span)
        if name == "clusterlaunchcontrol.try_cancel":
            # its answer comes from the launch scheduler and its response completes 16 tx bytes asynchronously:
            # neither is a command of the skeleton, so leaving it out would drop bytes a wait depends on
            raise OutsideFragment(f"{call.op} (cluster launch control: the launch scheduler's answer and the "
                                  f"response's transaction bytes)", call.span)
        ops = {o.name: x for o, x in zip(info.operands, call.operands)}
        site = self.site(call)
        if name == "mbarrier.init":
            fam, slot = self._barrier(ops["addr"], env, locals_, tid, call)
            if not isinstance(slot, int):
                raise OutsideFragment("an mbarrier.init inside a symbolic loop", call.span)
            if nlanes != 1:
                raise OutsideFragment(f"mbarrier.init of {fam}[{slot}] by {nlanes} lanes", call.span)
            count = self.eval(ops["count"], env, locals_, tid)
            if isinstance(count, Opaque) or is_lanes(count):
                raise OutsideFragment("an mbarrier count from data", call.span)
            if (fam, slot) in self.inits:
                raise OutsideFragment(f"{fam}[{slot}] initialized twice", call.span)
            self.inits[(fam, slot)] = to_expr(count)
            return []
        if name in ("mbarrier.arrive", "mbarrier.arrive.expect_tx", "mbarrier.arrive_drop",
                    "mbarrier.arrive.expect_tx_drop", "cp.async.mbarrier.arrive"):
            if name == "cp.async.mbarrier.arrive":
                raise OutsideFragment("cp.async.mbarrier.arrive (its arrival lands asynchronously)", call.span)
            fam, slot = self._barrier(ops["addr"], env, locals_, tid, call)
            if "count" in ops:
                cnt = self.eval(ops["count"], env, locals_, tid)
                if not isinstance(cnt, (int, np.integer)):
                    raise OutsideFragment("an arrive count that is not a constant", call.span)
                units = nlanes * int(cnt)
            else:
                units = nlanes
            out = []
            if "tx_count" in ops:
                tx = self.eval(ops["tx_count"], env, locals_, tid)
                if not isinstance(tx, (int, np.integer)):
                    raise OutsideFragment("expect_tx bytes that are not a constant", call.span)
                out.append(Command("expect_tx", fam, _sx(slot), units=nlanes * int(tx), site=site, span=call.span))
            out.append(Command("arrive", fam, _sx(slot), units=units, site=site, span=call.span))
            return out
        if name == "mbarrier.expect_tx":
            fam, slot = self._barrier(ops["addr"], env, locals_, tid, call)
            tx = self.eval(ops["tx_count"], env, locals_, tid)
            if not isinstance(tx, (int, np.integer)):
                raise OutsideFragment("expect_tx bytes that are not a constant", call.span)
            return [Command("expect_tx", fam, _sx(slot), units=nlanes * int(tx), site=site, span=call.span)]
        if name in ("cuda.mbarrier_wait",) or name.startswith("mbarrier.try_wait") or \
                name.startswith("mbarrier.test_wait"):
            if not as_wait and name != "cuda.mbarrier_wait":
                raise OutsideFragment(f"{name} outside a polling loop", call.span,
                                      "poll with `while flag == 0: try_wait(...)` or use T.cuda.mbarrier_wait")
            if "parity" not in info.quals and name != "cuda.mbarrier_wait":
                raise OutsideFragment(f"{name} without .parity", call.span)
            fam, slot = self._barrier(ops["addr"], env, locals_, tid, call)
            par_e = ops.get("parity", ops.get("phase"))
            assert par_e is not None                # both ops' signatures require the parity operand
            par = self.eval(par_e, env, locals_, tid)
            if isinstance(par, Opaque) or is_lanes(par):
                raise OutsideFragment("a wait parity from data or the lane", call.span)
            return [Command("wait", fam, _sx(slot), parity=to_expr(par), units=nlanes, site=site, span=call.span)]
        if name in ("cp.async.bulk.g2s", "cp.async.bulk.s2c", "cp.async.bulk.tensor.g2s") and "mbar" in ops:
            fam, slot = self._barrier(ops["mbar"], env, locals_, tid, call)
            return [Command("tma", fam, _sx(slot), units=nlanes, site=site, span=call.span)]
        if name == "tcgen05.commit" and "mbar" in ops:
            if "multicast" in "".join(info.quals):
                raise OutsideFragment("a multicast tcgen05.commit", call.span)
            fam, slot = self._barrier(ops["mbar"], env, locals_, tid, call)
            return [Command("commit", fam, _sx(slot), units=1, site=site, span=call.span)]
        if name == "mbarrier.complete_tx":
            raise OutsideFragment("mbarrier.complete_tx from a thread", call.span)
        if name == "st.async":
            raise OutsideFragment("st.async (a store into a peer CTA completing on its mbarrier)", call.span)
        if name in ("mbarrier.inval", "mbarrier.try_wait", "mbarrier.test_wait"):
            raise OutsideFragment(name, call.span)
        if info.family == "named_barrier":
            return self._named(call, info, ops, env, locals_, tid, lanes, nlanes, site)
        if info.family == "mbarrier":
            raise OutsideFragment(f"{name}", call.span)
        return []

    def _named(self, call, info, ops, env, locals_, tid, lanes, nlanes, site) -> list:
        name = info.name
        if name == "cuda.cta_sync":
            bid, count = 0, self.nthreads
        else:
            bid = self.eval(ops.get("barrier_id"), env, locals_, tid) if "barrier_id" in ops else 0
            if not isinstance(bid, (int, np.integer)):
                raise OutsideFragment("a named barrier id that is not a constant", call.span)
            if "thread_count" in ops:
                count = self.eval(ops["thread_count"], env, locals_, tid)
                if not isinstance(count, (int, np.integer)):
                    raise OutsideFragment("a named barrier thread count that is not a constant", call.span)
            elif name == "cuda.warpgroup_sync":
                count = 128
            else:
                count = self.nthreads
        fam = f"bar{int(bid)}"
        key = (fam, 0)
        prev = self.inits.get(key)
        if prev is not None and isinstance(prev, ir.Const) and prev.value != int(count):
            raise OutsideFragment(f"named barrier {bid} used with thread counts {prev.value} and {count}", call.span)
        self.inits[key] = ir.Const(int(count), "int32")
        self.family_size[fam] = 1
        # an aligned barrier counts the whole warp; otherwise the lanes that execute it (as NumSim does)
        units = 32 if "aligned" in info.quals else nlanes
        arrive = Command("bar_arrive", fam, ir.Const(0, "int32"), units=units, site=site, span=call.span)
        if name in ("bar.arrive",):
            return [arrive]
        return [arrive, Command("bar_wait", fam, ir.Const(0, "int32"), units=units, site=site, span=call.span)]

    def _barrier(self, addr, env, locals_, tid, call) -> tuple[str, object]:
        if not isinstance(addr, ir.Address):
            raise OutsideFragment("an mbarrier address that is not buffer.ptr_to([...])", call.span)
        buf = self.buffers.get(addr.buffer)
        if buf is None:
            raise OutsideFragment(f"mbarrier buffer {addr.buffer} not declared", call.span)
        size = 1
        for d in buf.shape:
            size *= self._const_int(d, "mbarrier array shape")
        self.family_size[addr.buffer] = size
        if len(addr.indices) != 1:
            raise OutsideFragment("a multi-dimensional mbarrier array", call.span)
        slot = self.eval(addr.indices[0], env, locals_, tid)
        if isinstance(slot, Opaque) or is_lanes(slot):
            raise OutsideFragment("an mbarrier slot chosen by data or the lane", call.span)
        return addr.buffer, (slot.e if isinstance(slot, Sym) else int(slot))


def _sx(slot) -> ir.Expr:
    return slot if isinstance(slot, ir.Expr) else ir.Const(int(slot), "int32")


def _fold(e: ir.BinOp) -> ir.Expr:
    if isinstance(e.a, ir.Const) and isinstance(e.b, ir.Const) and not isinstance(e.a.value, float):
        v = apply_op(e.op, e.a.value, e.b.value)
        return ir.Const(v if isinstance(v, bool) else int(v), e.dtype)
    return e


def _norm_eq(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, Sym) and isinstance(b, Sym):
        return a.e == b.e
    if isinstance(a, (Sym, Opaque)) or isinstance(b, (Sym, Opaque)):
        return False
    if is_lanes(a) or is_lanes(b):
        return bool(np.all(np.asarray(a) == np.asarray(b)))
    return a == b


def _classify(call: ir.OpCall):
    try:
        return irops.classify(call.op, tuple(getattr(o, "dtype", "") for o in call.operands))
    except Exception:     # noqa: BLE001 - an op the registry cannot read is not a sync command we model
        return None


def _looks_sync(name: str) -> bool:
    return any(k in name for k in ("barrier", "mbarrier", "bar.", "commit", "syncthreads"))


def _walk(body):
    for s in body:
        yield s
        for attr in ("body", "then_body", "else_body"):
            sub = getattr(s, attr, None)
            if sub:
                yield from _walk(sub)


def _has_sync(body) -> bool:
    for s in _walk(body):
        if isinstance(s, ir.Evaluate):
            v = s.value
            if isinstance(v, ir.OpCall):
                info = _classify(v)
                if info is not None and (info.family in ("mbarrier", "named_barrier") or info.name in (
                        "tcgen05.commit", "cp.async.bulk.g2s", "cp.async.bulk.s2c", "cp.async.bulk.tensor.g2s",
                        "cp.async.mbarrier.arrive", "st.async")):
                    return True
            elif isinstance(v, ir.Unsupported) and _looks_sync(v.name):
                return True
    return False


def _assigned_locals(body, locals_) -> list[str]:
    return sorted({s.buffer for s in _walk(body) if isinstance(s, ir.Store) and s.buffer in locals_})


def _assigns_locals(body, locals_) -> bool:
    return bool(_assigned_locals(body, locals_))


def _taint(body, locals_) -> None:
    for name in _assigned_locals(body, locals_):
        locals_[name] = {k: Opaque(f"local {name} set under data-dependent control") for k in locals_[name]} or {}


def extract(func: ir.PrimFunc, symbolic, consts: dict, ledger: Ledger | None = None) -> Skeleton:
    x = Extractor(func, tuple(symbolic), consts, Ledger() if ledger is None else ledger)
    warps = {}
    nwarps = (x.nthreads + 31) // 32
    for w in range(nwarps):
        prog = x.warp_program(w)
        if prog:
            warps[w] = prog
    return Skeleton(warps, x.inits, x.family_size, tuple(symbolic), x.notes, x.sites)
