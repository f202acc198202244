"""Register views: `v = regs.view("uint32")` / `regs.view(16)` over a local buffer (the same registers seen as
another element type or shape; the printed form of a tile's bits handed to `st.shared.v4.u32`, `mov.b32` ...).

A view has no storage of its own: its element i is bytes [offset + i * size, offset + (i + 1) * size) of the
root's registers laid end to end, little-endian, as the compiler packs them (two bf16 registers are one b32,
the first in the low half).  A read gathers those bytes from the root elements it covers, per lane; a write
scatters them back for the active lanes.  Pending asynchronous results (a tcgen05.ld destination) are honoured
through the root's registers (numsim.registers).  An index that differs between lanes is not modeled (a
register index is a compile-time value on the hardware): incomplete, naming the view.
"""
from __future__ import annotations

import numpy as np

from . import registers
from . import values as V
from .errors import UnsupportedTIRxError
from .ops.access import _lane0, oob


def _lanes_bytes(v, dtype: str) -> np.ndarray:
    """A register value (uniform or per lane) as (32, itemsize) bytes."""
    vec = np.ascontiguousarray(V.as_vec(v, dtype))
    return vec.view(np.uint8).reshape(V.WARP, -1)


def _span_of(info, root, i: int):
    """(first root element, last root element, byte offset inside the first) of view element i."""
    start = info.offset + i * info.itemsize
    return start // root.itemsize, (start + info.itemsize - 1) // root.itemsize, start % root.itemsize


def _index(w, idx, info, root, what: str, span) -> int:
    i = idx(w)
    if type(i) is np.ndarray:
        lanes = i[w.active()]
        if lanes.size and (lanes != lanes[0]).any():
            raise UnsupportedTIRxError(f"register view {info.name}", span,
                                       "an element index that differs between lanes (registers are named "
                                       "statically on the hardware)")
        i = int(lanes[0]) if lanes.size else 0
    i = int(i)
    if not 0 <= i < info.numel or info.offset + (i + 1) * info.itemsize > root.numel * root.itemsize:
        raise oob(what, "local " + info.name, i, _lane0(w), 0, span)
    return i


def load(info, root, idx, site: int, span, watched: bool):
    """An element read through the view (`watched`: the root may hold a pending asynchronous result)."""
    slot, rdtype, vdtype = root.slot, root.dtype, info.dtype
    np_view = np.dtype(V.NP_DTYPE[vdtype])

    def run(w):
        i = _index(w, idx, info, root, "read", span)
        first, last, skip = _span_of(info, root, i)
        if watched and w.async_regs:
            for k in range(first, last + 1):
                registers.check(w, slot, k, site, "read", root.name)
        vals = w.local[slot]
        parts, uniform = [], True
        for k in range(first, last + 1):
            v = vals[k]
            if v is None:
                w.eng.note_uninitialized(site, w, info.name)
                v = 0
            uniform = uniform and not (type(v) is np.ndarray and v.ndim)
            parts.append(_lanes_bytes(v, rdtype))
        raw = np.concatenate(parts, axis=1)[:, skip:skip + info.itemsize]
        out = np.ascontiguousarray(raw).view(np_view).reshape(V.WARP)
        if uniform:
            s = out[0]
            return s.item() if np.issubdtype(np_view, np.integer) else (bool(s) if vdtype == "bool" else s)
        return out
    return run


def store(info, root, idx, value, site: int, span, watched: bool):
    """An element write through the view: the active lanes' bytes land in the root registers it covers."""
    slot, rdtype, vdtype = root.slot, root.dtype, info.dtype
    np_root = np.dtype(V.NP_DTYPE[rdtype])

    def run(w):
        i = _index(w, idx, info, root, "write", span)
        v = value(w)
        w.effects += 1
        first, last, skip = _span_of(info, root, i)
        if watched and w.async_regs:
            for k in range(first, last + 1):
                registers.check(w, slot, k, site, "write", root.name)
        vals = w.local[slot]
        old = np.concatenate([_lanes_bytes(0 if vals[k] is None else vals[k], rdtype)
                              for k in range(first, last + 1)], axis=1)
        new = old.copy()
        new[:, skip:skip + info.itemsize] = _lanes_bytes(v, vdtype)
        if w.mask is not None:
            new = np.where(w.mask[:, None], new, old)
        words = np.ascontiguousarray(new).view(np_root).reshape(V.WARP, -1)
        for n, k in enumerate(range(first, last + 1)):
            vals[k] = words[:, n].copy()
    return run


__all__ = ["load", "store"]
