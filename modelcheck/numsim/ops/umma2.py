"""`tcgen05.mma.cta_group::2` (kind::f16 / kind::tf32 / kind::f8f6f4, ss and ts forms, M = 256 and 128): one MMA over
a CTA pair.

PTX ISA 9.7.16 (the pair: CTAs whose %cluster_ctarank differ in bit 0) and the data-path split the pair uses: the
even CTA issues; A = [A0; A1] with A0 (rows 0-127) read through the descriptor from the even CTA's shared memory
and A1 (rows 128-255) from the odd CTA's at the same address; B = [B0, B1] with the first N/2 columns (rows of the
N x K operand) from the even CTA and the rest from the odd one; D = [D0; D1], D0 in the even CTA's TMEM and D1 in
the odd CTA's, lanes 0-127 at the same TMEM address (the pair's allocation has the same columns in both).  The
eight disable-output-lane masks cover the 256 rows, 32 per mask.  Every read and write is recorded against the
allocation of the CTA that owns it, so Racecheck judges the peer's accesses to its own shared memory and TMEM.
With A in Tensor Memory (the ts form) each CTA's half of A is rows 0-127 of its own TMEM at the instruction's
address (each CTA provides its (M/2, K) half of A, as the tilus `tcgen05.mma` documentation gives it; the pair's
allocation has the same columns in both), K-major as for cta_group::1.  Numerics as for cta_group::1
(ops/umma.py).

Block scaling (kind::mxf8f6f4 / mxf4 / mxf4nvf4, ss form): each CTA's data path computes its half of D from its
half of A, scaled by the factors of A's rows in its own TMEM (the cta_group::1 layout, rows 0-127 of the half), and
all N columns of B, scaled by B's factors in its own TMEM (the cta_group::1 layout over all N): A's factors are
split over the pair like A, B's are held whole by each CTA (model choice, docs/semantics.md#cta-pairs-cta_group2).
M = 128 (dense, ss form): PTX ISA 9.7.16.10.5 gives it data-path Layout B, "2x2", lane alignment 0.  Each CTA of the
pair supplies M/2 = 64 rows of A and N/2 rows of B and holds its 64 rows of D (CUTLASS MMA_Traits of
SM100_MMA_*_2x1SM_SS: ALayout (2,(M/2,K)), BLayout (2,(N/2,K)), CLayout (2,(M/2,N)), cute/atom/mma_traits_sm100.hpp),
folded over the lanes: row r, column c of a CTA's half sits at lane r + 64 * (c >= N/2), column c % (N/2) from the
instruction's address (CUTLASS tmem_frg_2sm for M_MMA = 64, the "2x2" atom (64,(N/2,2)):(1,(128,64)) in
lane-stride-1 / column-stride-128 units; apache-tvm 0.27 tmem_datapath_layout("B"): "64 rows, column halves folded
across the two 64-lane halves").  The disable-output-lane masks name TMEM lanes, 128 per CTA, as for M = 256.  With
A in TMEM at M = 128 each CTA's 64 rows of A are held twice, on lanes 0-63 and again on 64-127 (CUTLASS
TmemAllocMode::Duplicated for UMMA_2SM_128xNx16_TS: "the input data must be duplicated between the subpartitions
[0,1]<->[2,3]"): each lane half of the data path reads its own copy.
Not modeled (`incomplete`): block scaling with A in TMEM, and block scaling at M = 128.
"""
from __future__ import annotations

import numpy as np

from .. import narrow
from ..blas import product
from ..descriptors import KIND_K, SF_TYPES, tmem_split
from ..errors import EngineError, UnsupportedTIRxError
from ..tmem import TmemError, record_rows, tmem_of
from .async_copy import _new_op
from .pair import check_even, pair_peer
from .tcgen05 import at, lanes_of, tc_state, tmem_error
from .tma import run_records
from .umma import _idesc, _operand, _plans, _scaled, _sf_source, _values, tmem_a

_PLAN_LIMIT = 4096


