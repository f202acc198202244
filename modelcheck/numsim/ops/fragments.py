"""Warp-collective fragment operations: ldmatrix, stmatrix, movmatrix, mma.sync, redux.sync.

The lane maps are PTX ISA 9.7.14.5 (Matrix Data-Movement and mma.sync fragments):

- an m8n8 .b16 matrix is 8 rows of 16 bytes; ldmatrix/stmatrix `.xN` move N matrices and lane
  `8*i + r` supplies the shared address of row r of matrix i (x1: lanes 0-7, x2: 0-15, x4: 0-31;
  the other lanes' addresses are ignored on sm_80+). Register i of lane l holds, in its low and high
  halves, elements (l/4, 2*(l%4)) and (l/4, 2*(l%4)+1) of matrix i; with `.trans`, elements
  (2*(l%4), l/4) and (2*(l%4)+1, l/4) (9.7.14.5.15-16). movmatrix.trans maps a register held in
  the first layout to the transposed matrix in the same layout (9.7.14.5.17).
- mma.sync m16n8k16 / m16n8k8 with f16/bf16 A (row) and B (col), f32 C/D (9.7.14.5.8 and
  9.7.14.5.9; g = lane/4, t = lane%4): A register j holds A[g + 8*(j%2), 2t + 8*(j/2) + {0,1}],
  B register j holds B[2t + 8*j + {0,1}, g], D/C element j is D[g + 8*(j/2), 2t + j%2].
- redux.sync (9.7.12.13) reduces over the member lanes and gives every one the result; `.abs`
  takes |a|, `.NaN` makes any NaN input give the canonical NaN (without it NaNs are ignored unless
  all inputs are NaN), and +0.0 > -0.0.

ldmatrix reads and stmatrix writes shared memory: each row is one 16-byte access attributed to the
lane that supplied its address, reported as one record per instruction, so Racecheck judges them
as it judges `ld.shared.v4`/`st.shared.v4`. mma.sync, movmatrix and redux.sync are register-only.
All need their whole warp (or member mask) converged.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..errors import EngineError, UnsupportedTIRxError
from . import require_full_warp, uniform
from .access import decode
from .memory import _check_aligned, _from_register, _to_register

FULL = 0xFFFFFFFF
_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3          # groupID and threadID_in_group
_CANONICAL_NAN = np.array([0x7FFFFFFF], dtype=np.uint32).view(np.float32)[0]


def _row_lanes(count: int) -> np.ndarray:
    lanes = np.zeros(32, dtype=np.bool_)
    lanes[:8 * count] = True
    return lanes


def _space(info) -> str:
    return "shared" if "space" in info.quals else "generic"


def _full_warp(w, what: str, span) -> None:
    require_full_warp(w, what, span)
    if w.full_mask is not None:
        raise UnsupportedTIRxError(what, span, "a warp-collective fragment op in a warp of fewer than 32 threads")


def _rows(w, addr_fn, count: int, info, span, what: str):
    """(allocation, byte offset of each address lane, address-lane mask) for `count` m8n8 matrices."""
    lanes = _row_lanes(count)
    addr = addr_fn(w)
    saved = w.mask
    w.mask = lanes      # only the address lanes' addresses are used (the rest may be anything)
    try:
        alloc, offs = decode(w, addr, 16, _space(info), span, what)
    finally:
        w.mask = saved
    if alloc.space != "shared":
        raise EngineError("invalid_address", f"{what}: address {alloc.base:#x}+ is not in shared memory", span)
    offs = np.broadcast_to(np.asarray(offs, dtype=np.int64), (32,)).copy()
    offs[~lanes] = 0
    _check_aligned(offs, 16, span, what, alloc)
    return alloc, offs, lanes


def _pack(m: np.ndarray, trans: bool) -> np.ndarray:
    """An 8x8 uint16 matrix -> each lane's 32-bit register (low half the lower column)."""
    lo, hi = (m[2 * _T, _G], m[2 * _T + 1, _G]) if trans else (m[_G, 2 * _T], m[_G, 2 * _T + 1])
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def _unpack(reg: np.ndarray, trans: bool) -> np.ndarray:
    """Each lane's 32-bit register -> the 8x8 uint16 matrix it is a fragment of (the inverse of `_pack`)."""
    m = np.zeros((8, 8), dtype=np.uint16)
    lo, hi = (reg & 0xFFFF).astype(np.uint16), (reg >> 16).astype(np.uint16)
    if trans:
        m[2 * _T, _G], m[2 * _T + 1, _G] = lo, hi
    else:
        m[_G, 2 * _T], m[_G, 2 * _T + 1] = lo, hi
    return m


