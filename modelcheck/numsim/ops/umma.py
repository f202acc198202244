"""`tcgen05.mma`, cta_group::1, ss and ts forms (ptx-encodings §4-6): kind::f16 / kind::tf32, kind::f8f6f4, and
the block-scaled kind::mxf8f6f4 / kind::mxf4 / kind::mxf4nvf4 (scale factors from TMEM: `_scaled`).

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
matmul per MMA; operand address arrays are cached per descriptor.  Narrow operands (numsim/narrow.py) are
read as bytes, 32 per K-row, and decoded exactly; the `.collector::a|b::*` qualifiers only say where the
hardware keeps an operand between MMAs, so A and B are always read from their source.
"""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from .. import values as V
from .. import narrow
from ..blas import product
from ..descriptors import (KIND_K, SF_TYPES, BlockScaledInstrDescriptor, DescriptorError, InstrDescriptor,
                           byte_runs, matrix_addresses, tmem_split)
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import SHARED_BASE
from ..tmem import TmemError, record_rows, tmem_of
from .tcgen05 import (at, descriptor_error, lanes_of, smem_descriptor, smem_footprint, tc_state, tmem_error)
from .tma import run_records
from .async_copy import _new_op

_CACHE_LIMIT = 4096
_SHARED_LIMIT = 256     # process-wide address arrays (a stage ring has a few dozen descriptors)


def _operand(w, value: int, rows: int, k: int, esz: int, mn_major: bool, span, what: str, rt=None):
    """(byte index into the shared pool (rows, k*esz), [(allocation, element offsets, their byte runs)]) of a shared
    operand in CTA `rt` (default: the issuing warp's)."""
    rt = rt or w.rt
    cache = rt.shared.__dict__.setdefault("_umma_operands", {})   # per CTA: parts name its allocations
    key = (value, rows, k, esz, mn_major)
    hit = cache.get(key)
    if hit is not None:
        return hit
    shape = _ADDRESSES.get(key)         # the addresses are the descriptor's alone: shared by every CTA
    if shape is None:
        desc = smem_descriptor(value, what, span)
        try:
            addrs = matrix_addresses(desc, rows, k, esz, mn_major)
        except DescriptorError as err:
            raise descriptor_error(err, what, value, span, "shared-memory matrix") from None
        index = (addrs.reshape(-1, 1) - SHARED_BASE + np.arange(esz)).reshape(rows, k * esz)
        if len(_ADDRESSES) >= _SHARED_LIMIT:
            _ADDRESSES.clear()
        _ADDRESSES[key] = shape = (addrs, index)
    addrs, index = shape
    # every CTA of a launch has its one static shared layout: the offsets are the same in each, only the
    # allocation differs, so they are kept once per layout (per CTA: ~6 KB a descriptor, 200 MB on a 148-CTA GEMM)
    layout = getattr(rt.shared, "layout", None)
    shared = layout.__dict__.setdefault("_umma_parts", {}) if layout is not None else {}
    named = shared.get(key)
    if named is None:
        # with each part its byte runs (`byte_runs(offs, esz)`, the records of every MMA reading it)
        parts = [(a, offs, byte_runs(offs, esz)) for a, offs in smem_footprint(w, addrs, esz, span, what, rt)]
        if len(shared) >= _CACHE_LIMIT:
            shared.clear()
        shared[key] = [(a.name, offs, runs) for a, offs, runs in parts]
    else:
        allocs = rt.shared.allocs
        parts = [(allocs[name], offs, runs) for name, offs, runs in named]
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = hit = (index, parts)
    return hit


_ADDRESSES: dict = {}       # (descriptor, rows, k, esz, mn_major) -> (element addresses, pool byte index)


def _values(raw_u8: np.ndarray, dtype: str, shape) -> np.ndarray:
    """Element bytes -> float64 matrix."""
    if dtype not in ("tfloat32", "bfloat16", "float16"):
        return narrow.values(raw_u8.reshape(shape[0], -1), dtype, shape[1])
    if dtype == "tfloat32":
        bits = raw_u8.view("<u4") & np.uint32(0xFFFFE000)
        return bits.view(np.float32).reshape(shape).astype(np.float64)
    return raw_u8.view(V.NP_DTYPE["bfloat16"] if dtype == "bfloat16" else np.float16).reshape(shape).astype(np.float64)


