"""`tcgen05.mma` kind::f16 / kind::tf32, cta_group::1, ss and ts forms (ptx-encodings §4-6).

At issue the instruction descriptor and the operand descriptors are decoded and
checked (fields named in `invalid_descriptor` errors, unmodeled encodings raise
`UnsupportedTIRxError`), and the TMEM footprint must lie in a live allocation.  The
MMA executes when the scheduler delivers its completion (FIFO, so a later
`tcgen05.commit` of the same thread arrives after it):

    D[i][j] = sum_k A[i][k] * B[j][k]  (+ D[i][j] if enable-input-d)

A is M x K (shared descriptor, K- or MN-major, or TMEM for the ts form), B is N x K
(shared descriptor), D is M x N fp32 (or f16 in the low half of each cell) in TMEM:
M = 128 -> lane L0 + i (L0 = 0); M = 64 -> lane L0 + 32 (i / 16) + i % 16 (L0 in {0, 16}),
column C0 + j.  Numerics (model choice; the PTX leaves order and rounding open): the
K-slab of one MMA is summed exactly in float64 and D is rounded once to fp32 (f16)
when written; tf32 inputs are fp32 with the low 13 mantissa bits dropped.  One numpy
matmul per MMA; operand address arrays are cached per descriptor.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..descriptors import KIND_K, DescriptorError, InstrDescriptor, matrix_addresses, tmem_split
from ..errors import EngineError
from ..memory import SHARED_BASE
from ..tmem import TmemError, record_rows, tmem_of
from .tcgen05 import (at, descriptor_error, lanes_of, smem_descriptor, smem_footprint, tc_state, tmem_error)
from .tma import async_records
from .async_copy import _new_op

_CACHE_LIMIT = 4096


def _operand(w, value: int, rows: int, k: int, esz: int, mn_major: bool, span, what: str):
    """(byte index into the shared pool (rows, k*esz), [(allocation, element offsets)]) of a shared operand."""
    cache = w.rt.shared.__dict__.setdefault("_umma_operands", {})   # per CTA: parts name its allocations
    key = (value, rows, k, esz, mn_major)
    hit = cache.get(key)
    if hit is not None:
        return hit
    desc = smem_descriptor(value, what, span)
    try:
        addrs = matrix_addresses(desc, rows, k, esz, mn_major)
    except DescriptorError as err:
        raise descriptor_error(err, what, value, span, "shared-memory matrix") from None
    parts = smem_footprint(w, addrs, esz, span, what)
    index = (addrs.reshape(-1, 1) - SHARED_BASE + np.arange(esz)).reshape(rows, k * esz)
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = hit = (index, parts)
    return hit


def _values(raw_u8: np.ndarray, dtype: str, shape) -> np.ndarray:
    """Element bytes -> float64 matrix."""
    if dtype == "tfloat32":
        bits = raw_u8.view("<u4") & np.uint32(0xFFFFE000)
        return bits.view(np.float32).reshape(shape).astype(np.float64)
    return raw_u8.view(V.NP_DTYPE["bfloat16"] if dtype == "bfloat16" else np.float16).reshape(shape).astype(np.float64)


def _d_lanes(m: int, l0: int, span, what: str) -> np.ndarray:
    i = np.arange(m, dtype=np.int64)
    if m == 128:
        if l0 != 0:
            raise EngineError("tmem_access_invalid_target", f"{what}: M = 128 uses all 128 lanes; the lane of the "
                                                            f"TMEM address must be 0, not {l0}", span, lane=l0)
        return i
    if l0 not in (0, 16):
        raise EngineError("tmem_access_invalid_target", f"{what}: M = 64 needs lane 0 or 16 in the TMEM address, not "
                                                        f"{l0}", span, lane=l0)
    return l0 + 32 * (i // 16) + i % 16


def _mma(ctx, call, info):
    kind = info.quals["kind"]
    ts = info.quals["form"] == "ts"
    ops = call.operands
    d_fn, a_fn, b_fn, i_fn = (ctx.expr(o) for o in ops[:4])
    mask_fns = [ctx.expr(o) for o in ops[4:8]] if len(ops) == 9 else []
    en_fn = ctx.expr(ops[-1])
    site = ctx.site(call, "tcgen05.mma")
    span = call.span
    what = f"tcgen05.mma.cta_group::1.{kind} ({'ts' if ts else 'ss'})"
    kdim = KIND_K[kind]

    def run(w):
        d_all, a_all, b_all, i_all, en_all = d_fn(w), a_fn(w), b_fn(w), i_fn(w), en_fn(w)
        masks_all = [f(w) for f in mask_fns]
        eng = w.eng
        tm = tmem_of(w.rt)
        w.effects += 1
        for lane in lanes_of(w):
            ival = at(i_all, lane) & 0xFFFFFFFF
            idesc = InstrDescriptor.decode(ival)
            try:
                idesc.validate(kind)
            except DescriptorError as err:
                raise descriptor_error(err, what, ival, span, "instruction") from None
            m, n = idesc.m, idesc.n
            dtype = idesc.in_dtype(kind)
            esz = 4 if kind == "kind::tf32" else 2
            taddr = at(d_all, lane) & 0xFFFFFFFF
            dl0, dc0 = tmem_split(taddr)
            d_lanes = _d_lanes(m, dl0, span, what)
            d_cols = np.arange(dc0, dc0 + n)
            try:
                d_alloc = tm.covering(d_lanes, d_cols, what + " D")
            except TmemError as err:
                raise tmem_error(err, span) from None
            if ts:
                if idesc.transpose_a:
                    raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: "
                                                            f"transpose_a: A in TMEM must be K-major (bit 15 = 0)",
                                      span, field="transpose_a", descriptor="instruction")
                aaddr = at(a_all, lane) & 0xFFFFFFFF
                al0, ac0 = tmem_split(aaddr)
                a_lanes = _d_lanes(m, al0, span, what)
                a_cols = ac0 + (np.arange(kdim) * esz * 8) // 32
                try:
                    a_alloc = tm.covering(a_lanes, a_cols, what + " A")
                except TmemError as err:
                    raise tmem_error(err, span) from None
                a_src = (a_lanes, a_cols, a_alloc)
            else:
                a_src = _operand(w, at(a_all, lane), m, kdim, esz, bool(idesc.transpose_a), span, what + " A")
            b_src = _operand(w, at(b_all, lane), n, kdim, esz, bool(idesc.transpose_b), span, what + " B")
            disabled = np.zeros(128, dtype=np.bool_)
            for q, mf in enumerate(masks_all):
                bits = at(mf, lane) & 0xFFFFFFFF
                disabled[32 * q:32 * q + 32] = (bits >> np.arange(32)) & 1 == 1
            accumulate = bool(at(en_all, lane))
            op = _new_op(w, "tcgen05.mma", lane, site)
            tc_state(w).since_commit[lane].append(op)
            eng.sync(w, "async.issue", site, details={
                "op": op.id, "kind": op.kind, "lane": lane, "form": "ts" if ts else "ss", "mma_kind": kind,
                "d_tmem": taddr, "m": m, "n": n, "accumulate": accumulate, "allocation": d_alloc.id})
            eng.enqueue(_complete(w, op, tm, idesc, dtype, esz, kdim, a_src, ts, b_src, d_lanes, d_cols, d_alloc,
                                  disabled, accumulate, span, what))
    return run, False


def _complete(w, op, tm, idesc, dtype, esz, kdim, a_src, ts, b_src, d_lanes, d_cols, d_alloc, disabled, accumulate,
              span, what):
    pool = w.rt.shared.pool
    eng = w.eng

    def complete():
        m, n = idesc.m, idesc.n
        try:
            tm.covering(d_lanes, d_cols, what + " D")
            if ts:
                tm.covering(a_src[0], a_src[1], what + " A")
        except TmemError as err:
            raise tmem_error(err, span, warp=op.warp) from None
        if ts:
            a_lanes, a_cols, a_alloc = a_src
            cells = tm.cells[np.ix_(a_lanes, a_cols)]
            if esz == 2:
                half = (np.arange(kdim) % 2) * 16
                raw = ((cells >> half) & 0xFFFF).astype("<u2")
            else:
                raw = cells.astype("<u4")
            a = _values(raw.view(np.uint8), dtype, (m, kdim))
            record_rows(eng, op.site, a_alloc, a_lanes, int(a_cols[0]), int(a_cols[-1] - a_cols[0]) + 1, "read", op)
        else:
            a_index, a_parts = a_src
            a = _values(pool[a_index], dtype, (m, kdim))
            for alloc, offs in a_parts:
                async_records(eng, op, alloc, offs, esz, "read")
        b_index, b_parts = b_src
        b = _values(pool[b_index], dtype, (n, kdim))
        for alloc, offs in b_parts:
            async_records(eng, op, alloc, offs, esz, "read")
        if idesc.negate_a:
            a = -a
        if idesc.negate_b:
            b = -b
        acc = a @ b.T
        block = np.ix_(d_lanes, d_cols)
        f16 = idesc.d_type == 0
        if accumulate:
            old = tm.cells[block]
            acc += (old & 0xFFFF).astype(np.uint16).view(np.float16) if f16 else old.view(np.float32)
            record_rows(eng, op.site, d_alloc, d_lanes, int(d_cols[0]), n, "read", op)
        with np.errstate(over="ignore", invalid="ignore"):
            new = acc.astype(np.float16).view(np.uint16).astype(np.uint32) if f16 else acc.astype(np.float32).view(
                np.uint32)
        keep = ~disabled[d_lanes]
        if keep.all():
            tm.cells[block] = new
        else:
            tm.cells[np.ix_(d_lanes[keep], d_cols)] = new[keep]
        record_rows(eng, op.site, d_alloc, d_lanes[keep], int(d_cols[0]), n, "write", op)
        op.done = True
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})
    return complete


HANDLERS = {"tcgen05.mma": _mma}
