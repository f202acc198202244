"""Hopper warpgroup MMA (PTX ISA 9.7.15; docs/semantics.md#wgmma-hopper): `wgmma.fence`, `wgmma.mma_async`,
`wgmma.commit_group`, `wgmma.wait_group N`.

A warpgroup is four consecutive warps of a CTA (warps 4g .. 4g + 3); every instruction is `.sync.aligned`
over it.  NumSim runs warps one at a time, so each warp executes its share: warp q of the warpgroup owns
rows 16q .. 16q + 15 of A and D (the register fragments of PTX Figures 148-149, `descriptors.wgmma_fragment`)
and its `mma_async` is an async operation of its own (actor), reading its 16 rows of A (from the shared
descriptor, or its A registers in the `rs` form) and all of B through the async proxy:

    D[16q + r][j] = scale-a * scale-b * sum_k A[16q + r][k] * B[j][k]   (+ D[16q + r][j] if scale-d)

B is N x K (K-major, or N-major with imm-trans-b), A is 64 x K likewise; fp32 accumulation, the K-slab
summed in float64 and D rounded once to fp32 (as tcgen05.mma; the PTX leaves order and rounding open).
The operation executes when the scheduler delivers its completion (FIFO); the accumulator registers hold
an undefined value from issue until the `wgmma.wait_group` that retires the operation's group writes the
result (modelcheck.numsim.registers: a read or write of them in between is
`async_register_access_before_wait`).  A later `mma_async` of the same warp on the same accumulator
registers chains on the pending result, as the hardware orders accumulator chains of one shape (and
executes after it, even when a forced replay schedule holds the earlier one back).  Shared
reads stay "in flight" (the op is not done for the checkers) until the completion, and the warp learns it
is done only from the wait (event "wgmma.wait_group" lists the retired ops), so a stage released or
overwritten before the wait is a race.

Warpgroup rules: each warp must be converged (`warp_collective_divergence`), the CTA must hold the whole
warpgroup, and the k-th `mma_async` of every warp of a warpgroup must be the same instruction (shape,
types, descriptors, scale-d, immediates): a mismatch is `warp_collective_divergence`, as Compute
Sanitizer's "warpgroup MMA sequence" check, and so is (when the run completes, `at_exit`) an instruction
only part of the warpgroup issued.  `wgmma.fence` is a sync event only: register accesses are in
program order in NumSim, so the fence's ordering of them before the MMA is not checked.
"""
from __future__ import annotations

import numpy as np

from .. import registers
from .. import values as V
from ...common.verdict import Verdict
from ..descriptors import DescriptorError, matrix_addresses, wgmma_descriptor, wgmma_fragment
from ..errors import Diagnostic, EngineError, UnsupportedTIRxError
from ..memory import SHARED_BASE
from ..runtime import Wait
from . import require_full_warp, uniform
from .async_copy import _new_op
from .memory import _from_register
from .tcgen05 import descriptor_error, smem_footprint
from .tma import async_records

_DTYPES = {"f16": np.float16, "bf16": V.NP_DTYPE["bfloat16"]}
_FRAGMENTS = [wgmma_fragment(q) for q in range(4)]
_CACHE_LIMIT = 4096


