"""Tensor maps as values in memory (a CUtensorMap copied to a workspace, patched, then used by a TMA).

PTX lets a tensor map live in `.global` (or be edited in `.shared::cta`) as a 128-byte opaque object (PTX ISA
5.5.8, 9.7.9.27).  The CUtensorMap byte layout is undocumented, so the model does not invent it: the 16 8-byte
words of a map in memory are *tokens* naming a map value of this run (`MapStore.values`: the decoded fields and
the global allocation they describe) and the word's offset in it.  Every byte of a token carries that
provenance: the low half is `n << 4 | i` (map n, word i), xored and times an odd constant, and the high half a
32-bit hash of the low half, so a word assembled from bytes of two maps, or of two offsets of one map, or
changed by arithmetic, is no token (up to a 2**-32 chance per word; a single byte equal in both sources cannot
be told apart).
Any byte-exact copy -- `ld`/`st` of any width and in any pieces, through registers, shared or global memory,
element copies, `cp.async.bulk` -- moves the bytes and so the map: the destination is that map when all 128
bytes come from one map value at the same offsets.  A partial, misaligned, mixed or altered copy is no whole
map, and a TMA or `tensormap.replace` through it is `incomplete` naming the op and saying where each byte range
came from (never a guess); so is a field written by a plain store, which presumes the layout.  Bytes without
tokens (stale, never written) are not a map the model knows: also `incomplete`.  Model limit: a kernel that
computes with the token words (as numbers) instead of copying them is not detected unless the result is used
as a map or left in an output buffer.

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

from .errors import EngineError, ResourceLimit, UnsupportedTIRxError
from .tensormap import BoundTensorMap, TensorMapArray, TensorMapError, encode_fields, validate

WORDS = 16                # 128 bytes
NBYTES = 8 * WORDS
ALIGN = 64                # a tensor map in memory is 64-byte aligned (ptx-encodings §8.1)
MAX_VALUES = 1 << 27      # n << 4 | i fits the token's low 32 bits, below _FAR
_SALT = np.uint32(0x4D43544D)   # "MCTM", seeds the hash
_INDEX = np.arange(WORDS, dtype=np.uint64)
_WORD = np.arange(WORDS, dtype=np.int64)
# (n << 4 | i) ^ _FAR times an odd constant (a bijection mod 2**32): every byte of the low half varies with the
# map and the word, not only the first; _UNSPREAD is its inverse
_SPREAD = np.uint32(0x9E3779B1)
_FAR = np.uint32(0xF000_0000)   # xored in first: a zero word decodes to map 0x0F000000, beyond any value
_UNSPREAD = np.uint32(pow(0x9E3779B1, -1, 1 << 32))


def _hash32(low: np.ndarray) -> np.ndarray:
    """murmur3's 32-bit finalizer of `low` ^ salt (uint32 arithmetic wraps): every output bit depends on every
    input bit, so a word with any byte from another map or offset fails the check w.h.p. (2**-32)."""
    h = low ^ _SALT
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def tokens(n: int) -> np.ndarray:
    halves = np.empty((WORDS, 2), dtype="<u4")
    halves[:, 0] = ((np.uint32(n << 4) | _INDEX.astype(np.uint32)) ^ _FAR) * _SPREAD
    halves[:, 1] = _hash32(halves[:, 0])
    return halves.reshape(-1).view("<u8")


def decode(words: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is a token of one of the `count` map values, map n, word index) per 8-byte word (little endian).  Only
    words naming an existing value are hashed: in data (zeros included) that is almost none."""
    halves = np.ascontiguousarray(words).view("<u4").reshape(-1, 2)
    v = (halves[:, 0] * _UNSPREAD) ^ _FAR
    n = v >> np.uint32(4)
    ok = n < count
    cand = np.flatnonzero(ok)
    if cand.size:
        ok[cand] = halves[cand, 1] == _hash32(halves[cand, 0])
    return ok, n, v & np.uint32(15)


_CHUNK = 1 << 16          # words per pass of `candidates` (its buffers stay in cache)


def candidates(words: np.ndarray, count: int) -> np.ndarray:
    """Indices of the words whose low half names one of the `count` map values (`decode`'s first test, without the
    hash): a whole output buffer is scanned in cache-sized pieces into reused buffers, where `decode` would make
    several arrays of its size -- in data almost no word passes."""
    low = np.ascontiguousarray(words).view("<u4")[0::2]
    limit = np.uint32(count << 4)           # n < count  <=>  (n << 4 | i) < count << 4
    buf = np.empty(min(_CHUNK, low.size), dtype=np.uint32)
    hit = np.empty(buf.size, dtype=np.bool_)
    found = []
    for start in range(0, low.size, _CHUNK):
        seg = low[start:start + _CHUNK]
        b, h = buf[:seg.size], hit[:seg.size]
        np.multiply(seg, _UNSPREAD, out=b)
        np.bitwise_xor(b, _FAR, out=b)
        np.less(b, limit, out=h)
        if h.any():
            found.append(np.flatnonzero(h) + start)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


