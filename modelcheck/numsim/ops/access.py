"""Element and address accesses: buffer loads/stores and raw-address decoding.

Assumes `BufferInfo` with resolved shapes and a static shared layout.  Guarantees:
masked-off lanes never fault; an index outside the buffer or an address outside
every allocation raises `EngineError("oob")` naming the lane and address; every
global/shared access is reported to observers as one record; reads of bytes never
written are noted for the uninitialized-read advisory.
"""
from __future__ import annotations

import numpy as np

from .. import registers
from .. import values as V
from ..errors import EngineError
from ..memory import CLUSTER_WINDOW, GLOBAL_BASE, SHARED_BASE
from ..tensormap import TMAP_PARAM_BASE, TMAP_PARAM_WINDOW


def _first_bad_lane(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


def oob(what: str, buffer: str, index, lane, address, span):
    return EngineError("oob", f"out-of-bounds {what} of {buffer}[{index}] by lane {lane} at address {address:#x}",
                       span, buffer=buffer, index=int(index), lane=int(lane), address=int(address))


class Accessors:
    """Builds the closures for element loads/stores of one run."""

    def __init__(self, compiler):
        self.cc = compiler
        self.layout = compiler.layout

    # -- bases
    def base_address(self, info) -> int:
        if info.space == "shared":
            return SHARED_BASE + self.layout.offsets[info.alloc] + info.offset
        if info.space == "global":
            return GLOBAL_BASE + self.cc.global_slot[info.alloc] * (1 << 36) + info.offset
        raise EngineError("invalid_address", f"local buffer {info.name} has no address", info.span)

    def alloc_of(self, w, info):
        if info.space == "shared":
            return w.rt.shared.allocs[info.alloc]
        return w.eng.globals.allocs[info.alloc]

    # -- local (registers)
    def local_load(self, info, idx, site, span):
        slot, numel, dtype = info.slot, info.numel, info.dtype
        watched = info.name in self.cc.async_destinations     # may hold a pending async result
        name = info.name
        flat = getattr(idx, "const", None)
        if flat is not None and 0 <= flat < numel:
            def load_const(w):
                # a register at a constant in-range index (most operands): `load` below without the index call
                # and the bounds test
                vals = w.local[slot]
                if watched and w.async_regs:
                    registers.check(w, slot, flat, site, "read", name)
                v = vals[flat]
                if v is None:
                    w.eng.note_uninitialized(site, w, name)
                    return V.scalar_of(dtype, 0)
                return v
            return load_const

        def load(w):
            vals = w.local[slot]
            i = idx(w)
            if watched and w.async_regs:
                registers.check(w, slot, i, site, "read", name)
            if type(i) is not np.ndarray:
                if not 0 <= i < numel:
                    raise oob("read", "local " + info.name, i, _lane0(w), 0, span)
                v = vals[i]
                if v is None:
                    w.eng.note_uninitialized(site, w, info.name)
                    return V.scalar_of(dtype, 0)
                return v
            active = w.active()
            bad = ((i < 0) | (i >= numel)) & active
            if bad.any():
                lane = _first_bad_lane(bad)
                raise oob("read", "local " + info.name, i[lane], lane, 0, span)
            safe = np.where(active, i, 0)
            mat = _matrix(vals, dtype, w, site, info.name, active.size)
            return mat[safe, np.arange(active.size)]
        return load

    def local_store(self, info, idx, value, span, site=None):
        """`site`: given for registers that may hold a pending async result (checked before the write)."""
        slot, numel, dtype = info.slot, info.numel, info.dtype
        watched = site is not None
        name = info.name

        def store(w):
            vals = w.local[slot]
            i = idx(w)
            v = value(w)
            w.effects += 1
            if watched and w.async_regs:
                registers.check(w, slot, i, site, "write", name)
            if type(i) is not np.ndarray:
                if not 0 <= i < numel:
                    raise oob("write", "local " + info.name, i, _lane0(w), 0, span)
                if w.mask is None:
                    vals[i] = v
                else:
                    old = vals[i]
                    n = w.mask.size
                    vals[i] = np.where(w.mask, V.as_vec(v, dtype, n),
                                       V.as_vec(0 if old is None else old, dtype, n))
                return
            active = w.active()
            bad = ((i < 0) | (i >= numel)) & active
            if bad.any():
                lane = _first_bad_lane(bad)
                raise oob("write", "local " + info.name, i[lane], lane, 0, span)
            mat = _matrix(vals, dtype, None, None, info.name, active.size)
            lanes = np.flatnonzero(active)
            mat[i[lanes], lanes] = V.as_vec(v, dtype, active.size)[lanes]
            for k in np.unique(i[lanes]).tolist():
                vals[k] = mat[k].copy()
        return store

    # -- global / shared elements
    def memory_load(self, info, idx, site, span):
        slot, numel, itemsize, offset = info.slot, info.numel, info.itemsize, info.offset
        shared = info.space == "shared"
        is_int = info.dtype not in ("float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                                    "float8_e4m3")
        is_bool = info.dtype == "bool"
        base = self.base_address(info)
        name = info.name
        alloc_name = info.alloc

        def load(w):
            view = w.rt.views[slot] if shared else w.eng.global_views[slot]
            i = idx(w)
            eng = w.eng
            if type(i) is not np.ndarray:
                if not 0 <= i < numel:
                    raise oob("read", name, i, _lane0(w), base + i * itemsize, span)
                alloc = (w.rt.shared if shared else eng.globals).allocs[alloc_name]
                off = offset + i * itemsize
                if not alloc.all_written and alloc.unwritten(off, itemsize):
                    eng.note_uninitialized(site, w, name)
                eng.access(w, site, alloc, off, itemsize, "read")
                v = view[i]
                return bool(v) if is_bool else (int(v) if is_int else v)
            if w.mask is None and i.dtype == np.int32 and view.shape[0] == numel:
                # every lane reads: the gather checks the bounds itself (a negative index, seen unsigned, is too
                # large), and nothing happened before it that an out-of-bounds read must not see
                try:
                    out = view.take(i.view(np.uint32))
                except IndexError:
                    bad = (i < 0) | (i >= numel)
                    lane = _first_bad_lane(bad)
                    raise oob("read", name, i[lane], lane, base + int(i[lane]) * itemsize, span) from None
                alloc = (w.rt.shared if shared else eng.globals).allocs[alloc_name]
                offs = offset + i.astype(np.int64) * itemsize
                if not alloc.all_written and alloc.unwritten(offs, itemsize):
                    eng.note_uninitialized(site, w, name)
                eng.access(w, site, alloc, offs, itemsize, "read")
                return out
            active = w.active()
            if w.mask is None:
                if _out_of_range(i, numel):
                    bad = (i < 0) | (i >= numel)
                    lane = _first_bad_lane(bad)
                    raise oob("read", name, i[lane], lane, base + int(i[lane]) * itemsize, span)
                safe = i
            else:
                bad = ((i < 0) | (i >= numel)) & active
                if V.nnz(bad):
                    lane = _first_bad_lane(bad)
                    raise oob("read", name, i[lane], lane, base + int(i[lane]) * itemsize, span)
                safe = np.where(active, i, 0)
            alloc = (w.rt.shared if shared else eng.globals).allocs[alloc_name]
            offs = offset + safe.astype(np.int64) * itemsize
            if not alloc.all_written and alloc.unwritten(offs[active], itemsize):
                eng.note_uninitialized(site, w, name)
            eng.access(w, site, alloc, offs, itemsize, "read")
            return view.take(safe)
        return load

    def memory_store(self, info, idx, value, site, span):
        slot, numel, itemsize, offset = info.slot, info.numel, info.itemsize, info.offset
        shared = info.space == "shared"
        base = self.base_address(info)
        name = info.name
        alloc_name = info.alloc
        np_dtype = info.np_dtype
        word0 = offset // itemsize if offset % itemsize == 0 else None

        def store(w):
            view = w.rt.views[slot] if shared else w.eng.global_views[slot]
            i = idx(w)
            v = value(w)
            eng = w.eng
            w.effects += 1
            alloc = (w.rt.shared if shared else eng.globals).allocs[alloc_name]
            if type(i) is not np.ndarray:
                if not 0 <= i < numel:
                    raise oob("write", name, i, _lane0(w), base + i * itemsize, span)
                if type(v) is np.ndarray:
                    # one address, lane-varying values: the highest active lane's store lands last
                    v = v[int(np.flatnonzero(w.active())[-1])]
                view[i] = v
                off = offset + i * itemsize
                alloc.mark_written(off, itemsize)
                eng.access(w, site, alloc, off, itemsize, "write")
                return
            mask = w.mask
            if mask is None:
                # negative indices wrap to huge unsigned values: one comparison checks both ends
                if _out_of_range(i, numel):
                    bad = (i < 0) | (i >= numel)
                    lane = _first_bad_lane(bad)
                    raise oob("write", name, i[lane], lane, base + int(i[lane]) * itemsize, span)
                view[i] = v if type(v) is np.ndarray else np_dtype.type(v)
                lanes_idx = i
            else:
                bad = ((i < 0) | (i >= numel)) & mask
                if bad.any():
                    lane = _first_bad_lane(bad)
                    raise oob("write", name, i[lane], lane, base + int(i[lane]) * itemsize, span)
                lanes = np.flatnonzero(mask)
                lanes_idx = i[lanes]
                view[lanes_idx] = v[lanes] if type(v) is np.ndarray else v
            if not alloc.all_written:
                if word0 is not None and itemsize in (2, 4, 8):
                    alloc.mark_words(lanes_idx + word0 if word0 else lanes_idx, itemsize)
                else:
                    alloc.mark_written(offset + lanes_idx.astype(np.int64) * itemsize, itemsize)
            if eng.tracing:
                eng.access(w, site, alloc, offset + (i if mask is None else np.where(mask, i, 0)).astype(np.int64)
                           * itemsize, itemsize, "write")
            else:
                eng.stats["accesses"] += 1
        return store


def _out_of_range(i: np.ndarray, numel: int) -> np.bool_:
    """Any index outside [0, numel)?  Negative ints read as huge unsigned: one comparison for both ends."""
    kind, size = i.dtype.kind, i.dtype.itemsize
    if kind == "u":
        return V.nnz(i >= numel) > 0
    if size == 4:
        return V.nnz(i.view(np.uint32) >= numel) > 0
    if size == 8:
        return V.nnz(i.view(np.uint64) >= numel) > 0
    return V.nnz((i < 0) | (i >= numel)) > 0


def _lane0(w) -> int:
    return 0 if w.mask is None else int(np.flatnonzero(w.mask)[0]) if w.mask.any() else 0


def _matrix(vals, dtype, w, site, name, lanes: int = 32) -> np.ndarray:
    """Per-lane values of a local buffer as an (elements, lanes) array (a CTA cohort's lanes: numsim.cohort)."""
    mat = np.zeros((len(vals), lanes), dtype=V.NP_DTYPE[dtype])
    for k, v in enumerate(vals):
        if v is None:
            if w is not None:
                w.eng.note_uninitialized(site, w, name)
            continue
        mat[k] = v
    return mat


def decode(w, addr, size: int, space: str, span, what: str):
    """Raw address(es) -> (allocation, offsets).  `space` is "shared", "global" or "generic"."""
    if type(addr) is not np.ndarray:
        one = int(addr)
        alloc = _find(w, one, size, space, span)
        if alloc is None:
            _tensor_map_bytes(one, what, span)
            raise EngineError("oob", f"{what} at address {one:#x} ({size} B) is outside every {space} allocation "
                                     f"(lane {_lane0(w)})", span, address=one, lane=_lane0(w), size=size)
        return alloc, (one % CLUSTER_WINDOW if alloc.space == "shared" else one) - alloc.base
    active = w.active()
    lanes = np.flatnonzero(active)
    if lanes.size == 0:
        return None, None
    a = addr.astype(np.int64)
    lo, hi = int(a[lanes].min()), int(a[lanes].max())
    alloc = _find(w, lo, size, space, span)
    if alloc is not None and alloc.space == "shared" and hi >= CLUSTER_WINDOW:
        # shared::cluster addresses: one CTA's window for every lane, then offsets inside it
        if lo >> 24 == hi >> 24:
            a = a % CLUSTER_WINDOW
            lo, hi = int(a[lanes].min()), int(a[lanes].max())
        else:
            alloc = None
    if alloc is not None and alloc.contains(hi, size):
        offs = np.where(active, a - alloc.base, 0)
        return alloc, offs
    for lane in lanes:
        al = _find(w, int(a[lane]), size, space, span)
        if al is None:
            _tensor_map_bytes(int(a[lane]), what, span)
            raise EngineError("oob", f"{what} at address {int(a[lane]):#x} ({size} B) is outside every {space} "
                                     f"allocation (lane {int(lane)})", span, address=int(a[lane]), lane=int(lane),
                              size=size)
    raise EngineError("unsupported_operation", f"{what}: lanes address different allocations in one instruction",
                      span)


def _tensor_map_bytes(addr: int, what: str, span) -> None:
    """A tensor-map parameter's own bytes exist on the device (a kernel may copy them to edit them with
    tensormap.replace); the model holds a bound map's 128 bytes as its tokens (tmap_values.bind_param_bytes).
    Any other access in the handles' window (past the 128 bytes, or a map that failed to bind) is an
    unmodeled operation, not an out-of-bounds one."""
    if TMAP_PARAM_BASE <= addr < TMAP_PARAM_BASE + TMAP_PARAM_WINDOW:
        raise EngineError("unsupported_operation", f"{what} at {addr:#x}: access to a tensor-map parameter's bytes "
                                                   "is not modeled (the CUtensorMap encoding is opaque)", span)


def _find(w, addr: int, size: int, space: str, span=None):
    if space != "shared" and TMAP_PARAM_BASE <= addr < TMAP_PARAM_BASE + TMAP_PARAM_WINDOW:
        return w.eng.globals.find(addr, size)     # a tensor-map parameter's bytes (tmap_values.bind_param_bytes)
    if space == "shared" or (space == "generic" and addr < GLOBAL_BASE):
        if addr >= CLUSTER_WINDOW:
            # a shared::cluster address (mapa): the peer CTA's shared memory, recorded as the peer's allocation
            rank = (addr >> 24) - 1
            if rank >= w.rt.cluster_size:
                return None
            rt = w.rt.peer(rank)
            if rt.exited:
                peer_exited(w, rt, addr, span)
            return rt.shared.find(addr % CLUSTER_WINDOW, size)
        return w.rt.shared.find(addr, size)
    if space in ("global", "generic"):
        return w.eng.globals.find(addr, size)
    return None



def peer_exited(w, rt, addr: int, span, what: str = "access"):
    """A shared::cluster access into a CTA that has exited: its shared memory no longer exists."""
    raise EngineError("cluster_exit_while_peer_access",
                      f"{what} of CTA {rt.index}'s shared memory (cluster rank {rt.cluster_rank}, address {addr:#x}) "
                      f"by warp {w.gid} of CTA {w.cta} after CTA {rt.index} exited: nothing made it wait for its "
                      f"peers (a final cluster barrier)", span, peer_cta=rt.index, address=int(addr),
                      warp=w.gid, cta=w.cta)


def note_remote(w, site: int, alloc) -> None:
    """An access to a peer CTA's shared memory is a sync event too: the checkers hold it to happen before the
    peer's exit (docs/semantics.md#clusters)."""
    if alloc.cta is not None and alloc.cta != w.cta and alloc.space == "shared":
        w.eng.sync(w, "cluster.remote", site, details={"target_cta": alloc.cta})