_D_CELLS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _d_cells(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(row within the warp's 16 rows, column) of D register i of each lane: two (N/2, 32) arrays
    (`wgmma_fragment`: the pattern of registers 0-3 repeats every 8 columns)."""
    hit = _D_CELLS.get(n)
    if hit is None:
        _, _, d_rows, d_cols = wgmma_fragment(0)
        i = np.arange(n // 2)
        hit = _D_CELLS[n] = (d_rows[i % 4], d_cols[i % 4] + 8 * (i // 4)[:, None])
    return hit


class WgState:
    """Per-warp wgmma bookkeeping: ops since the last commit_group, committed groups (oldest first)."""

    __slots__ = ("uncommitted", "committed", "issued", "pending_ops")

    def __init__(self):
        self.uncommitted: list = []
        self.committed: list[list] = []
        self.issued = 0        # mma_async instructions issued (the warpgroup sequence check)
        self.pending_ops: dict[int, list] = {}   # mma_async not yet executed -> completions chained behind it


def wg_state(w) -> WgState:
    if w.groups is None:
        w.groups = {}
    s = w.groups.get("wgmma")
    if s is None:
        s = w.groups["wgmma"] = WgState()
    return s


def accumulator_buffers(call, info) -> set[str]:
    """The local buffers an mma_async writes asynchronously (its accumulator operands)."""
    n = int(info.quals["shape"].split("n")[1].split("k")[0])
    return {o.buffer for o in call.operands[:n // 2] if hasattr(o, "buffer")}


def _warpgroup(w, what: str, span) -> tuple[int, int]:
    """(warpgroup index, warp within it); the CTA must hold all four warps, each of 32 threads."""
    g, q = divmod(w.index, 4)
    warps = w.rt.warps
    if len(warps) < 4 * g + 4 or any(x.nthreads != 32 for x in warps[4 * g:4 * g + 4]):
        threads = sum(x.nthreads for x in warps[4 * g:4 * g + 4])
        raise EngineError("warp_collective_divergence", f"{what} is warpgroup-collective: warpgroup {g} (warps "
                                                        f"{4 * g}-{4 * g + 3}) has only {threads} threads in this "
                                                        f"CTA", span, warpgroup=g)
    return g, q


def _same_sequence(w, g: int, q: int, sig: tuple, site: int, what: str, span) -> None:
    """The k-th mma_async of every warp of warpgroup g must be the same instruction."""
    seqs = w.rt.shared.__dict__.setdefault("_wgmma_sequence", {})     # per CTA
    st = wg_state(w)
    key = (g, st.issued)
    st.issued += 1
    entry = seqs.get(key)
    if entry is None:
        seqs[key] = [sig, [q], site]
        return
    if entry[0] != sig:
        raise EngineError("warp_collective_divergence",
                          f"{what}: warp {4 * g + q} issued a different instruction than warp {4 * g + entry[1][0]} "
                          f"of its warpgroup as its wgmma number {key[1]} (every warp of a warpgroup must execute the "
                          f"same wgmma sequence: shape, descriptors, scale-d, immediates)", span, warpgroup=g)
    entry[1].append(q)
    if len(entry[1]) == 4:
        del seqs[key]


def at_exit(ctas, sites) -> list[Diagnostic]:
    """`warp_collective_divergence` for a wgmma.mma_async that only part of its warpgroup issued by the end of
    a completed run (the others exited without it: on hardware the warpgroup instruction never completes)."""
    out: list[Diagnostic] = []
    for rt in ctas:
        seqs = rt.shared.__dict__.get("_wgmma_sequence")
        if not seqs:
            continue
        seen = set()
        for (g, k), (_sig, warps, site) in sorted(seqs.items(), key=lambda kv: kv[0]):
            if g in seen:
                continue          # one finding per warpgroup: its first incomplete instruction
            seen.add(g)
            done = [4 * g + q for q in sorted(warps)]
            missing = [4 * g + q for q in range(4) if q not in warps]
            out.append(Diagnostic(
                "warp_collective_divergence", Verdict.ERROR,
                f"wgmma.mma_async is warpgroup-collective, but only warp(s) {', '.join(map(str, done))} of warpgroup "
                f"{g} (CTA {rt.index}) issued its wgmma number {k}; warp(s) {', '.join(map(str, missing))} never "
                f"did", sites[site].span, {"cta": rt.index, "warpgroup": g, "executed": done, "missing": missing}))
    return out


def _operand(w, value: int, rows: int, k: int, mn_major: bool, span, what: str):
    """(byte index into the shared pool (rows, 2k), [(allocation, offsets)]) of a 16-bit operand, all rows."""
    cache = w.rt.shared.__dict__.setdefault("_wgmma_operands", {})    # per CTA: parts name its allocations
    key = (value, rows, k, mn_major)
    hit = cache.get(key)
    if hit is not None:
        return hit
    try:
        desc = wgmma_descriptor(value)
        addrs = matrix_addresses(desc, rows, k, 2, mn_major)
    except DescriptorError as err:
        raise descriptor_error(err, what, value, span, "wgmma matrix") from None
    if int(addrs.min()) & 1:
        raise EngineError("misaligned_address", f"{what}: matrix start {desc.start:#x} is not 16-byte aligned",
                          span, address=desc.start)
    index = (addrs.reshape(-1, 1) - SHARED_BASE + np.arange(2)).reshape(rows, 2 * k)
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = hit = (addrs, index)
    return hit


def _imm(value, w, name: str, allowed, what: str, span) -> int:
    v = int(uniform(value, w, f"{what} {name}", span))
    if v not in allowed:
        # the real parser rejects such an immediate; here the op is reported, not guessed
        raise UnsupportedTIRxError(what, span, f"{name} is {v}; PTX allows {' or '.join(map(str, allowed))}")
    return v


def _mma_async(ctx, call, info):
    q_ = info.quals
    n = int(q_["shape"].split("n")[1].split("k")[0])
    rs = q_["form"] == "rs"
    regs = n // 2
    ops = call.operands
    what = f"wgmma.mma_async.{q_['shape']}.f32.{q_['atype']}.{q_['btype']} ({q_['form']})"
    span = call.span
    dsts = [ctx.lvalue(o, what) for o in ops[:regs]]
    if any(d.slot is None for d in dsts):
        raise UnsupportedTIRxError(what, span, "the accumulator operands must be registers (local buffer elements)")
    a_fns = [(ctx.expr(o), o.dtype) for o in ops[regs:regs + 4]] if rs else []
    rest = ops[regs + 4:] if rs else ops[regs + 1:]
    a_fn = None if rs else ctx.expr(ops[regs])
    b_fn, sd_fn = ctx.expr(rest[0]), ctx.expr(rest[1])
    imm_fns = [ctx.expr(o) for o in rest[2:]]
    site = ctx.site(call, "wgmma.mma_async")
    np_in = _DTYPES[q_["atype"]]

    def run(w):
        require_full_warp(w, what + " (.sync.aligned)", span)
        g, q = _warpgroup(w, what, span)
        eng = w.eng
        b_val = int(uniform(b_fn(w), w, f"{what} B descriptor", span)) & 0xFFFF_FFFF_FFFF_FFFF
        a_val = None if rs else int(uniform(a_fn(w), w, f"{what} A descriptor", span)) & 0xFFFF_FFFF_FFFF_FFFF
        scale_d = bool(uniform(sd_fn(w), w, f"{what} scale-d", span))
        imms = [f(w) for f in imm_fns]
        scale_a = _imm(imms[0], w, "imm-scale-a", (-1, 1), what, span)
        scale_b = _imm(imms[1], w, "imm-scale-b", (-1, 1), what, span)
        trans_a = 0 if rs else _imm(imms[2], w, "imm-trans-a", (0, 1), what, span)
        trans_b = _imm(imms[-1], w, "imm-trans-b", (0, 1), what, span)
        _same_sequence(w, g, q, (q_["shape"], q_["atype"], q_["form"], a_val, b_val, scale_d, tuple(
            int(uniform(v, w, what, span)) for v in imms)), site, what, span)
        b_addrs, b_index = _operand(w, b_val, n, 16, bool(trans_b), span, what + " B")
        b_parts = smem_footprint(w, b_addrs, 2, span, what + " B")
        a_rows, a_cols, _, _ = _FRAGMENTS[q]
        if rs:
            bits = np.stack([np.broadcast_to(_from_register(f(w), dt, "b32"), (32,)).astype(np.uint32)
                             for f, dt in a_fns])
            a_regs = np.zeros((16, 16), dtype=np.float64)
            r = a_rows - 16 * q
            a_regs[r, a_cols] = (bits & 0xFFFF).astype(np.uint16).view(np_in).astype(np.float64)
            a_regs[r, a_cols + 1] = (bits >> 16).astype(np.uint16).view(np_in).astype(np.float64)
            a_src = a_regs
        else:
            a_addrs, a_index = _operand(w, a_val, 64, 16, bool(trans_a), span, what + " A")
            rows = slice(16 * q, 16 * q + 16)
            a_src = (a_index[rows], smem_footprint(w, a_addrs[rows], 2, span, what + " A"))
        # the accumulator's input: a pending result of this warp's earlier mma_async on the register (an
        # accumulator chain), else the register's value now
        inputs = []
        if scale_d:
            pending = w.async_regs or {}
            for d in dsts:
                key = (d.slot, int(np.asarray(d.index(w)).reshape(-1)[0]))
                chain = [p for p in pending.get(key, ()) if p.kind.startswith("wgmma.")]
                if chain:
                    inputs.append(chain[-1])
                else:
                    cur = w.local[d.slot][key[1]]
                    inputs.append(V.as_vec(0.0 if cur is None else cur, "float32").astype(np.float64))
        op = _new_op(w, "wgmma.mma_async", 0, site)
        st = wg_state(w)
        st.uncommitted.append(op)
        w.effects += 1
        eng.sync(w, "async.issue", site, details={"op": op.id, "kind": op.kind, "shape": q_["shape"],
                                                  "form": q_["form"], "warpgroup": g, "accumulate": scale_d})
        results = registers.issue(w, op.id, site, what, "wgmma.wait_group", [(d, None) for d in dsts])
        st.pending_ops[op.id] = []
        eng.enqueue(_complete(w, st, op, n, np_in, a_src, b_index, b_parts, scale_a * scale_b, inputs, results))
    return run, False


def _complete(w, st, op, n, np_in, a_src, b_index, b_parts, sign, inputs, results):
    pool = w.rt.shared.pool
    eng = w.eng

    def complete():
        before = next((src.op_id for src in inputs if not isinstance(src, np.ndarray)
                       and src.op_id in st.pending_ops), None)
        if before is not None:
            # an accumulator chain executes in issue order: a forced schedule that holds back an earlier op of
            # the chain holds this one too; it runs right after that op
            st.pending_ops[before].append(complete)
            return
        after = st.pending_ops.pop(op.id, ())
        if isinstance(a_src, tuple):
            a_index, a_parts = a_src
            a = pool[a_index].view(np_in).reshape(16, 16).astype(np.float64)
            for alloc, offs in a_parts:
                async_records(eng, op, alloc, offs, 2, "read")
        else:
            a = a_src
        b = pool[b_index].view(np_in).reshape(n, 16).astype(np.float64)
        for alloc, offs in b_parts:
            async_records(eng, op, alloc, offs, 2, "read")
        acc = (a @ b.T) * sign
        rows, cols = _d_cells(n)          # (register, lane) -> (row in the warp's 16, column)
        if inputs:
            acc[rows, cols] += np.stack([src if isinstance(src, np.ndarray) else
                                         V.as_vec(src.value, "float32").astype(np.float64) for src in inputs])
        with np.errstate(over="ignore", invalid="ignore"):
            vals = acc[rows, cols].astype(np.float32)
        for i, p in enumerate(results):
            p.value = vals[i] if p.dtype == "float32" else V.as_vec(vals[i], p.dtype)
        op.done = True
        eng.touch(st)
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})
        for later in after:
            later()
    return complete


def _fence(ctx, call, info):
    site = ctx.site(call, "wgmma.fence")
    span = call.span

    def run(w):
        require_full_warp(w, "wgmma.fence.sync.aligned", span)
        _warpgroup(w, "wgmma.fence", span)
        w.effects += 1
        w.eng.sync(w, "wgmma.fence", site)
    return run, False


def _commit(ctx, call, info):
    site = ctx.site(call, "wgmma.commit_group")
    span = call.span

    def run(w):
        require_full_warp(w, "wgmma.commit_group.sync.aligned", span)
        _warpgroup(w, "wgmma.commit_group", span)
        st = wg_state(w)
        st.committed.append(st.uncommitted)       # possibly empty (PTX: an empty group completes at once)
        st.uncommitted = []
        w.effects += 1
        w.eng.sync(w, "wgmma.commit_group", site)
    return run, False


def _wait_group(ctx, call, info):
    n_fn = ctx.expr(call.operands[0])
    site = ctx.site(call, "wgmma.wait_group")
    span = call.span

    def run(w):
        require_full_warp(w, "wgmma.wait_group.sync.aligned", span)
        _warpgroup(w, "wgmma.wait_group", span)
        n = int(uniform(n_fn(w), w, "wgmma.wait_group count", span))
        if n < 0:
            raise UnsupportedTIRxError("wgmma.wait_group", span, f"the count {n} is negative (PTX: a non-negative "
                                                                 f"integer constant)")
        st = wg_state(w)
        groups = st.committed
        cut = max(len(groups) - n, 0)
        targets = [op for grp in groups[:cut] for op in grp]

        def ready():
            return all(op.done for op in targets)
        blocked = False
        while not ready():
            blocked = True
            yield Wait(st, ready, f"await wgmma.wait_group {n} ({sum(not op.done for op in targets)} wgmma "
                                  f"operation(s) of older groups in flight)", site)
        st.committed = groups[cut:]
        done = [op.id for op in targets]
        registers.complete(w, done)
        w.effects += 1
        w.eng.sync(w, "wgmma.wait_group", site, count=n, details={"ops": done, "blocked": blocked})
    return run, True


HANDLERS = {
    "wgmma.fence": _fence,
    "wgmma.mma_async": _mma_async,
    "wgmma.commit_group": _commit,
    "wgmma.wait_group": _wait_group,
}
