"""Asynchronous register results: destination registers whose values arrive later.

`tcgen05.ld` returns at issue, but its destination registers are written only by the
time `tcgen05.wait::ld` returns (PTX ISA 9.7.16.8.5, tcgen05.wait).  So at issue each
destination register gets an undefined value (all bits set: NaN as a float, -1 or the
maximum as an integer) and the loaded value is held back; the wait writes it.  A read
of a `tcgen05.ld` destination by the issuing thread is a true register dependency,
which the hardware respects without a wait (PTX ISA 9.7.16.6.4.5, register
dependencies, same thread): the read delivers that thread's held-back value.  A write
in between (an output dependency only the wait orders), or any access to a pending
`wgmma` accumulator (PTX ISA 9.7.15.7), is an error, recorded per (access site, issue
site) for the `async_register_access_before_wait` diagnostic; the run goes on with the
undefined value, so the effect shows in the outputs and in a replay.  Registers are
local buffer elements (`w.local[slot][index]`); which buffers can be destinations is
known when the kernel is compiled, and only their loads and stores pay for the check
(`Accessors.local_load/local_store` with `watched=True`).
"""
from __future__ import annotations

import numpy as np

from . import values as V


_UNDEFINED: dict = {}


def undefined(dtype: str):
    """All bits set, as `dtype`: NaN for floats, -1 or the maximum for integers, True for bool."""
    hit = _UNDEFINED.get(dtype)
    if hit is not None:
        return hit
    if dtype == "bool":
        return True
    np_dtype = np.dtype(V.NP_DTYPE[dtype])
    v = np.frombuffer(b"\xff" * np_dtype.itemsize, dtype=np_dtype)[0]
    out = _UNDEFINED[dtype] = v.item() if np.issubdtype(np_dtype, np.integer) else v
    return out


class PendingResult:
    """One destination register of an issued op, not yet written."""

    __slots__ = ("op_id", "site", "kind", "wait", "dtype", "value", "mask", "iters", "read_completes")

    def __init__(self, op_id, site, kind, wait, dtype, value, mask, iters, read_completes=False):
        self.op_id = op_id
        self.site = site
        self.kind = kind      # the issuing op, e.g. "tcgen05.ld"
        self.wait = wait      # the op that completes it, e.g. "tcgen05.wait::ld"
        self.dtype = dtype
        self.value = value
        self.mask = mask      # lanes that issued (None: all)
        self.iters = iters
        self.read_completes = read_completes  # a read by the issuing thread waits for it (tcgen05.ld)


def issue(w, op_id: int, site: int, kind: str, wait: str, results,
          read_completes: bool = False) -> list[PendingResult]:
    """`results`: (writer, value) per destination; writers come from `OpContext.lvalue` (local registers,
    `.slot` and `.index`).  The index is taken now: it may name a loop variable that moves on.  Returns the
    pending results, in order: an op that computes its values later (wgmma) sets their `value`.
    `read_completes`: a read of a destination register delivers its value (a true register dependency)."""
    pending = w.async_regs
    if pending is None:
        pending = w.async_regs = {}
    iters = tuple(w.iters)
    out = []
    mask = w.mask
    local = w.local
    for write, value in results:
        index = getattr(write.index, "const", None)      # a constant index (compile_expr.flat_index): no call
        if index is None:
            index = write.index(w)
        if type(index) is np.ndarray:
            index = int(index[w.active()][0])
        index = int(index)
        slot, dtype = write.slot, write.dtype
        if mask is None and 0 <= index < len(local[slot]):
            local[slot][index] = undefined(dtype)       # `_store` for every lane
        else:
            _store(w, slot, index, undefined(dtype), dtype, mask)
        p = PendingResult(op_id, site, kind, wait, dtype, value, mask, iters, read_completes)
        key = (slot, index)
        waiting = pending.get(key)
        if waiting is None:
            pending[key] = [p]
        else:
            waiting.append(p)
        out.append(p)
    return out


def complete(w, op_ids) -> None:
    """The wait returned: write the held-back values of these ops, in issue order."""
    pending = w.async_regs
    if not pending or not op_ids:
        return
    done = set(op_ids)
    for key in list(pending):
        rest = []
        for p in pending[key]:
            if p.op_id in done:
                _store(w, key[0], key[1], p.value, p.dtype, p.mask)
            else:
                rest.append(p)
        if rest:
            pending[key] = rest
        else:
            del pending[key]


def _store(w, slot: int, index: int, value, dtype: str, mask) -> None:
    """Write register `index` of local buffer `slot` for the lanes of `mask` (None: all); as
    `Accessors.local_store` does for a warp-uniform index."""
    vals = w.local[slot]
    if not 0 <= index < len(vals):
        return      # the issuing op's own bounds check reports it
    if mask is None:
        vals[index] = value
    else:
        old = vals[index]
        vals[index] = np.where(mask, V.as_vec(value, dtype), V.as_vec(0 if old is None else old, dtype))


def check(w, slot: int, index, site: int, access: str, name: str) -> None:
    """A read or write of register `name[index]` (an int or a per-lane vector) while a result is pending."""
    pending = w.async_regs
    active = w.active()
    indices = (int(index),) if type(index) is not np.ndarray else sorted({int(i) for i in index[active]})
    for i in indices:
        rest = []
        for p in pending.get((slot, i), ()):
            lanes = active if p.mask is None else (active & p.mask)
            if not lanes.any():
                rest.append(p)
            elif access == "read" and p.read_completes:
                _deliver(w, slot, i, p, lanes, rest)
            else:
                w.eng.note_async_register(site, p, w, access, f"{name}[{i}]")
                rest.append(p)
        if rest:
            pending[(slot, i)] = rest
        else:
            pending.pop((slot, i), None)


def _deliver(w, slot: int, index: int, p: PendingResult, lanes, rest: list) -> None:
    """The reading lanes wait for their own result (PTX ISA 9.7.16.6.4.5): write it for them; the other
    issuing lanes keep it pending, so a later wait does not overwrite what the readers do next."""
    _store(w, slot, index, p.value, p.dtype, lanes)
    left = ~lanes if p.mask is None else (p.mask & ~lanes)
    if left.any():
        p.mask = left
        rest.append(p)