def ws_bands(m: int, n: int, l0: int, c0: int, span, what: str) -> list:
    """The D footprint of `tcgen05.mma.ws` as bands (lanes, first column, columns, slice of D's N): data paths E
    (M = 64) and G (M = 32) fold N into 128 / M parts, part b of D[i][j] at lane i + M*b and column
    C0 + j % (N / parts) (PTX ISA 9.7.16.10.5; TVM's tmem_datapath_layout, CUTLASS's tmem_frg_ws); M = 128 is
    layout D.  The TMEM address must name lane 0."""
    if l0 != 0:
        raise EngineError("tmem_access_invalid_target", f"{what}: the weight-stationary D layout starts at TMEM lane "
                                                        f"0, not {l0}", span, lane=l0)
    parts = 128 // m
    width = n // parts
    return [(np.arange(m) + m * b, c0, width, slice(b * width, (b + 1) * width)) for b in range(parts)]


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


_SCALE_VEC = {"scale_vec::1X": 1, "scale_vec::2X": 2, "scale_vec::4X": 4}
_BLOCK = {"block32": 32, "block16": 16}


def _vec_qualifier(quals, kdim: int) -> int | None:
    """Elements per scale factor the instruction names (`.scale_vec::NX` = K / N, `.blockNN` = NN), if any."""
    for q, nsf in _SCALE_VEC.items():
        if q in quals:
            return kdim // nsf
    return next((v for q, v in _BLOCK.items() if q in quals), None)


def _idesc(kind, scaled, ival, quals, span, what, cta_group=1):
    """(decoded descriptor, elements per scale factor or 0); invalid fields name themselves."""
    try:
        if not scaled:
            idesc = InstrDescriptor.decode(ival)
            idesc.validate(kind, cta_group, ws="ws" in quals)
            return idesc, 0
        sdesc = BlockScaledInstrDescriptor.decode(ival)
        allowed = sdesc.validate(kind, cta_group)
    except DescriptorError as err:
        raise descriptor_error(err, what, ival, span, "instruction") from None
    named = _vec_qualifier(quals, KIND_K[kind])
    vec = allowed[0] if named is None or named not in allowed else named
    if named is not None and named != vec:
        raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: sf_type: scale format "
                                                f"{SF_TYPES[sdesc.sf_type]} scales blocks of {vec} elements, but the "
                                                f"instruction names blocks of {named}", span, field="sf_type",
                          descriptor="instruction")
    nsf = KIND_K[kind] // vec
    for field, sf_id in (("a_sf_id", sdesc.a_sf_id), ("b_sf_id", sdesc.b_sf_id)):
        if sf_id % nsf:      # the ids pick the first of nsf consecutive bytes of a 32-bit cell
            raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: {field}: scale "
                                                    f"factor id {sf_id} is not a multiple of {nsf} (scales per row "
                                                    f"per MMA)", span, field=field, descriptor="instruction")
    return sdesc, vec


