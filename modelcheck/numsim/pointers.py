"""Buffers declared on a pointer the kernel computes (`T.decl_buffer(..., data=ptr)` with `ptr` a handle `let`:
a peer CTA's barriers through `mapa`, an element's address plus an offset).

When the declaration executes, each active lane's pointer (plus the declaration's byte offset) is resolved to
the allocation it points into: a global buffer, this CTA's shared memory, or a peer CTA's (a shared::cluster
address).  A pointer that names no allocation is an unmodeled operation (incomplete), never guessed.  The
resolved base is kept per warp (a lane vector when the lanes' pointers differ), so each lane has its own view;
an element access goes to the allocation its lane's base resolved to, bounds-checked against the buffer's shape
and against that allocation (oob otherwise), and is recorded there, so the checkers see the real location.
"""
from __future__ import annotations

import numpy as np

from . import values as V
from .errors import EngineError, UnsupportedTIRxError
from .memory import CLUSTER_WINDOW, GLOBAL_BASE
from .ops.access import _lane0, note_remote, oob, peer_exited
from .ops.memory import _typed_view
from .tensormap import TMAP_PARAM_BASE, TMAP_PARAM_WINDOW


def view_slot_name(buffer: str) -> str:
    """The environment slot holding a pointer view's resolved base ('.' keeps it apart from every variable)."""
    return buffer + ".data"


def _target(w, addr: int):
    """The allocation (and its CTA runtime, None for global memory) holding byte `addr`, or (None, None)."""
    if addr >= GLOBAL_BASE or TMAP_PARAM_BASE <= addr < TMAP_PARAM_BASE + TMAP_PARAM_WINDOW:
        return w.eng.globals.find(addr, 1), None
    rt = w.rt
    if addr >= CLUSTER_WINDOW:
        rank = (addr >> 24) - 1
        if rank >= rt.cluster_size:
            return None, None
        rt = rt.peer(rank)
    return rt.shared.find(addr % CLUSTER_WINDOW, 1), rt


def declare(info, pointer, offset, pointer_name: str, span):
    """The closure run where the buffer is declared: resolve every active lane's base, keep it in the view slot.
    `pointer` and `offset` are expression closures (the handle and the declaration's byte offset)."""
    name = info.name

    def run(w):
        p, off = pointer(w), offset(w)
        if p is None:
            raise UnsupportedTIRxError(f"buffer {name}", span, f"its pointer {pointer_name} has no value here")
        if type(p) is np.ndarray or type(off) is np.ndarray:
            base = np.asarray(p).astype(np.int64) + np.asarray(off).astype(np.int64)
            if not isinstance(base, np.ndarray) or base.ndim == 0:
                base = int(base)
        else:
            base = int(p) + int(off)
        lanes = np.flatnonzero(w.active()) if type(base) is np.ndarray else (_lane0(w),)
        for a in sorted({int(base[k]) if type(base) is np.ndarray else base for k in lanes}):
            alloc, _ = _target(w, a)
            if alloc is None:
                what = ("a tensor-map parameter's bytes (the CUtensorMap encoding is opaque)"
                        if TMAP_PARAM_BASE <= a < TMAP_PARAM_BASE + TMAP_PARAM_WINDOW else "no allocation")
                raise UnsupportedTIRxError(f"buffer {name}", span,
                                           f"its pointer {pointer_name} ({a:#x}) points to {what}")
        w.env[info.slot] = base
    return run


def _groups(w, base, addr, itemsize: int, name: str, index, what: str, span):
    """[(allocation, runtime, lanes or None, byte offsets)] of one access: the active lanes grouped by the
    allocation their base resolved to, each lane's element checked to lie inside that allocation."""
    if type(base) is not np.ndarray and type(addr) is not np.ndarray:
        alloc, rt = _resolved(w, base, name, span)
        off = (addr % CLUSTER_WINDOW if alloc.space == "shared" else addr) - alloc.base
        if off < 0 or off + itemsize > alloc.nbytes:
            raise oob(what, name, index, _lane0(w), addr, span)
        return [(alloc, rt, None, off)]
    active = w.active()
    b = np.broadcast_to(np.asarray(base, dtype=np.int64), (V.WARP,))
    a = np.broadcast_to(np.asarray(addr, dtype=np.int64), (V.WARP,))
    i = np.broadcast_to(np.asarray(index), (V.WARP,))
    out: list = []
    for value in np.unique(b[active]):
        alloc, rt = _resolved(w, int(value), name, span)
        lanes = active & (b == value)
        local = a % CLUSTER_WINDOW if alloc.space == "shared" else a
        offs = np.where(lanes, local - alloc.base, 0)
        bad = lanes & ((offs < 0) | (offs + itemsize > alloc.nbytes))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise oob(what, name, i[lane], lane, int(a[lane]), span)
        merged = next((g for g in out if g[0] is alloc), None)
        if merged is not None:
            out.remove(merged)
            lanes, offs = lanes | merged[2], np.where(lanes, offs, merged[3])
        out.append((alloc, rt, lanes, offs))
    return out


