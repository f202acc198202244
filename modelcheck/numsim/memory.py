"""Memory of a NumSim run: global allocations, one shared pool per CTA, address decoding.

Addresses are numbers as on hardware.  Global buffers live at distinct 64-bit
bases (`GLOBAL_BASE + k * GLOBAL_STRIDE`), so an address names one allocation;
shared memory is a byte pool per CTA whose window starts at `SHARED_BASE` (so 0
is never a valid shared address), with allocations laid out in declaration order
at their alignment.  Every byte has a `written` flag, for the uninitialized-read
advisory; bound inputs count as written.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .values import nnz

GLOBAL_BASE = 0x7F00_0000_0000
GLOBAL_STRIDE = 1 << 36
SHARED_BASE = 0x400
SHARED_LIMIT = 232_448          # bytes of shared memory per CTA on sm_100 (227 KiB)
# A shared::cluster address of CTA rank r (what `mapa` returns): (r + 1) << 24 | its shared::cta address.
# A plain shared::cta address (below CLUSTER_WINDOW) in the cluster window is the executing CTA's own.
CLUSTER_WINDOW = 1 << 24


@dataclass
class Allocation:
    """A region of memory: one global buffer, or one shared allocation inside a CTA's pool."""

    id: int
    name: str
    space: str                 # "global" | "shared"
    base: int                  # first address
    nbytes: int
    data: np.ndarray           # uint8 view of the bytes
    written: np.ndarray        # bool per byte
    all_written: bool = False  # fast path for the uninitialized-read check
    cta: int | None = None
    readonly: bool = False     # a tensor-map parameter's bytes (param space)

    def contains(self, addr: int, size: int = 1) -> bool:
        return self.base <= addr and addr + size <= self.base + self.nbytes

    def mark_written(self, offsets, size: int) -> None:
        if self.all_written:
            return
        if type(offsets) is np.ndarray:
            word = _WORD.get(size)
            if word is not None and not nnz(offsets % size):
                # one op: a word of all-ones bytes marks `size` bytes of each offset at once
                self.__dict__.setdefault("_wview", {}).setdefault(size, _word_view(self.written, size))[
                    offsets // size] = word[1]
                return
            for k in range(size):
                self.written[offsets + k] = True
        else:
            self.written[offsets:offsets + size] = True

    def mark_unwritten(self, offsets, size: int) -> None:
        """The bytes [offsets, offsets + size) hold indeterminate values again (`discard`): a read of them before
        the next write is noted as uninitialized."""
        if not self.written.flags.writeable:          # a bound input's one shared True (GlobalMemory.add)
            self.written = np.ones(self.nbytes, dtype=np.bool_)
        self.__dict__.pop("_wview", None)            # word views of the flags it replaced
        self.all_written = False
        if type(offsets) is np.ndarray:
            self.written[(offsets[:, None] + np.arange(size)).reshape(-1)] = False
        else:
            self.written[offsets:offsets + size] = False

    def mark_words(self, index, size: int) -> None:
        """Mark whole aligned words (element indices of a `size`-byte view) as written."""
        if self.all_written:
            return
        views = self.__dict__.setdefault("_wview", {})
        v = views.get(size)
        if v is None:
            v = views[size] = _word_view(self.written, size)
        v[index] = _WORD[size][1]

    def unwritten(self, offsets, size: int) -> bool:
        """True if any of the bytes [offsets, offsets + size) was never written."""
        if self.all_written:
            return False
        if type(offsets) is np.ndarray:
            word = _WORD.get(size)
            if word is not None and not nnz(offsets % size):
                # aligned accesses: one word of the flags per access, all-ones bytes when every byte was written
                views = self.__dict__.setdefault("_wview", {})
                view = views.get(size)
                if view is None:
                    view = views[size] = _word_view(self.written, size)
                bad = nnz(view[offsets // size] != word[1]) != 0
            else:
                ok = self.written[offsets]
                for k in range(1, size):
                    ok = ok & self.written[offsets + k]
                bad = nnz(ok) != ok.size
        else:
            bad = not self.written[offsets:offsets + size].all()
        # (count_nonzero: cheaper than .all() on a whole shared pool)
        if not bad and nnz(self.written) == self.written.size:
            self.all_written = True
        return bad


_WORD = {2: (np.uint16, 0x0101), 4: (np.uint32, 0x01010101), 8: (np.uint64, 0x0101010101010101)}


def _word_view(written: np.ndarray, size: int) -> np.ndarray:
    usable = written.size - written.size % size
    return written[:usable].view(_WORD[size][0])


@dataclass
class SharedLayout:
    """Static layout of a kernel's shared allocations (same for every CTA)."""

    offsets: dict[str, int] = field(default_factory=dict)   # allocation name -> offset in the pool
    sizes: dict[str, int] = field(default_factory=dict)
    aligns: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def add(self, name: str, nbytes: int, align: int) -> None:
        align = max(align, 16)
        off = (self.total + align - 1) // align * align
        self.offsets[name] = off
        self.sizes[name] = nbytes
        self.aligns[name] = align
        self.total = off + nbytes


class SharedMemory:
    """One CTA's shared memory: the pool, its allocations, and address decoding."""

    def __init__(self, cta: int, layout: SharedLayout, first_id: int, pool=None, written=None):
        """`pool`, `written`: zeroed arrays of the pool's size to hold it (a CTA cohort's rows: numsim.cohort)."""
        self.cta = cta
        self.layout = layout          # the launch's one layout (per-layout caches of the ops hang on it)
        self.pool = np.zeros(max(layout.total, 1), dtype=np.uint8) if pool is None else pool
        self.written = np.zeros(max(layout.total, 1), dtype=np.bool_) if written is None else written
        self.allocs: dict[str, Allocation] = {}
        for k, (name, off) in enumerate(layout.offsets.items()):
            size = layout.sizes[name]
            self.allocs[name] = Allocation(first_id + k, name, "shared", SHARED_BASE + off, size,
                                           self.pool[off:off + size], self.written[off:off + size], cta=cta)
        ordered = sorted(self.allocs.values(), key=lambda a: a.base)
        self._bases = np.array([a.base for a in ordered], dtype=np.int64)
        self._ordered = ordered

    def find(self, addr: int, size: int) -> Allocation | None:
        """The allocation holding [addr, addr + size), or None."""
        if not self._ordered:
            return None
        k = int(np.searchsorted(self._bases, addr, side="right")) - 1
        if k < 0:
            return None
        a = self._ordered[k]
        return a if a.contains(addr, size) else None


class GlobalMemory:
    """The launch's global buffers (copies of the bound inputs)."""

    def __init__(self):
        self.allocs: dict[str, Allocation] = {}
        self._by_slot: dict[int, Allocation] = {}
        self._params: dict[int, Allocation] = {}     # 256-aligned base -> a tensor-map parameter's bytes

    def add(self, name: str, array: np.ndarray, initialized: bool = True) -> Allocation:
        slot = len(self.allocs)
        data = array.reshape(-1).view(np.uint8)
        # an initialized buffer is written throughout and stays so (`all_written`): its flags are one shared
        # read-only True, not a byte each (a bound input of hundreds of MB would cost as much again)
        written = np.broadcast_to(np.True_, (data.size,)) if initialized else np.zeros(data.size, dtype=np.bool_)
        a = Allocation(slot, name, "global", GLOBAL_BASE + slot * GLOBAL_STRIDE, data.size, data, written,
                       all_written=initialized)
        self.allocs[name] = a
        self._by_slot[slot] = a
        return a

    def add_param(self, name: str, base: int, nbytes: int) -> Allocation:
        """The read-only bytes of a tensor-map parameter at its handle address `base` (256-aligned, below
        GLOBAL_BASE: the kernel's parameter space, read through generic addresses)."""
        data = np.zeros(nbytes, dtype=np.uint8)
        a = Allocation(len(self.allocs), name, "global", base, nbytes, data, np.ones(nbytes, dtype=np.bool_),
                       all_written=True, readonly=True)
        self.allocs[name] = a
        self._params[base] = a
        return a

    def find(self, addr: int, size: int) -> Allocation | None:
        slot = (addr - GLOBAL_BASE) // GLOBAL_STRIDE
        a = self._by_slot.get(slot) if slot >= 0 else self._params.get(addr & ~0xFF)
        return a if a is not None and a.contains(addr, size) else None


COPY_CHUNK = 1 << 16


def sparse_copy(src: np.ndarray, pad: int = 0) -> np.ndarray:
    """A private uint8 copy of `src`'s bytes after `pad` zero bytes, in fresh zeroed memory with only the chunks
    that are not all zero copied in: untouched pages of the zeroed allocation are not resident, so the copy costs
    the input's nonzero part, not its size (a 1.5 GB output buffer holding one tensor map page: 64 KB, not 1.5 GB)."""
    raw = src.reshape(-1).view(np.uint8)
    out = np.zeros(pad + raw.size, dtype=np.uint8)
    for lo in range(0, raw.size, COPY_CHUNK):
        chunk = raw[lo:lo + COPY_CHUNK]
        if chunk.any():
            out[pad + lo:pad + lo + chunk.size] = chunk
    return out


def cluster_address(rank: int, local: int) -> int:
    """The shared::cluster address of `local` (a shared::cta or cluster address) in the CTA of `rank`."""
    return ((rank + 1) << 24) | (int(local) % CLUSTER_WINDOW)


def split_cluster(addr: int) -> tuple[int | None, int]:
    """(rank, shared::cta address) of a shared::cluster address; rank None for a plain shared::cta address."""
    if CLUSTER_WINDOW <= addr < GLOBAL_BASE:
        return (addr >> 24) - 1, addr % CLUSTER_WINDOW
    return None, addr


def space_of_address(addr: int) -> str:
    return "global" if addr >= GLOBAL_BASE else "shared"
