"""Tensor maps as values in memory (a CUtensorMap copied to a workspace, patched, then used by a TMA).

PTX lets a tensor map live in `.global` (or be edited in `.shared::cta`) as a 128-byte opaque object (PTX ISA
5.5.8, 9.7.9.27).  The CUtensorMap byte layout is undocumented, so the model does not invent it: the 16 8-byte
words of a map in memory are *tokens* naming a map value of this run (`MapStore.values`: the decoded fields and
the global allocation they describe).  Word i of map n is `TAG << 32 | n << 4 | i`.  Any byte-exact copy --
`ld`/`st` of any width through registers, element copies, `cp.async.bulk` -- moves the tokens and so the map; a
partial, misaligned or altered copy leaves words that are no whole map, and a TMA or `tensormap.replace`
through them is `incomplete` naming the op (never a guess).  Bytes without tokens (stale, never written) are
not a map the model knows: also `incomplete`.  Model limit: a kernel that computes with the token words (as
numbers) instead of copying them is not detected unless the result is used as a map.

The tensormap proxy (PTX ISA 9.7.13.4, fence.proxy.tensormap::generic): a map written through the generic proxy
(`tensormap.replace` here) must be released by the writer (`.release`) and acquired at its address by the thread
that uses it (`.acquire [addr], 128`) before a TMA reads it; a map bound as an input (written before the launch)
needs neither.  `MapStore.check_use` reports a missing fence as `tensormap_proxy_fence_missing`.  Ordering
between the writer and the user (that the write happens before the use) is Racecheck's: the TMA's read of the
map's 128 bytes is recorded as the issuing thread's generic read.
"""
from __future__ import annotations

from dataclasses import replace as _replace

import numpy as np

from .errors import EngineError, UnsupportedTIRxError
from .tensormap import BoundTensorMap, TensorMapArray, TensorMapError, encode_fields, validate

TAG = 0x4D43544D          # "MCTM"
WORDS = 16                # 128 bytes
NBYTES = 8 * WORDS
ALIGN = 64                # a tensor map in memory is 64-byte aligned (ptx-encodings §8.1)
_INDEX = np.arange(WORDS, dtype=np.uint64)


def tokens(n: int) -> np.ndarray:
    return (np.uint64(TAG << 32) | np.uint64(n << 4) | _INDEX).astype("<u8")


class MapStore:
    """The map values of one run and their tensormap-proxy fence state."""

    def __init__(self):
        self.values: list[BoundTensorMap] = []
        self.writer: dict[int, tuple[int, int]] = {}     # value -> (warp, lane) that wrote it, until released
        self.released: set[int] = set()
        self.acquired: dict[tuple[int, int], dict[int, int]] = {}   # (warp, lane) -> {address: value acquired}

    def new(self, bound: BoundTensorMap, writer: tuple[int, int] | None = None) -> int:
        self.values.append(bound)
        n = len(self.values) - 1
        if writer is not None:
            self.writer[n] = writer
        return n

    def put(self, alloc, off: int, n: int) -> None:
        alloc.data[off:off + NBYTES] = tokens(n).view(np.uint8)
        alloc.mark_written(off, NBYTES)

    def at(self, alloc, off: int, span, what: str) -> int:
        """The map value whose 128 bytes are at `alloc` + `off` (unsupported if they are no whole map)."""
        where = f"{alloc.name} + {off}"
        if off % ALIGN:
            raise EngineError("misaligned_address", f"{what}: the tensor map at {where} is not {ALIGN}-byte aligned",
                              span, address=alloc.base + off)
        if off + NBYTES > alloc.nbytes:
            raise EngineError("oob", f"{what}: the 128-byte tensor map at {where} reaches past {alloc.name} "
                                     f"({alloc.nbytes} bytes)", span, address=alloc.base + off, size=NBYTES)
        words = alloc.data[off:off + NBYTES].view("<u8")
        tagged = (words >> np.uint64(32)) == np.uint64(TAG)
        if not tagged.any():
            raise UnsupportedTIRxError(what, span, f"the 128 bytes at {where} hold no tensor map the model knows "
                                                   f"(none was bound or copied there); the CUtensorMap byte layout "
                                                   f"is not modeled")
        first = int(np.flatnonzero(tagged)[0])
        n = (int(words[first] >> np.uint64(4)) & 0x0FFF_FFFF)
        bad = np.flatnonzero(words != tokens(n))
        if bad.size or n >= len(self.values):
            raise UnsupportedTIRxError(what, span, f"the 128 bytes at {where} are a partial, misaligned or altered "
                                                   f"copy of a tensor map (bytes {_ranges(bad)} are not the map's); "
                                                   f"the CUtensorMap byte layout is not modeled")
        return n

    def release(self, warp: int, lanes) -> None:
        for n, (wid, lane) in list(self.writer.items()):
            if wid == warp and lane in lanes:
                self.released.add(n)
                del self.writer[n]

    def acquire(self, warp: int, lane: int, addr: int, n: int | None) -> None:
        if n is not None:
            self.acquired.setdefault((warp, lane), {})[addr] = n

    def check_use(self, n: int, warp: int, lane: int, addr: int, where: str, span, what: str) -> None:
        written = n in self.writer or n in self.released
        if not written:
            return          # bound before the launch: nothing in this launch wrote it
        if n in self.writer:
            wid, wlane = self.writer[n]
            raise EngineError("tensormap_proxy_fence_missing",
                              f"{what}: the tensor map at {where} was written through the generic proxy "
                              f"(tensormap.replace by warp {wid} lane {wlane}) without a "
                              f"fence.proxy.tensormap::generic.release by that thread before the TMA reads it",
                              span, address=addr, writer_warp=wid, writer_lane=wlane, missing="release")
        if self.acquired.get((warp, lane), {}).get(addr) != n:
            raise EngineError("tensormap_proxy_fence_missing",
                              f"{what}: the tensor map at {where} was modified in this launch, but warp {warp} lane "
                              f"{lane} did not execute fence.proxy.tensormap::generic.acquire on its address after "
                              f"the modification before using it", span, address=addr, warp=warp, lane=lane,
                              missing="acquire")