class MapStore:
    """The map values of one run and their tensormap-proxy fence state."""

    def __init__(self):
        self.values: list[BoundTensorMap] = []
        self.writer: dict[int, tuple[int, int]] = {}     # value -> (warp, lane) that wrote it, until released
        self.released: set[int] = set()
        self.acquired: dict[tuple[int, int], dict[int, int]] = {}   # (warp, lane) -> {address: value acquired}

    def new(self, bound: BoundTensorMap, writer: tuple[int, int] | None = None) -> int:
        if len(self.values) >= MAX_VALUES:
            raise ResourceLimit("tensor_maps", f"the run made more than {MAX_VALUES} tensor-map values")
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
        ok, ns, idx = decode(alloc.data[off:off + NBYTES].view("<u8"), len(self.values))
        if ok.all() and (ns == ns[0]).all() and (idx == _WORD).all():
            return int(ns[0])                     # the common case: one whole map
        if not ok.any():
            raise UnsupportedTIRxError(what, span, f"the 128 bytes at {where} hold no tensor map the model knows "
                                                   f"(none was bound or copied there); the CUtensorMap byte layout "
                                                   f"is not modeled")
        # a partial, misaligned, mixed or altered copy: said first, as reports cut long reasons
        raise UnsupportedTIRxError(what, span, f"the 128 bytes at {where} are no whole tensor map "
                                               f"({self.provenance(ok, ns, idx)}); the CUtensorMap byte layout is "
                                               f"not modeled")

    def name(self, n: int) -> str:
        return f"map #{n} ({self.values[n].name})"

    def sources(self, ok, ns, idx) -> list[tuple[int, int, str]]:
        """Runs of consecutive words by where their bytes came from: (first word, end word, "bytes 0-63 of map
        #2 (q_map)" or "no map's bytes ...")."""
        out, k = [], 0
        while k < len(ok):
            j = k + 1
            if ok[k]:
                while j < len(ok) and ok[j] and ns[j] == ns[k] and idx[j] == idx[j - 1] + 1:
                    j += 1
                src = f"bytes {8 * int(idx[k])}-{8 * int(idx[j - 1]) + 7} of {self.name(int(ns[k]))}"
            else:
                while j < len(ok) and not ok[j]:
                    j += 1
                src = "no map's bytes (never copied there, computed, or pieced from other maps or offsets)"
            out.append((k, j, src))
            k = j
        return out

    def provenance(self, ok, ns, idx) -> str:
        """"bytes 0-63 are bytes 0-63 of map #2 (q_map); bytes 64-127 are no map's bytes (...)"."""
        return "; ".join(f"bytes {8 * k}-{8 * j - 1} are {src}" for k, j, src in self.sources(ok, ns, idx))

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
        cand = candidates(words, len(store.values))
        if not cand.size:
            continue
        ok, _, idx = decode(words[cand], len(store.values))
        for i in cand[ok & (idx == 0)].tolist():
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
    """{buffer: where} of map bytes left in output buffers outside any whole map, each run of them said with its
    source ("bytes 8-63 (bytes 8-63 of map #0 (b))"): a kernel read a map's bytes as numbers, or copied or patched
    part of one -- results that depend on the undocumented CUtensorMap layout, which the model does not give (the
    run is incomplete, not a guess)."""
    out: dict[str, str] = {}
    if not store.values:
        return out
    for name in names:
        alloc = gmem.allocs.get(name)
        if alloc is None or alloc.nbytes < 8:
            continue
        words = alloc.data[: alloc.nbytes - alloc.nbytes % 8].view("<u8")
        if not candidates(words, len(store.values)).size:
            continue                    # (the common case, found without decoding the whole buffer)
        tagged, ns, idx = decode(words, len(store.values))
        if not tagged.any():
            continue
        given = (inputs or {}).get(name)
        if isinstance(given, np.ndarray) and given.nbytes == alloc.nbytes:
            # a word the input already held there is data that merely looks like a token
            before = np.ascontiguousarray(given).reshape(-1).view(np.uint8)[: words.size * 8].view("<u8")
            tagged &= words != before
        for i in np.flatnonzero(tagged & (idx == 0)).tolist():
            try:
                store.at(alloc, 8 * i, None, "")
            except (EngineError, UnsupportedTIRxError):
                continue
            tagged[i:i + WORDS] = False           # a whole map
        runs = []
        for lo, hi in _runs(np.flatnonzero(tagged)):
            parts = store.sources(tagged[lo:hi + 1], ns[lo:hi + 1], idx[lo:hi + 1])
            src = "; ".join(t if len(parts) == 1 else f"{8 * (lo + k)}-{8 * (lo + j) - 1}: {t}" for k, j, t in parts)
            runs.append(f"{8 * lo}-{8 * hi + 7} ({src})")
        if runs:
            out[name] = ", ".join(runs)
    return out


def _runs(words) -> list[tuple[int, int]]:
    """Runs of consecutive word indices: [1, 2, 3, 9] -> [(1, 3), (9, 9)]."""
    out: list[tuple[int, int]] = []
    for w in words.tolist():
        if out and out[-1][1] == w - 1:
            out[-1] = (out[-1][0], w)
        else:
            out.append((w, w))
    return out


def bind_param_bytes(tensor_maps: dict, gmem, store: MapStore) -> None:
    """Give every bound tensor-map parameter (and host-encoded map) its 128 bytes at its handle address, holding
    its tokens: a kernel may copy them (ld.param/ld.global of the map, then st) to patch the copy."""
    for addr, bound in tensor_maps.items():
        if bound.error is None:
            store.put(gmem.add_param(f"{bound.name} (tensor map)", addr, NBYTES), 0, store.new(bound))