def _resolved(w, base: int, name: str, span):
    """The allocation of a lane's base; a lane inactive where the buffer was declared may have none."""
    alloc, rt = _target(w, base)
    if alloc is None:
        raise UnsupportedTIRxError(f"buffer {name}", span, f"a lane's pointer ({base:#x}) was not resolved where "
                                                           "the buffer was declared (the lane was inactive there)")
    return alloc, rt


def _checked_index(w, i, numel: int, base, itemsize: int, name: str, what: str, span):
    """The element index, checked against the buffer's shape for the active lanes."""
    if type(i) is not np.ndarray:
        if not 0 <= i < numel:
            b = base if type(base) is not np.ndarray else int(base[_lane0(w)])
            raise oob(what, name, i, _lane0(w), b + i * itemsize, span)
        return i
    bad = ((i < 0) | (i >= numel)) & w.active()
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        b = base if type(base) is not np.ndarray else int(base[lane])
        raise oob(what, name, i[lane], lane, b + int(i[lane]) * itemsize, span)
    return np.where(w.active(), i, 0).astype(np.int64)


def _enter(w, rt, alloc, addr: int, site: int, span) -> None:
    if rt is not None and rt is not w.rt:
        if rt.exited:
            peer_exited(w, rt, addr, span)
        note_remote(w, site, alloc)


def load(info, idx, site: int, span):
    """An element read through a pointer view."""
    slot, numel, itemsize, np_t, name = info.slot, info.numel, info.itemsize, info.np_dtype, info.name
    is_int = np.issubdtype(np_t, np.integer)
    is_bool = np_t == np.bool_

    def run(w):
        base = w.env[slot]
        i = _checked_index(w, idx(w), numel, base, itemsize, name, "read", span)
        addr = base + i * itemsize
        eng = w.eng
        result = None
        for alloc, rt, lanes, offs in _groups(w, base, addr, itemsize, name, i, "read", span):
            _enter(w, rt, alloc, alloc.base + int(offs if lanes is None else offs[lanes].min()), site, span)
            _aligned(alloc, offs, lanes, itemsize, name, span)
            view = _typed_view(alloc, np_t)
            picked = offs if lanes is None else offs[lanes]
            if not alloc.all_written and alloc.unwritten(picked, itemsize):
                eng.note_uninitialized(site, w, name)
            eng.access(w, site, alloc, offs, itemsize, "read", lanes=lanes)
            if lanes is None:
                v = view[offs // itemsize]
                return bool(v) if is_bool else (int(v) if is_int else v)
            if result is None:
                result = np.zeros(V.WARP, dtype=np_t)
            result[lanes] = view[offs[lanes] // itemsize]
        return result
    return run


def store(info, idx, value, site: int, span):
    """An element write through a pointer view (the highest active lane lands last, as for any buffer)."""
    slot, numel, itemsize, np_t, name = info.slot, info.numel, info.itemsize, info.np_dtype, info.name

    def run(w):
        base = w.env[slot]
        i = _checked_index(w, idx(w), numel, base, itemsize, name, "write", span)
        v = value(w)
        w.effects += 1
        addr = base + i * itemsize
        for alloc, rt, lanes, offs in _groups(w, base, addr, itemsize, name, i, "write", span):
            _enter(w, rt, alloc, alloc.base + int(offs if lanes is None else offs[lanes].min()), site, span)
            _aligned(alloc, offs, lanes, itemsize, name, span)
            view = _typed_view(alloc, np_t)
            if lanes is None:
                if type(v) is np.ndarray:
                    v = v[int(np.flatnonzero(w.active())[-1])]
                view[offs // itemsize] = v
                alloc.mark_written(offs, itemsize)
            else:
                picked = offs[lanes]
                view[picked // itemsize] = V.as_vec(v, info.dtype)[lanes]
                alloc.mark_written(picked, itemsize)
            w.eng.access(w, site, alloc, offs, itemsize, "write", lanes=lanes)
    return run


def _aligned(alloc, offs, lanes, itemsize: int, name: str, span) -> None:
    """An element of a view must be naturally aligned, as every access is on the hardware."""
    picked = offs if lanes is None else offs[lanes]
    bad = picked % itemsize
    if np.any(bad):
        off = int(picked) if lanes is None else int(picked[np.flatnonzero(bad)[0]])
        raise EngineError("misaligned_address", f"element of {name} at address {alloc.base + off:#x} is not aligned "
                                                f"to its {itemsize} bytes", span, address=alloc.base + off,
                          size=itemsize)


__all__ = ["declare", "load", "store", "view_slot_name"]