def _ranges(words) -> str:
    """Byte ranges of 8-byte word indices: [8, 9, 10] -> "64-87"."""
    out, start = [], None
    for k, w in enumerate(words.tolist()):
        if start is None:
            start = w
        if k + 1 == len(words) or words[k + 1] != w + 1:
            out.append(f"{8 * start}-{8 * w + 7}")
            start = None
    return ", ".join(out)


# --------------------------------------------------------------------------- tensormap.replace

_ORDINAL = {"global_dim": "global_shape", "box_dim": "box_shape", "element_stride": "element_strides",
            "global_stride": "global_strides"}


def replaced(store: MapStore, eng, src: BoundTensorMap, field: str, ordinal, value: int, span, what: str):
    """A copy of `src` with one field replaced (PTX ISA 9.7.9.27): global_address, or the ordinal-th entry of
    global_dim / box_dim / element_stride (dims innermost first) / global_stride (the byte stride of dim
    ordinal + 1, as CUtensorMap lists them).  The other fields' encodings are not modeled."""
    f = src.fields
    if field == "global_address":
        alloc = eng.globals.find(int(value), 1)
        off = int(value) - alloc.base if alloc is not None else 0
        fields = _replace(f, global_address=int(value), base_nbytes=alloc.nbytes - off if alloc else 0)
        out = BoundTensorMap(src.name, fields, alloc=alloc, base_off=off)
        if alloc is None:
            out.error = TensorMapError("global_address", f"{int(value):#x} points into no global allocation")
        return out
    name = _ORDINAL.get(field)
    if name is None:
        raise UnsupportedTIRxError(what, span, f"tensormap.replace of .{field} (its value encoding) is not modeled")
    seq = list(getattr(f, name))
    k = int(ordinal)
    if not 0 <= k < len(seq):
        raise EngineError("invalid_descriptor", f"{what}: .{field} ordinal {k} is outside the rank-{f.rank} map's "
                                                f"{len(seq)} entries", span, field=field)
    seq[k] = int(value)
    out = BoundTensorMap(src.name, _replace(f, **{name: tuple(seq)}), error=src.error, alloc=src.alloc,
                         base_off=src.base_off)
    return out


def validate_replaced(bound: BoundTensorMap) -> None:
    """cuTensorMapEncodeTiled's rules on a map edited in the kernel, except that a dimension of extent 1 may have
    stride 0 (it never moves; kernels pad a lower-rank map so) and the extent is not held to the allocation
    (a TMA reaching past it is `oob` at the op)."""
    f = bound.fields
    strides = tuple(16 if s == 0 and d == 1 else s for s, d in zip(f.global_strides, f.global_shape[1:]))
    validate(_replace(f, global_strides=strides), within_base=False)


# --------------------------------------------------------------------------- across launches