def _bits(fn, w, dtype: str) -> np.ndarray:
    """A register operand's 32 bits on every lane."""
    return V.as_vec(_from_register(fn(w), dtype, "b32"), "uint32")


def _ldmatrix(ctx, call, info):
    count = int(info.quals["num"])
    dsts = [ctx.lvalue(call.operands[i], "ldmatrix") for i in range(count)]
    addr = ctx.expr(call.operands[count])
    trans = "trans" in info.quals
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        _full_warp(w, "ldmatrix", span)
        alloc, offs, lanes = _rows(w, addr, count, info, span, "ldmatrix")
        if not alloc.all_written and alloc.unwritten(offs[lanes], 16):
            w.eng.note_uninitialized(site, w, alloc.name)
        w.eng.access(w, site, alloc, offs, 16, "read", lanes=lanes)
        for i, d in enumerate(dsts):
            m = np.stack([alloc.data[o:o + 16].view(np.uint16) for o in offs[8 * i:8 * i + 8].tolist()])
            d(w, _to_register(_pack(m, trans), "b32", d.dtype))
    return run, False


def _stmatrix(ctx, call, info):
    count = int(info.quals["num"])
    addr = ctx.expr(call.operands[0])
    regs = [(ctx.expr(o), o.dtype) for o in call.operands[1:1 + count]]
    trans = "trans" in info.quals
    site = ctx.site(call, call.op)
    span = call.span

    def run(w):
        _full_warp(w, "stmatrix", span)
        values = [_bits(fn, w, dtype) for fn, dtype in regs]
        alloc, offs, lanes = _rows(w, addr, count, info, span, "stmatrix")
        w.effects += 1
        for i, reg in enumerate(values):
            m = _unpack(reg, trans)
            for r, o in enumerate(offs[8 * i:8 * i + 8].tolist()):
                alloc.data[o:o + 16] = m[r].view(np.uint8)
        alloc.mark_written(offs[lanes], 16)
        w.eng.access(w, site, alloc, offs, 16, "write", lanes=lanes)
    return run, False


def _movmatrix(ctx, call, info):
    d = ctx.lvalue(call.operands[0], "movmatrix")
    a, a_dtype = ctx.expr(call.operands[1]), call.operands[1].dtype
    span = call.span

    def run(w):
        _full_warp(w, "movmatrix", span)
        d(w, _to_register(_pack(_unpack(_bits(a, w, a_dtype), False), True), "b32", d.dtype))
    return run, False


_HALF = {"f16": np.float16, "bf16": "bfloat16"}


def _halves(regs: list[np.ndarray], atype: str) -> tuple[np.ndarray, np.ndarray]:
    """Registers [j][lane] -> (low, high) 16-bit values as float32, each [j][lane]."""
    np_t = V.NP_DTYPE["bfloat16"] if atype == "bf16" else np.float16
    r = np.stack(regs)
    lo = (r & 0xFFFF).astype(np.uint16).view(np_t).astype(np.float32)
    hi = (r >> 16).astype(np.uint16).view(np_t).astype(np.float32)
    return lo, hi


