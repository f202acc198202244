"""`tensormap.replace` (PTX ISA 9.7.9.27) and the tensormap-proxy fences on tensor maps held in memory.

`tensormap.replace.tile.field{.global|.shared::cta}.b1024.type [addr], {ord,} new_val` rewrites one field of the
map value at `addr` (numsim/tmap_values.py): a new value with that field replaced is written there, by the lane,
through the generic proxy (a 128-byte write record), and stays unreleased until that lane executes
`fence.proxy.tensormap::generic.release`.  `fence.proxy.tensormap::generic.acquire [addr], 128` records, per lane,
the map value it acquired at `addr`; a TMA through a map modified in the launch checks both
(`tensormap_proxy_fence_missing`).
"""
from __future__ import annotations

import numpy as np

from ..errors import EngineError, UnsupportedTIRxError
from ..tmap_values import NBYTES, replaced
from .access import _find, decode
from .tma import _at, _lanes

_FIELDS = ("global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride", "elemtype",
           "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode")


def _replace_op(ctx, call, info):
    field = next((f for f in _FIELDS if f in info.quals), "?")
    ops = call.operands
    addr_fn = ctx.expr(ops[0])
    ord_fn = ctx.expr(ops[1]) if len(ops) == 3 else None
    val_fn = ctx.expr(ops[-1])
    site = ctx.site(call, "tensormap.replace")
    span = call.span
    what = f"tensormap.replace.tile.{field}"

    def run(w):
        a, v = addr_fn(w), val_fn(w)
        o = ord_fn(w) if ord_fn is not None else None
        store = w.eng.map_store
        w.effects += 1
        for lane in _lanes(w):
            addr = _at(a, lane)
            alloc, off = decode(w, addr, NBYTES, "generic", span, what)
            off = int(off)
            space = info.quals.get("space", "global")
            if alloc.readonly or (alloc.space == "shared") != (space == "shared::cta"):
                raise EngineError("invalid_address", f"{what}: .{space} names a map in {alloc.space} memory "
                                                     f"({alloc.name})", span, address=addr)
            n = store.at(alloc, off, span, what)
            new = replaced(store, w.eng, store.values[n], field, None if o is None else _at(o, lane),
                           _at(v, lane), span, what)
            store.put(alloc, off, store.new(new, writer=(w.gid, lane)))
            w.eng.access(None, site, alloc, off, NBYTES, "write", lanes=_one(lane), iters=tuple(w.iters),
                         warp=w.gid, cta=w.cta)
    return run, False


def _one(lane: int) -> np.ndarray:
    lanes = np.zeros(32, dtype=np.bool_)
    lanes[lane] = True
    return lanes


def fence_tensormap(ctx, call, info):
    """release: the lanes' modified maps become released; acquire [addr]: each lane acquires the value at addr."""
    acquire = info.quals.get("sem") == "acquire"
    addr_fn = ctx.expr(call.operands[0]) if acquire and call.operands else None
    span = call.span

    def run(w):
        store = w.eng.map_store
        if store is None:
            return
        lanes = _lanes(w)
        if addr_fn is None:
            store.release(w.gid, set(lanes))
            return
        a = addr_fn(w)
        for lane in lanes:
            addr = _at(a, lane)
            alloc = _find(w, addr, 1, "generic", span)
            n = None
            if alloc is not None and alloc.space == "global":
                off = addr - alloc.base
                try:
                    n = store.at(alloc, off, span, "fence.proxy.tensormap::generic.acquire")
                except (EngineError, UnsupportedTIRxError):   # no map there yet: the acquire orders nothing
                    n = None
            store.acquire(w.gid, lane, addr, n)
    return run, False


HANDLERS = {"tensormap.replace": _replace_op}