def output_maps(store: MapStore, allocs: dict, out: dict) -> dict:
    """{buffer: {byte offset: descriptor}} of the map values left in the output buffers, each descriptor over
    the output array of the buffer it describes (so a next launch given these outputs binds it to its buffer)."""
    by_alloc = {a.id: name for name, a in allocs.items()}
    found: dict = {}
    for name, alloc in allocs.items():
        if name not in out or alloc.nbytes < NBYTES:
            continue
        words = alloc.data[: alloc.nbytes - alloc.nbytes % 8].view("<u8")
        hits = np.flatnonzero(((words >> np.uint64(32)) == np.uint64(TAG)) & ((words & np.uint64(15)) == 0))
        for i in hits.tolist():
            off = 8 * i
            try:
                n = store.at(alloc, off, None, "")
            except (EngineError, UnsupportedTIRxError):
                continue
            bound = store.values[n]
            owner = by_alloc.get(bound.alloc.id) if bound.alloc is not None else None
            if owner is None or owner not in out or bound.error is not None:
                continue
            found.setdefault(name, {})[off] = descriptor(bound, out[owner].reshape(-1).view(np.uint8))
    return found


def descriptor(bound: BoundTensorMap, data: np.ndarray) -> TensorMapArray:
    """The TensorMap descriptor of a map value whose globalAddress is `bound.base_off` bytes into `data`."""
    tensor = data[bound.base_off:]
    fields = _replace(bound.fields, global_address=int(tensor.__array_interface__["data"][0]),
                      base_nbytes=int(tensor.nbytes))
    arr = encode_fields(fields, tensor)
    return arr


def bind_buffer_maps(func, inputs: dict, gmem, store: MapStore) -> None:
    """Write the tokens of the maps buffer inputs hold (`tensormap.with_maps`) into their allocations."""
    from .tensormap import bind_descriptor, input_buffers
    buffers = input_buffers(func, inputs)
    for p in func.params:
        maps = getattr(inputs.get(p.name), "tensor_maps", None)
        if p.kind != "buffer" or not maps:
            continue
        alloc = gmem.allocs[p.name]
        for off, arr in sorted(maps.items()):
            store.put(alloc, off, store.new(bind_descriptor(f"{p.name}+{off}", arr, buffers, gmem)))


def attach_output_maps(store: MapStore, gmem, out: dict) -> dict:
    """The outputs, those holding map values as `MapBuffer`s (see `output_maps`)."""
    from .tensormap import with_maps
    if not store.values:
        return out
    found = output_maps(store, {n: gmem.allocs[n] for n in out if n in gmem.allocs}, out)
    return {n: with_maps(a, found[n]) if n in found else a for n, a in out.items()}


def stray_words(store: MapStore, gmem, names, inputs: dict | None = None) -> dict:
    """{buffer: byte ranges} of map words left in output buffers outside any whole map: a kernel read a map's
    bytes as numbers, or copied or patched part of one -- results that depend on the undocumented CUtensorMap
    layout, which the model does not give (the run is incomplete, not a guess)."""
    out: dict[str, str] = {}
    if not store.values:
        return out
    for name in names:
        alloc = gmem.allocs.get(name)
        if alloc is None or alloc.nbytes < 8:
            continue
        words = alloc.data[: alloc.nbytes - alloc.nbytes % 8].view("<u8")
        tagged = (words >> np.uint64(32)) == np.uint64(TAG)
        if not tagged.any():
            continue
        given = (inputs or {}).get(name)
        if isinstance(given, np.ndarray) and given.nbytes == alloc.nbytes:
            # a word the input already held there is data that merely looks like a token
            before = np.ascontiguousarray(given).reshape(-1).view(np.uint8)[: words.size * 8].view("<u8")
            tagged &= words != before
        for i in np.flatnonzero(tagged & ((words & np.uint64(15)) == 0)).tolist():
            try:
                store.at(alloc, 8 * i, None, "")
            except (EngineError, UnsupportedTIRxError):
                continue
            tagged[i:i + WORDS] = False           # a whole map
        if tagged.any():
            out[name] = _ranges(np.flatnonzero(tagged))
    return out


def bind_param_bytes(tensor_maps: dict, gmem, store: MapStore) -> None:
    """Give every bound tensor-map parameter (and host-encoded map) its 128 bytes at its handle address, holding
    its tokens: a kernel may copy them (ld.param/ld.global of the map, then st) to patch the copy."""
    for addr, bound in tensor_maps.items():
        if bound.error is None:
            store.put(gmem.add_param(f"{bound.name} (tensor map)", addr, NBYTES), 0, store.new(bound))