def _mma(ctx, call, info):
    k = 16 if info.quals["shape"] == "m16n8k16" else 8
    na, nb = k // 4, k // 8
    ops = call.operands
    dsts = [ctx.lvalue(ops[i], "mma.sync") for i in range(4)]
    a_fns = [(ctx.expr(o), o.dtype) for o in ops[4:4 + na]]
    b_fns = [(ctx.expr(o), o.dtype) for o in ops[4 + na:4 + na + nb]]
    c_fns = [(ctx.expr(o), o.dtype) for o in ops[4 + na + nb:]]
    atype = info.quals["atype"]
    span = call.span
    rows_d = _G[None, :] + 8 * (np.arange(4)[:, None] // 2)          # D/C element j of each lane
    cols_d = 2 * _T[None, :] + np.arange(4)[:, None] % 2

    def run(w):
        _full_warp(w, "mma.sync", span)
        a_lo, a_hi = _halves([_bits(f, w, dt) for f, dt in a_fns], atype)
        b_lo, b_hi = _halves([_bits(f, w, dt) for f, dt in b_fns], atype)
        c_vals = [V.as_vec(_from_register(f(w), dt, "f32"), "float32") for f, dt in c_fns]
        a = np.zeros((16, k), dtype=np.float32)
        for j in range(na):
            r, c = _G + 8 * (j % 2), 2 * _T + 8 * (j // 2)
            a[r, c], a[r, c + 1] = a_lo[j], a_hi[j]
        b = np.zeros((k, 8), dtype=np.float32)
        for j in range(nb):
            r = 2 * _T + 8 * j
            b[r, _G], b[r + 1, _G] = b_lo[j], b_hi[j]
        c_mat = np.zeros((16, 8), dtype=np.float32)
        for j in range(4):
            c_mat[rows_d[j], cols_d[j]] = c_vals[j]
        with np.errstate(all="ignore"):
            d_mat = (a @ b + c_mat).astype(np.float32)
        for j, dst in enumerate(dsts):      # every operand is read before any destination is written
            dst(w, _to_register(d_mat[rows_d[j], cols_d[j]], "f32", dst.dtype))
    return run, False


_REDUX_NP = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "f32": np.float32}


def _redux(ctx, call, info):
    d = ctx.lvalue(call.operands[0], "redux.sync")
    a, a_dtype = ctx.expr(call.operands[1]), call.operands[1].dtype
    m_fn = ctx.expr(call.operands[2])
    op, ptx_type = info.quals["op"], info.quals["type"]
    use_abs, nan = "abs" in info.quals, "NaN" in info.quals
    span = call.span

    def run(w):
        mm = int(uniform(m_fn(w), w, "member mask", span)) & FULL
        require_full_warp(w, "redux.sync", span, mm, exited_ok=True)
        members = ((mm >> _LANE) & 1).astype(np.bool_)
        stray = w.active() & ~members
        if stray.any():
            lanes = [int(x) for x in np.flatnonzero(stray)]
            raise EngineError("warp_collective_divergence",
                              f"redux.sync executed by lanes {lanes} outside its member mask {mm:#010x} "
                              "(undefined, PTX ISA 9.7.12.13)", span, missing_lanes=lanes, membermask=mm)
        vals = V.as_vec(_from_register(a(w), a_dtype, ptx_type), "float32" if ptx_type == "f32" else
                        ("int32" if ptx_type == "s32" else "uint32"))[members & w.active()]
        d(w, _to_register(np.asarray(_reduce(vals, op, ptx_type, use_abs, nan)), ptx_type, d.dtype))
    return run, False


def _reduce(vals: np.ndarray, op: str, ptx_type: str, use_abs: bool, nan: bool):
    np_t = _REDUX_NP[ptx_type]
    if ptx_type != "f32":
        v = vals.astype(np_t)
        if op == "add":     # truncated to 32 bits
            return np.array(int(v.astype(np.int64).sum()) & FULL, dtype=np.uint32).view(np_t)[()]
        if op == "min":
            return v.min()
        if op == "max":
            return v.max()
        reduce_ = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return reduce_.reduce(v)
    v = np.abs(vals) if use_abs else vals.astype(np.float32)
    isnan = np.isnan(v)
    if isnan.all() or (nan and isnan.any()):
        return _CANONICAL_NAN
    v = v[~isnan]
    best = v.max() if op == "max" else v.min()
    if best == 0:
        # +0.0 > -0.0: max prefers +0.0 when one is present, min prefers -0.0
        zeros = v[v == 0]
        negative = np.signbit(zeros)
        pick_neg = negative.all() if op == "max" else negative.any()
        best = np.float32(-0.0) if pick_neg else np.float32(0.0)
    return np.float32(best)


HANDLERS = {
    "ldmatrix": _ldmatrix,
    "stmatrix": _stmatrix,
    "movmatrix": _movmatrix,
    "mma.sync": _mma,
    "redux.sync": _redux,
}