def pair_mma(ctx, call, info):
    kind = info.quals["kind"]
    ops = call.operands
    what = f"tcgen05.mma.cta_group::2.{kind}"
    span = call.span
    ts = info.quals["form"] == "ts"
    scaled = "block_scale" in info.quals
    if scaled:
        what += ".block_scale"
        if ts:
            raise UnsupportedTIRxError(what, span, "A in Tensor Memory with block scaling is not modeled")
    d_fn, a_fn, b_fn, i_fn = (ctx.expr(o) for o in ops[:4])
    mask_fns = [] if scaled else [ctx.expr(o) for o in ops[4:-1]]
    sf_fns = [ctx.expr(o) for o in ops[4:6]] if scaled else []
    en_fn = ctx.expr(ops[-1])
    site = ctx.site(call, "tcgen05.mma")
    kdim = KIND_K[kind]
    wide = kind in ("kind::f16", "kind::tf32")

    def plan(w, peer, ival, aval, bval, taddr, sfs, mask_bits):
        """What one issue derives from its operand values and the pair's TMEM allocations (ops/umma.py `_Plan`):
        (idesc, shape, halves, D's columns, disabled lanes)."""
        idesc, vec = _idesc(kind, scaled, ival, info.quals, span, what, 2)
        m, n = idesc.m, idesc.n
        if m not in (128, 256):
            raise UnsupportedTIRxError(what, span, f"M = {m}: cta_group::2 is modeled for M = 256 and 128")
        if m == 128 and scaled:
            raise UnsupportedTIRxError(what, span, "M = 128 with block scaling is not modeled")
        if n % 16:
            raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: n: N = {n} "
                                                    f"must split evenly over the pair (a multiple of 16)", span,
                              field="n", descriptor="instruction")
        a_dtype, b_dtype = idesc.operand_dtypes(kind)
        esz = (4 if kind == "kind::tf32" else 2) if wide else 1
        sa, sb = sfs if scaled else (0, 0)
        kk = kdim if wide else narrow.row_bytes(a_dtype, kdim)
        kb = kdim if wide else narrow.row_bytes(b_dtype, kdim)
        l0, c0 = tmem_split(taddr)
        if l0 != 0:
            raise EngineError("tmem_access_invalid_target", f"{what}: D uses all 128 lanes of each CTA; the lane "
                                                            f"of the TMEM address must be 0, not {l0}", span,
                              lane=l0)
        half = m // 2                      # rows of A and D each CTA holds
        d_lanes, d_cols = np.arange(128), np.arange(c0, c0 + (n if m == 256 else n // 2))
        halves = []
        for rt in (w.rt, peer):
            tm = tmem_of(rt)
            try:
                d_alloc = tm.covering(d_lanes, d_cols, f"{what} D (CTA rank {rt.cluster_rank})")
            except TmemError as err:
                raise tmem_error(err, span) from None
            if ts:
                a_src = _tmem_a_half(tm, aval, idesc, ival, kdim, esz, a_dtype, wide, rt, span, what)
            else:
                a_src = _operand(w, aval, half, kk, esz, bool(idesc.transpose_a), span, what + " A", rt)
            b_src = _operand(w, bval, n // 2, kb, esz, bool(idesc.transpose_b), span, what + " B", rt)
            sf = None
            if scaled:
                where = f" (CTA rank {rt.cluster_rank})"
                sf = (vec, SF_TYPES[idesc.sf_type], idesc.a_sf_id, idesc.b_sf_id,
                      _sf_source(tm, sa, 128, span, what + " scale factors A" + where),
                      _sf_source(tm, sb, n, span, what + " scale factors B" + where))
            halves.append((rt, tm, d_alloc, a_src, b_src, sf))
        disabled = np.zeros(256, dtype=np.bool_)
        for q, bits in enumerate(mask_bits):
            disabled[32 * q:32 * q + 32] = (bits >> np.arange(32)) & 1 == 1
        shape = (n, kdim, esz, a_dtype, b_dtype, not scaled and idesc.d_type == 0)
        return idesc, shape, halves, d_cols, disabled

    def run(w):
        check_even(w, what, span)
        peer = pair_peer(w, what, span)
        d_all, a_all, b_all, i_all, en_all = d_fn(w), a_fn(w), b_fn(w), i_fn(w), en_fn(w)
        masks_all = [f(w) for f in mask_fns]
        sf_all = [f(w) for f in sf_fns]
        plans = _plans(w.rt)
        w.effects += 1
        for lane in lanes_of(w):
            ival = at(i_all, lane) & 0xFFFFFFFF
            aval, bval, taddr = at(a_all, lane), at(b_all, lane), at(d_all, lane) & 0xFFFFFFFF
            sfs = tuple(at(f, lane) & 0xFFFFFFFF for f in sf_all)
            mask_bits = tuple(at(mf, lane) & 0xFFFFFFFF for mf in masks_all)
            # both CTAs' TMEM versions: a plan's allocations are live while neither has moved
            versions = (tmem_of(w.rt).version, tmem_of(peer).version)
            key = (site, id(peer), ival, aval, bval, taddr, sfs, mask_bits, versions)    # the plan holds peer
            p = plans.get(key)
            if p is None:
                p = plan(w, peer, ival, aval, bval, taddr, sfs, mask_bits)
                if len(plans) >= _PLAN_LIMIT:
                    plans.clear()
                plans[key] = p
            idesc, shape, halves, d_cols, disabled = p
            accumulate = bool(at(en_all, lane))
            op = _new_op(w, "tcgen05.mma", lane, site)
            tc_state(w).since_commit[lane].append(op)
            w.eng.sync(w, "async.issue", site, details={
                "op": op.id, "kind": op.kind, "lane": lane, "form": "ts" if ts else "ss", "mma_kind": kind,
                "cta_group": 2,
                "d_tmem": taddr, "m": idesc.m, "n": idesc.n, "accumulate": accumulate, "allocation": halves[0][2].id,
                "peer_allocation": halves[1][2].id, "peer_cta": peer.index})
            w.eng.enqueue(_complete(w, op, idesc, shape, halves, d_cols, disabled, accumulate, ts, span, what,
                                    versions))
    return run, False


def _tmem_a_half(tm, aaddr, idesc, ival, kdim, esz, a_dtype, wide, rt, span, what):
    """One CTA's half of A in its own Tensor Memory: lanes 0-127 at the instruction's address, K-major."""
    if idesc.transpose_a:
        raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: transpose_a: A in "
                                                f"TMEM must be K-major (bit 15 = 0)", span, field="transpose_a",
                          descriptor="instruction")
    if not wide and a_dtype not in ("float8_e4m3fn", "float8_e5m2"):
        raise UnsupportedTIRxError(what, span, f"a {a_dtype} A operand in Tensor Memory is not modeled")
    al0, ac0 = tmem_split(aaddr & 0xFFFFFFFF)
    if al0 != 0:
        raise EngineError("tmem_access_invalid_target", f"{what}: A in TMEM uses all 128 lanes of each CTA; the lane "
                                                        f"of its address must be 0, not {al0}", span, lane=al0)
    a_lanes, a_cols = np.arange(128), ac0 + (np.arange(kdim) * esz * 8) // 32
    try:
        return ("tmem", (a_lanes, a_cols, tm.covering(a_lanes, a_cols, f"{what} A (CTA rank {rt.cluster_rank})")))
    except TmemError as err:
        raise tmem_error(err, span) from None


def _folded(a_half: np.ndarray, b: np.ndarray, ncols: int, ts: bool) -> np.ndarray:
    """One CTA's D at M = 128 as its 128 lanes hold it (Layout B): lane r < 64 row r x B's first N/2 rows, lane
    64 + r row r x the rest.  With A in TMEM each lane half reads its own lanes' copy of the 64 rows (CUTLASS
    TmemAllocMode::Duplicated: "each subpartition holds all columns of the A matrix needed"), so a kernel that does
    not duplicate them gets what its lanes 64-127 hold."""
    top, bottom = (a_half[:64], a_half[64:]) if ts else (a_half, a_half)
    return np.vstack([product(top, b[:ncols]), product(bottom, b[ncols:])])


def _complete(w, op, idesc, shape, halves, d_cols, disabled, accumulate, ts, span, what, versions):
    eng = w.eng
    n, kdim, esz, a_dtype, b_dtype, f16 = shape
    d_lanes = np.arange(128)
    half = idesc.m // 2
    ncols = len(d_cols)

    def complete():
        # an alloc / dealloc in either CTA since the issue: D (and A) must still be live
        moved = tuple(h[1].version for h in halves) != versions
        for rt, tm, *_ in halves:
            if rt.exited:
                raise EngineError("cluster_exit_while_peer_access", f"{what} (issued by warp {op.warp} of CTA "
                                                                    f"{op.cta}) completes after CTA {rt.index} exited",
                                  span, peer_cta=rt.index, warp=op.warp)
            try:
                if moved:
                    tm.covering(d_lanes, d_cols, f"{what} D (CTA rank {rt.cluster_rank})")
            except TmemError as err:
                raise tmem_error(err, span, warp=op.warp) from None
        a_parts, b_parts = [], []
        for rt, tm, _, a_src, (b_index, b_allocs), _ in halves:
            pool = rt.shared.pool
            if ts:
                _, cells = a_src
                try:
                    if moved:
                        tm.covering(cells[0], cells[1], f"{what} A (CTA rank {rt.cluster_rank})")
                except TmemError as err:
                    raise tmem_error(err, span, warp=op.warp) from None
                a_parts.append(tmem_a(eng, op, tm, cells, kdim, esz, a_dtype))
            else:
                a_index, a_allocs = a_src
                a_parts.append(_values(pool[a_index], a_dtype, (half, kdim)))
                for alloc, _, runs in a_allocs:
                    run_records(eng, op, alloc, *runs, "read")
            b_parts.append(_values(pool[b_index], b_dtype, (n // 2, kdim)))
            for alloc, _, runs in b_allocs:
                run_records(eng, op, alloc, *runs, "read")
        if idesc.negate_a:
            a_parts = [-x for x in a_parts]
        a, b = np.vstack(a_parts), np.vstack(b_parts)
        if idesc.negate_b:
            b = -b
        if halves[0][5] is not None:      # block-scaled: each CTA's factors scale its half of A and all of B
            acc = np.vstack([_scaled(eng, op, tm, sf, 128, n, kdim, a[128 * h:128 * h + 128], b, (a_dtype, b_dtype))
                             for h, (_rt, tm, _, _, _, sf) in enumerate(halves)])
        elif half == 128:
            acc = product(a, b)
        else:   # Layout B: lanes 0-63 compute the CTA's 64 rows x the first N/2 columns, lanes 64-127 the rest
            acc = np.vstack([_folded(a_parts[h], b, ncols, ts) for h in range(2)])
        block = (slice(None), slice(int(d_cols[0]), int(d_cols[0]) + ncols))    # D: all 128 lanes of each CTA
        for h, (_rt, tm, d_alloc, *_) in enumerate(halves):
            rows = acc[128 * h:128 * h + 128]
            if accumulate:
                old = tm.cells[block]
                rows = rows + ((old & 0xFFFF).astype(np.uint16).view(np.float16) if f16 else old.view(np.float32))
                record_rows(eng, op.site, d_alloc, d_lanes, int(d_cols[0]), ncols, "read", op)
            with np.errstate(over="ignore", invalid="ignore"):
                new = rows.astype(np.float16).view(np.uint16).astype(np.uint32) if f16 else \
                    rows.astype(np.float32).view(np.uint32)
            keep = ~disabled[128 * h:128 * h + 128]
            if keep.all():
                tm.cells[block] = new
            else:
                tm.cells[np.ix_(d_lanes[keep], d_cols)] = new[keep]
            record_rows(eng, op.site, d_alloc, d_lanes[keep], int(d_cols[0]), ncols, "write", op)
        op.done = True
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})
    return complete
