"""The in-kernel tcgen05 and wgmma descriptor encoders (numsim/encoders.py): each lane computes the descriptor from its
arguments and stores it through the `desc` pointer, a register (`T.address_of(buffer_16)` of a
`buffer_16: T.uint32` scalar) or an element of a local/shared buffer of the descriptor's width.
`runtime_instr_desc` reads the descriptor there first and stores the patched value.  An argument
combination TVM's code generator rejects is `UnsupportedTIRxError` naming the field; a matrix address
outside shared memory is `invalid_descriptor`."""
from __future__ import annotations

import numpy as np

import ir

from .. import values as V
from ..encoders import CALLS, EncodeError, encode
from ..errors import EngineError, UnsupportedTIRxError
from ..memory import GLOBAL_BASE
from .tcgen05 import lanes_of

_DTYPE = {64: "uint64", 32: "uint32"}


def _encoder(ctx, call, info):
    spec = CALLS[call.op]
    span = call.span
    what = f"T.{call.op}"
    dst = call.operands[0]
    if not isinstance(dst, ir.Address):
        raise UnsupportedTIRxError(what, span, "the descriptor operand must be the address of a buffer element "
                                               "(T.address_of(...))")
    dbuf = ctx.cc.buffers[dst.buffer]
    want = _DTYPE[spec.bits]
    if dbuf.dtype not in (want, want.replace("u", "")):
        raise UnsupportedTIRxError(what, span, f"the descriptor {dst.buffer} is {dbuf.dtype}; the encoder writes a "
                                               f"{spec.bits}-bit value ({want})")
    place = ir.Load(dst.buffer, dst.indices, dbuf.dtype, span=dst.span)
    write = ctx.lvalue(place, what)
    read = ctx.expr(place) if spec.name == "runtime_instr_desc" else None
    args = [(name, ctx.expr(o)) for name, o in zip(spec.args, call.operands[1:])]
    mask = (1 << spec.bits) - 1

    def run(w):
        vals = [(name, fn(w)) for name, fn in args]
        old = read(w) if read is not None else 0
        out = np.zeros(V.WARP, dtype=np.uint64 if spec.bits == 64 else np.uint32)
        cache: dict = {}
        for lane in lanes_of(w):
            lane_args = {n: (v[lane].item() if type(v) is np.ndarray else v) for n, v in vals}
            if "addr" in lane_args:
                _check_shared(lane_args["addr"], what, span)
            prev = int(old[lane]) if type(old) is np.ndarray else int(old)
            key = (tuple(lane_args.values()), prev)
            hit = cache.get(key)
            if hit is None:
                try:
                    hit = cache[key] = encode(call.op, lane_args, prev) & mask
                except EncodeError as err:
                    raise UnsupportedTIRxError(what, span, f"{err.field}: {err.message}") from None
            out[lane] = hit
        write(w, out.astype(V.NP_DTYPE[dbuf.dtype]) if dbuf.dtype != str(out.dtype) else out)
        w.effects += 1
    return run, False


def _check_shared(addr, what, span) -> None:
    """The helper converts `addr` with __cvta_generic_to_shared: it must point into shared memory."""
    if int(addr) >= GLOBAL_BASE:
        raise EngineError("invalid_descriptor", f"{what}: matrix address {int(addr):#x} is not in shared memory "
                                                f"(the descriptor holds a shared-window address)", span,
                          field="addr", descriptor="shared-memory matrix")


HANDLERS = {name: _encoder for name in CALLS}