def _sf_source(tm, addr: int, n: int, span, what: str):
    """(base column, allocation) of a scale-factor operand of `n` rows (bits 30-31 of the address, CUTLASS's
    byte offset, are ignored: the descriptor's scale-factor id picks the byte)."""
    lane, col = tmem_split(addr & 0x3FFFFFFF)
    if lane != 0:
        raise EngineError("tmem_access_invalid_target", f"{what}: scale factors start at TMEM lane 0, not {lane}",
                          span, lane=lane)
    try:
        return col, tm.covering(np.arange(128), col + np.arange((n + 31) // 32), what)
    except TmemError as err:
        raise tmem_error(err, span) from None


def _mma(ctx, call, info):
    kind = info.quals["kind"]
    ts = info.quals["form"] == "ts"
    scaled = "block_scale" in info.quals
    ops = call.operands
    if info.quals.get("cta_group") == "2":
        from .umma2 import pair_mma      # umma2 builds on this module's helpers
        return pair_mma(ctx, call, info)
    ws = "ws" in info.quals
    d_fn, a_fn, b_fn, i_fn = (ctx.expr(o) for o in ops[:4])
    mask_fns = [ctx.expr(o) for o in ops[4:8]] if len(ops) == 9 and not scaled else []
    sf_fns = [ctx.expr(o) for o in ops[4:6]] if scaled else []
    en_fn = ctx.expr(ops[4] if ws else ops[-1])
    zcm_fn = ctx.expr(ops[5]) if ws and len(ops) == 6 else None
    site = ctx.site(call, "tcgen05.mma")
    span = call.span
    what = (f"tcgen05.mma{'.ws' if ws else ''}.cta_group::1.{kind}{'.block_scale' if scaled else ''} "
            f"({'ts' if ts else 'ss'})")
    kdim = KIND_K[kind]
    wide = kind in ("kind::f16", "kind::tf32")
    if ts and scaled:
        raise UnsupportedTIRxError(what, span, "A in Tensor Memory with block scaling is not modeled")

    def plan(w, tm, ival, aval, bval, taddr, zcm, sfs, mask_bits):
        """Everything one issue derives from its operand values and the CTA's TMEM allocations (decoded
        descriptors, footprints, allocations): the same for every issue with the same values (`_mma`'s cache)."""
        idesc, vec = _idesc(kind, scaled, ival, info.quals, span, what)
        m, n = idesc.m, idesc.n
        a_dtype, b_dtype = idesc.operand_dtypes(kind)
        esz = (4 if kind == "kind::tf32" else 2) if wide else 1
        kk = kdim if wide else narrow.row_bytes(a_dtype, kdim)        # elements (wide) or bytes per row
        kb = kdim if wide else narrow.row_bytes(b_dtype, kdim)
        dl0, dc0 = tmem_split(taddr)
        if ws:
            if (zcm >> 39) & 1:
                # bit 39 clear: an all-zero mask, every column of B takes part (PTX Table 48)
                raise UnsupportedTIRxError(what, span, "a zero-column mask descriptor with its non-zero-mask "
                                                       "bit (39) set is not modeled")
            bands = ws_bands(m, n, dl0, dc0, span, what)
        else:
            bands = [(_d_lanes(m, dl0, span, what), dc0, n, slice(0, n))]
        d_lanes = np.concatenate([b[0] for b in bands])
        d_cols = np.arange(dc0, dc0 + bands[0][2])
        try:
            d_alloc = tm.covering(d_lanes, d_cols, what + " D")
        except TmemError as err:
            raise tmem_error(err, span) from None
        if ts:
            if idesc.transpose_a:
                raise EngineError("invalid_descriptor", f"{what}: instruction descriptor {ival:#010x}: "
                                                        f"transpose_a: A in TMEM must be K-major (bit 15 = 0)",
                                  span, field="transpose_a", descriptor="instruction")
            if not wide and a_dtype not in ("float8_e4m3fn", "float8_e5m2"):
                raise UnsupportedTIRxError(what, span, f"a {a_dtype} A operand in Tensor Memory is not modeled")
            al0, ac0 = tmem_split(aval & 0xFFFFFFFF)
            if ws and al0 != 0:
                raise EngineError("tmem_access_invalid_target", f"{what}: A in TMEM starts at lane 0 for the "
                                                                f"weight-stationary form, not {al0}", span,
                                  lane=al0)
            # .ws: part b of D reads its own copy of A from lanes M*b.. (TVM's batched A[2, M, K] fold)
            a_lanes = d_lanes if ws else _d_lanes(m, al0, span, what)
            a_cols = ac0 + (np.arange(kdim) * esz * 8) // 32
            try:
                a_alloc = tm.covering(a_lanes, a_cols, what + " A")
            except TmemError as err:
                raise tmem_error(err, span) from None
            a_src = (a_lanes, a_cols, a_alloc)
        else:
            a_src = _operand(w, aval, m, kk, esz, bool(idesc.transpose_a), span, what + " A")
        b_src = _operand(w, bval, n, kb, esz, bool(idesc.transpose_b), span, what + " B")
        sf = None
        if scaled:
            sa, sb = sfs
            sf = (vec, SF_TYPES[idesc.sf_type], idesc.a_sf_id, idesc.b_sf_id,
                  _sf_source(tm, sa, m, span, what + " scale factors A"),
                  _sf_source(tm, sb, n, span, what + " scale factors B"))
        disabled = np.zeros(128, dtype=np.bool_)
        for q, bits in enumerate(mask_bits):
            disabled[32 * q:32 * q + 32] = (bits >> np.arange(32)) & 1 == 1
        shape = (m, n, kdim, esz, a_dtype, b_dtype, not scaled and idesc.d_type == 0)
        return _Plan(tm.version, idesc, shape, a_src, b_src, bands, d_lanes, d_cols, d_alloc, disabled, sf)

    def run(w):
        d_all, a_all, b_all, i_all, en_all = d_fn(w), a_fn(w), b_fn(w), i_fn(w), en_fn(w)
        masks_all = [f(w) for f in mask_fns]
        zcm_all = zcm_fn(w) if zcm_fn is not None else 0
        sf_all = [f(w) for f in sf_fns]
        eng = w.eng
        tm = tmem_of(w.rt)
        plans = _plans(w.rt)
        w.effects += 1
        for lane in lanes_of(w):
            ival = at(i_all, lane) & 0xFFFFFFFF
            aval, bval, taddr = at(a_all, lane), at(b_all, lane), at(d_all, lane) & 0xFFFFFFFF
            zcm = at(zcm_all, lane) if ws else 0
            sfs = tuple(at(f, lane) & 0xFFFFFFFF for f in sf_all)
            mask_bits = tuple(at(mf, lane) & 0xFFFFFFFF for mf in masks_all)
            # the TMEM version moves with every alloc / dealloc: a plan's allocations are live while it holds
            key = (site, ival, aval, bval, taddr, zcm, sfs, mask_bits, tm.version)
            p = plans.get(key)
            if p is None:
                p = plan(w, tm, ival, aval, bval, taddr, zcm, sfs, mask_bits)
                if len(plans) >= _CACHE_LIMIT:
                    plans.clear()
                plans[key] = p
            accumulate = bool(at(en_all, lane))
            op = _new_op(w, "tcgen05.mma", lane, site)
            tc_state(w).since_commit[lane].append(op)
            m, n = p.shape[0], p.shape[1]
            eng.sync(w, "async.issue", site, details={
                "op": op.id, "kind": op.kind, "lane": lane, "form": "ts" if ts else "ss", "mma_kind": kind,
                "d_tmem": taddr, "m": m, "n": n, "accumulate": accumulate, "allocation": p.d_alloc.id})
            eng.enqueue(_complete(w, op, tm, p, ts, accumulate, span, what))
    return run, False


_SF_CELLS: dict = {}


def _sf_cells(m: int, n: int, ca: int, cb: int, ncols: int):
    """Flat TMEM cell indices of A's factor cells (m,) and B's per lane quarter (4, n) (layout in `_scaled`)."""
    key = (m, n, ca, cb, ncols)
    hit = _SF_CELLS.get(key)
    if hit is None:
        rows, cols = np.arange(m), np.arange(n)
        lanes_b = 32 * np.arange(4)[:, None] + cols[None, :] % 32
        hit = (rows * ncols + ca + rows // 32, lanes_b * ncols + cb + cols[None, :] // 32)
        if len(_SF_CELLS) >= _SHARED_LIMIT:
            _SF_CELLS.clear()
        _SF_CELLS[key] = hit
    return hit


@functools.lru_cache(maxsize=None)
def order_free(a_dtype: str, b_dtype: str, sf_dtype: str, kdim: int, nsf: int) -> bool:
    """Whether every order of summing a K-slab's scaled products gives the same (exact) float64 sum: the
    factors are powers of two (UE8M0) shared by the whole row and column (one per K-slab), and K products of
    elements that are multiples of the types' quanta q (smallest subnormals) and at most their maxima M add up
    exactly (K * Ma * Mb / (qa * qb) <= 2^53; E4M3 at K = 32 needs 41 bits, E5M2 69).  A NaN operand is not
    covered (which NaN a sum returns may depend on the order)."""
    if sf_dtype != "float8_e8m0fnu" or nsf != 1:
        return False
    fa, fb = (ml_dtypes.finfo(narrow.element_type(t)) for t in (a_dtype, b_dtype))
    span = kdim * float(fa.max) * float(fb.max) / (float(fa.smallest_subnormal) * float(fb.smallest_subnormal))
    return span <= 2.0 ** 53


@functools.lru_cache(maxsize=64)
def _sf_b_cells(n: int, cb: int) -> tuple:
    """The cells B's scale factors are read from (lane, column), per column c of factors its 4 x 32 lanes."""
    lanes, cols = [], []
    for c in range((n + 31) // 32):
        width = min(32, n - 32 * c)
        lanes.append((32 * np.arange(4)[:, None] + np.arange(width)[None, :]).reshape(-1))
        cols.append(np.full(lanes[-1].size, cb + c))
    out = np.concatenate(lanes), np.concatenate(cols)
    for x in out:
        x.flags.writeable = False       # (shared by every call)
    return out


def _scaled(eng, op, tm, sf, m: int, n: int, kdim: int, a, b, dtypes=None):
    """A and B multiplied by their block scale factors, read from TMEM (the ss form, M = 128).

    Model (CUTLASS's tmem_sf_frg 4x1 layout; docs/semantics.md#tcgen05-and-tmem): the scale factors of row i
    of A are bytes sf_id_a .. sf_id_a + K/vec - 1 of cell (lane i, column cA + i // 32); the data path of
    lanes 32q..32q+31 reads the factors of column j of B from cell (lane 32q + j % 32, column cB + j // 32),
    so B's factors are read from (and may differ between) the four lane quarters."""
    vec, sf_dtype, a_id, b_id, (ca, a_alloc), (cb, b_alloc) = sf
    nsf = kdim // vec
    shift = 8 * np.arange(nsf, dtype=np.uint32)
    flat_a, flat_b = _sf_cells(m, n, ca, cb, tm.cells.shape[1])
    cells = tm.cells.reshape(-1)
    sfa = narrow.scales(((cells.take(flat_a)[:, None] >> (8 * a_id + shift)) & 0xFF).astype(np.uint8), sf_dtype)
    sfb = narrow.scales(((cells.take(flat_b)[..., None] >> (8 * b_id + shift)) & 0xFF).astype(np.uint8), sf_dtype)
    if not eng.tracing:          # record_rows would only count them
        eng.stats["accesses"] += 4 + (n + 31) // 32
    else:
        # one bulk record per operand, its cells in the order of one record per quarter (A) or column (B)
        lanes = np.arange(128)
        record_rows(eng, op.site, a_alloc, lanes, ca + lanes // 32, 1, "read", op)
        b_lanes, b_cols = _sf_b_cells(n, cb)
        record_rows(eng, op.site, b_alloc, b_lanes, b_cols, 1, "read", op)
    # each element times its block's factor (broadcast over the block: the products np.repeat would give)
    a = (a.reshape(m, nsf, vec) * sfa[:, :, None]).reshape(m, kdim)
    bv = b.reshape(n, nsf, vec)
    same = (sfb[1:] == sfb[0]).all()              # B's factors alike in the four lane quarters (the usual copy)
    bq = (bv * sfb[0][:, :, None]).reshape(n, kdim)
    if same and dtypes is not None and order_free(*dtypes, sf_dtype, kdim, nsf) and \
            not np.isnan(a.sum() + bq.sum()):
        return product(a, bq)       # the four quarters' products in one: each element's sum is exact either way
    acc = np.empty((m, n))
    for q in range(4):
        if q and not same:
            bq = (bv * sfb[q][:, :, None]).reshape(n, kdim)
        acc[32 * q:32 * q + 32] = a[32 * q:32 * q + 32] @ bq.T
    return acc


def _run(lanes: np.ndarray):
    """`lanes` as a basic slice when they are consecutive (indexing then takes a view, not a gather)."""
    lo = int(lanes[0])
    return slice(lo, lo + lanes.size) if (lanes == np.arange(lo, lo + lanes.size)).all() else lanes


def tmem_a(eng, op, tm, a_src, kdim: int, esz: int, a_dtype: str) -> np.ndarray:
    """The A operand read from Tensor Memory (K-major: element k of row i in cell (lane i, column c0 + k * esz //
    4), packed low bytes first), recorded as the MMA's read of those cells."""
    a_lanes, a_cols, a_alloc = a_src
    cells = tm.cells[np.ix_(a_lanes, a_cols)]
    if esz == 2:
        half = (np.arange(kdim) % 2) * 16
        raw = ((cells >> half) & 0xFFFF).astype("<u2")
    elif esz == 1:           # four fp8 elements per cell, element k in byte k % 4
        raw = ((cells >> ((np.arange(kdim) % 4) * 8)) & 0xFF).astype(np.uint8)
    else:
        raw = cells.astype("<u4")
    record_rows(eng, op.site, a_alloc, a_lanes, int(a_cols[0]), int(a_cols[-1] - a_cols[0]) + 1, "read", op)
    return _values(raw.view(np.uint8), a_dtype, (a_lanes.size, kdim))


def _plans(rt) -> dict:
    """The CTA's kept issue plans (per CTA: a plan names its allocations)."""
    return rt.shared.__dict__.setdefault("_umma_plans", {})


class _Plan:
    """One MMA issue's decoded operands (see `_mma`'s `plan`): kept per CTA and reused while TMEM's allocations
    are those it was made under (`version`)."""

    __slots__ = ("version", "idesc", "shape", "a_src", "b_src", "bands", "d_lanes", "d_cols", "d_alloc", "sf",
                 "writes")

    def __init__(self, version, idesc, shape, a_src, b_src, bands, d_lanes, d_cols, d_alloc, disabled, sf):
        self.version, self.idesc, self.shape, self.sf = version, idesc, shape, sf
        self.a_src, self.b_src, self.bands = a_src, b_src, bands
        self.d_lanes, self.d_cols, self.d_alloc = d_lanes, d_cols, d_alloc
        # per band: (its lanes as a slice when consecutive, the kept rows or None when all are, D's part)
        self.writes = []
        for rows, _, _, part in bands:
            keep = ~disabled[rows]
            self.writes.append((_run(rows), None if keep.all() else (rows[keep], keep), part, rows[keep]))


def _complete(w, op, tm, p: _Plan, ts, accumulate, span, what):
    pool = w.rt.shared.pool
    eng = w.eng
    m, n, kdim, esz, a_dtype, b_dtype, f16 = p.shape
    idesc, a_src, b_src, bands, sf = p.idesc, p.a_src, p.b_src, p.bands, p.sf

    def complete():
        if tm.version != p.version:         # an alloc / dealloc since the issue: D (and A) must still be live
            try:
                tm.covering(p.d_lanes, p.d_cols, what + " D")
                if ts:
                    tm.covering(a_src[0], a_src[1], what + " A")
            except TmemError as err:
                raise tmem_error(err, span, warp=op.warp) from None
        if ts:
            a = tmem_a(eng, op, tm, a_src, kdim, esz, a_dtype)
        else:
            a_index, a_parts = a_src
            a = _values(pool[a_index], a_dtype, (m, kdim))
            for alloc, _, runs in a_parts:
                run_records(eng, op, alloc, *runs, "read")
        b_index, b_parts = b_src
        b = _values(pool[b_index], b_dtype, (n, kdim))
        for alloc, _, runs in b_parts:
            run_records(eng, op, alloc, *runs, "read")
        if idesc.negate_a:
            a = -a
        if idesc.negate_b:
            b = -b
        if sf is not None:
            acc = _scaled(eng, op, tm, sf, m, n, kdim, a, b, (a_dtype, b_dtype))
        elif len(bands) > 1 and ts:                 # .ws, A from TMEM: one copy of A per part of D
            acc = np.concatenate([product(a[m * q:m * (q + 1)], b[band[3]]) for q, band in enumerate(bands)], axis=1)
        else:
            acc = product(a, b)
        # D in bands of (lanes, columns) holding slices of N: one band except for the .ws folds
        dc0, width = int(p.d_cols[0]), bands[0][2]
        cols = slice(dc0, dc0 + width)           # D's columns are consecutive: a basic slice, no gather
        writes = p.writes
        if accumulate:
            old = tm.cells[writes[0][0], cols] if len(writes) == 1 else \
                np.concatenate([tm.cells[lanes, cols] for lanes, *_ in writes], axis=1)
            acc += (old & 0xFFFF).astype(np.uint16).view(np.float16) if f16 else old.view(np.float32)
            for band in bands:
                record_rows(eng, op.site, p.d_alloc, band[0], dc0, width, "read", op)
        with np.errstate(over="ignore", invalid="ignore"):
            new = acc.astype(np.float16).view(np.uint16).astype(np.uint32) if f16 else acc.astype(np.float32).view(
                np.uint32)
        for lanes, some, part, kept in writes:
            if some is None:
                tm.cells[lanes, cols] = new[:, part]
            else:
                tm.cells[some[0], cols] = new[some[1]][:, part]
            record_rows(eng, op.site, p.d_alloc, kept, dc0, width, "write", op)
        op.done = True
        eng.async_sync(op.cta, op.warp, "async.complete", op.site, op.iters,
                       details={"op": op.id, "kind": op.kind, "lane": op.lane})
    return complete


HANDLERS = {"tcgen05.mma": _mma}
