"""PTX bit manipulation per lane on numpy arrays: logic (`and`/`or`/`xor`/`not`), shifts, `popc`/`clz`,
`fns` and `prmt` (PTX ISA 9.7.8), as `ir.ops.arith_forms` classifies them.  Operands are read and results
written by bit pattern through ptx_math's register readers and writers."""
from __future__ import annotations

import numpy as np

from ir.ops import arith_forms as AF

from ..errors import UnsupportedTIRxError
from .ptx_math import _form, _readers, _unsupported, reader, writer


def _bitcount(ctx, call, info):
    """popc / clz (PTX ISA 9.7.3): the number of set bits, or of leading zeros, of a b32/b64 register, as a u32."""
    form = _form(call)
    t = form.types[0]
    bits = AF.TYPES[t][0]
    src = reader(ctx, call.operands[1], t, raw=True)
    if src is None:
        return _unsupported(ctx, call, f"{call.op}: operand of type {call.operands[1].dtype} is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, "u32")
    count = (lambda v: bin(v).count("1")) if form.head == "popc" else (lambda v: bits - v.bit_length())

    def run(w):
        dst(w, np.array([count(int(v)) for v in src(w).reshape(-1)], dtype=np.uint32))
    return run, False


def _fns(ctx, call, info):
    """fns.b32 d, mask, base, offset (PTX ISA 9.7.3): the position of the |offset|-th set bit of `mask` from bit
    `base` upwards (offset > 0) or downwards (offset < 0); offset 0 asks whether bit `base` is set; 0xffffffff
    when there is none.  A base above 31 is undefined in PTX: not modeled."""
    mask_f, base_f, off_f = (ctx.expr(o) for o in call.operands[1:])
    dst = writer(ctx, call.operands[0], call.op, "b32")
    span = call.span

    def one(m: int, b: int, off: int) -> int:
        if off == 0:
            return b if m >> b & 1 else 0xFFFFFFFF
        step, count = (1 if off > 0 else -1), abs(off) - 1
        pos = b
        while 0 <= pos < 32:
            if m >> pos & 1:
                if count == 0:
                    return pos
                count -= 1
            pos += step
        return 0xFFFFFFFF

    def run(w):
        ms, bs, os_ = np.broadcast_arrays(*(np.asarray(f(w)).reshape(-1) for f in (mask_f, base_f, off_f)))
        if (bs.astype(np.int64) > 31).any():
            raise UnsupportedTIRxError(call.op, span, "fns with a base above 31 (undefined in PTX)")
        dst(w, np.array([one(int(m) & 0xFFFFFFFF, int(b), int(np.int32(o))) for m, b, o in zip(ms, bs, os_)],
                        dtype=np.uint32))
    return run, False


def _prmt(ctx, call, info):
    """prmt.b32 d, a, b, c, the generic form (PTX ISA 9.7.8.7): the bytes of {b, a} are numbered 0-7 (a's are
    0-3); byte i of d is chosen by the 4-bit selector c[4i+3:4i]: its 3 low bits pick the source byte, its msb
    replicates that byte's sign bit over the 8 bits instead of copying it.  The modes (.f4e, .b4e, .rc8, .ecl,
    .ecr, .rc16) are refused by the form parser."""
    srcs = _readers(ctx, call.operands[1:], ["b32"] * 3, raw=True)
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a b32 register")
    dst = writer(ctx, call.operands[0], call.op, "b32")

    def run(w):
        a, b, c = (x.astype(np.uint64) for x in np.broadcast_arrays(*(np.asarray(f(w)).reshape(-1) for f in srcs)))
        pool = (b << np.uint64(32)) | a
        out = np.zeros(a.shape, np.uint64)
        for i in range(4):
            sel = (c >> np.uint64(4 * i)) & np.uint64(0xF)
            byte = (pool >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            sign = np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0))
            out |= np.where(sel & np.uint64(8), sign, byte) << np.uint64(8 * i)
        dst(w, out.astype(np.uint32))
    return run, False


def _logic(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    srcs = _readers(ctx, call.operands[1:], [t] * (len(call.operands) - 1), raw=True)
    if srcs is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.get(form.head)

    def run(w):
        vals = [f(w) for f in srcs]
        if t == "pred":
            vals = [v != 0 for v in vals]
            r = ~vals[0] if op is None else op(*np.broadcast_arrays(*vals))
            return dst(w, r.astype(np.uint32))
        dst(w, ~vals[0] if op is None else op(*np.broadcast_arrays(*vals)))
    return run, False


def _shift(ctx, call, info):
    form = _form(call)
    t = form.types[0]
    bits, elem, _ = AF.TYPES[t]
    a = reader(ctx, call.operands[1], t, raw=not t.startswith("s"))
    b = reader(ctx, call.operands[2], "u32", raw=True)
    if a is None or b is None:
        return _unsupported(ctx, call, f"{call.op}: an operand is not a {t} register")
    dst = writer(ctx, call.operands[0], call.op, t)
    left = form.head == "shl"
    signed = t.startswith("s")

    def run(w):
        x, n = np.broadcast_arrays(a(w), b(w))
        # PTX clamps the shift amount: shifting by the width or more shifts everything out
        big = n >= bits
        k = np.where(big, 0, n).astype(x.dtype)
        r = (x << k) if left else (x >> k)
        fill = np.where(x < 0, x.dtype.type(-1), x.dtype.type(0)) if signed and not left else np.zeros_like(x)
        dst(w, np.where(big, fill, r).astype(x.dtype))
    return run, False


HANDLERS = {
    "math.and": _logic, "math.or": _logic, "math.xor": _logic, "math.not": _logic,
    "math.shl": _shift, "math.shr": _shift,
    "math.popc": _bitcount, "math.clz": _bitcount, "math.fns": _fns, "math.prmt": _prmt,
}
