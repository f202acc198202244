"""TMA tensor maps: `TensorMap(...)` on the host, descriptor decoding and box addressing in the engine.

A `TensorMap` validates the `cuTensorMapEncodeTiled` limits (ptx-encodings §8.1) and
`.numpy()` returns the descriptor array bound to a tensor-map parameter
(`tmap: T.Ptr(T.void)`).  Shapes and element strides are innermost first; global
strides are in bytes and list dims 1..rank-1 (dim 0 is contiguous).

Descriptor array (uint8, little endian) = a 256-byte header + a copy of `base`'s bytes:

    0   8  magic b"MCTMAP\\x00\\x01"      24  8  globalAddress (host address of base[0])
    8   4  rank                          32  8  base byte length (= payload length)
    12  4  dtype code (DTYPES order)     40 40  global_shape[5]      (u64)
    16  4  swizzle 0 none/1 32B/2 64B/3 128B/4 128B_atom_32B   80 32  global_strides[4] (u64, bytes)
    20  4  oob fill 0 zero / 1 NaN       112 20  box_shape[5]         (u32)
                                         132 20  element_strides[5]   (u32)
                                         152  4  flags: bit 0 the extent is not held to base
    256 .. the payload: a snapshot of base's bytes

How the engine finds the data (`bind_tensor_maps`): like a real CUtensorMap, the
descriptor holds an address.  The array `.numpy()` returns is a `TensorMapArray` (a
uint8 ndarray subclass) that also keeps `base` alive, so that address stays valid and
unique.  If the whole base lies inside an array bound to one of the kernel's buffer
parameters, the map refers to that parameter's global allocation, so TMA loads read and
TMA stores write the very buffer the kernel (and `outputs`) see (pointer semantics:
later changes to that array are seen).  Otherwise -- and always for a descriptor that no
longer carries its base, e.g. one rebuilt with np.array() or loaded from a file -- the
engine makes the payload, a snapshot of base taken by `.numpy()`, a global allocation
of its own named after the tensor-map parameter; a kernel that takes only tensor maps
still reads its data from global memory, so racecheck sees the global reads.

Validation errors raise `TensorMapError` naming the field; the engine re-validates the
decoded descriptor at the op and reports the same field with the op's span.

A map the kernel encodes itself in its host prelude (`ir.TensorMapEncode`, `bind_host_maps`)
needs no descriptor: it refers to its global buffer's allocation at the encoded byte offset,
and every cuTensorMapEncodeTiled rule is checked before the launch, a violation reported at
the encode's line (the host call fails there, so the kernel never starts).
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

import ir

from .descriptors import tma_swizzle
from .memory import sparse_copy

MAGIC = b"MCTMAP\x00\x01"
HEADER = 256
DTYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float16", "bfloat16",
          "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn")
# packed 4-bit elements as CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B moves them: "copies '16 x U4' packed values to
# memory aligned as 8 bytes. There are no gaps between packed values" (CUDA driver API, cuTensorMapEncodeTiled).
# Such a map is held as a byte map: dim 0's extent and box (and a copy's dim-0 coordinate) count element pairs.
PACKED = {"float4_e2m1fn": 2}
# CUtensorMapSwizzle codes.  4 = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ("swizzles 32-byte chunks within a 128-byte
# span", CUDA driver API) is CuTe's Swizzle<2,5,2> (`descriptors.swizzle_atom32`).  5 (128B_ATOM_32B_FLIP_8B: also
# "exchanges the lower and upper eight bytes of each 16-byte unit on alternate rows") and 6 (128B_ATOM_64B) are
# not modeled: no cited source gives their address bits (which rows alternate, which bits pick a 64-byte chunk).
SWIZZLE_CODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3, "128B_atom_32B": 4}
SWIZZLE_NAMES = {v: k for k, v in SWIZZLE_CODES.items()}
SWIZZLE_SPAN = {0: None, 1: 32, 2: 64, 3: 128, 4: 128}
OOB_FILLS = {"zero": 0, "nan": 1}
TMAP_PARAM_BASE = 0x7E00_0000_0000     # where tensor-map parameters "live" (param space, no data)
TMAP_PARAM_WINDOW = 1 << 32            # 256 bytes per handle from TMAP_PARAM_BASE
_FMT = "<8sIIII QQ 5Q 4Q 5I 5I I"


class TensorMapError(ValueError):
    """A tensor-map field violates a tensor-map rule; `field` names it (e.g. "box_shape[0]")."""

    def __init__(self, field: str, message: str):
        super().__init__(f"tensor map {field}: {message}")
        self.field = field
        self.message = message


class TensorMapUnmodeled(TensorMapError):
    """A map the driver may accept but the model does not (reported `incomplete`, not invalid)."""


def np_dtype(name: str) -> np.dtype:
    from .values import NP_DTYPE       # (ml_dtypes loads on first use)
    return np.dtype(NP_DTYPE.get(name, name))


def _dtype_name(dtype) -> str:
    if isinstance(dtype, str):
        name = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64"}.get(dtype, dtype)
    else:
        name = np.dtype(dtype).name
    if name not in DTYPES:
        raise TensorMapError("dtype", f"{dtype!r} is not a tensor-map element type; use one of {', '.join(DTYPES)}")
    return name


def _swizzle_code(swizzle) -> int:
    if swizzle is None:
        return 0
    if isinstance(swizzle, (int, np.integer)) and int(swizzle) in SWIZZLE_NAMES:
        return int(swizzle)
    if isinstance(swizzle, str):
        key = swizzle.strip()
        key = key[:-1] + "B" if key.lower().endswith("b") and key[:-1].isdigit() else key.lower()
        key = "128B_atom_32B" if key.lower() == "128b_atom_32b" else key
        if key in SWIZZLE_CODES:
            return SWIZZLE_CODES[key]
    raise TensorMapError("swizzle", f"{swizzle!r} is not a modeled swizzle; use 'none', '32B', '64B', '128B' or "
                                    f"'128B_atom_32B'")


@dataclass(frozen=True)
class TensorMapFields:
    """A decoded descriptor (what the engine works with)."""

    rank: int
    dtype: str
    swizzle: int
    oob_fill: int
    global_address: int
    base_nbytes: int
    global_shape: tuple
    global_strides: tuple      # bytes, dims 1..rank-1
    box_shape: tuple
    element_strides: tuple
    within_base: bool = True   # False: encoded as the driver does, the extent not held to base (see validate)

    @property
    def packed(self) -> int:
        """Map elements per stored byte along dim 0 (2 for packed 4-bit maps, whose dim 0 counts bytes)."""
        return PACKED.get(self.dtype, 1)

    @property
    def esz(self) -> int:
        """Bytes per stored unit (a byte of two packed elements for a packed map)."""
        return 1 if self.dtype in PACKED else np_dtype(self.dtype).itemsize

    @property
    def box_counts(self) -> tuple:
        """Elements loaded per dim: box[0] in dim 0 (its element stride is ignored), ceil(box/es) above."""
        return (self.box_shape[0],) + tuple(math.ceil(b / e) for b, e in
                                            zip(self.box_shape[1:], self.element_strides[1:]))

    @property
    def box_bytes(self) -> int:
        return math.prod(self.box_counts) * self.esz

    def describe(self) -> str:
        return (f"rank-{self.rank} {self.dtype} map, shape {list(self.global_shape)}, box {list(self.box_shape)}, "
                f"swizzle {SWIZZLE_NAMES[self.swizzle]}")


def validate(f: TensorMapFields, within_base: bool = True) -> None:
    """The cuTensorMapEncodeTiled rules (interleave NONE), each violation naming its field.  `within_base`
    adds this package's own rule that the map's extent fits the memory handed over with it (`base_nbytes`):
    the driver cannot check that, so a host-encoded map skips it and a TMA reaching past the allocation is
    reported at the op instead."""
    if not 1 <= f.rank <= 5:
        raise TensorMapError("rank", f"rank {f.rank} is outside 1..5")
    esz = f.esz
    if f.global_address % 16:
        raise TensorMapError("base", f"global address {f.global_address:#x} is not 16-byte aligned")
    for i, d in enumerate(f.global_shape):
        if not 1 <= d <= 1 << 32:
            raise TensorMapError(f"global_shape[{i}]", f"{d} elements is outside 1..2^32")
    for i, s in enumerate(f.global_strides):
        if s <= 0 or s % 16:
            raise TensorMapError(f"global_strides[{i}]", f"stride {s} bytes (of dim {i + 1}) is not a positive "
                                                          f"multiple of 16")
        if s >= 1 << 40:
            raise TensorMapError(f"global_strides[{i}]", f"stride {s} bytes is not below 2^40")
    for i, b in enumerate(f.box_shape):
        if not 1 <= b <= 256:
            raise TensorMapError(f"box_shape[{i}]", f"box extent {b} is outside 1..256")
    inner = f.box_shape[0] * esz
    if inner % 16:
        raise TensorMapError("box_shape[0]", f"the inner box is {inner} bytes ({f.box_shape[0]} x {esz}); it must "
                                             f"be a multiple of 16 bytes")
    for i, e in enumerate(f.element_strides):
        if not 1 <= e <= 8:
            raise TensorMapError(f"element_strides[{i}]", f"element stride {e} is outside 1..8")
    span = SWIZZLE_SPAN[f.swizzle]
    if span is not None and inner > span:
        raise TensorMapError("swizzle", f"the inner box is {inner} bytes, more than the {span}-byte span of "
                                        f"{SWIZZLE_NAMES[f.swizzle]} swizzle; shrink box_shape[0] to "
                                        f"{span // esz} or use a wider swizzle")
    if f.oob_fill == 1 and (not f.dtype.startswith(("float", "bfloat")) or f.dtype in PACKED):
        raise TensorMapError("oob_fill", f"NaN fill needs a float element type, not {f.dtype}")
    extent = f.global_shape[0] * esz + sum((d - 1) * s for d, s in zip(f.global_shape[1:], f.global_strides))
    if within_base and f.within_base and extent > f.base_nbytes:
        raise TensorMapError("global_shape", f"shape {list(f.global_shape)} with strides "
                                             f"{list(f.global_strides)} spans {extent} bytes, but base has "
                                             f"{f.base_nbytes}")


class TensorMapArray(np.ndarray):
    """The descriptor array of `TensorMap.numpy()`: plain uint8 data that keeps its base alive."""

    tensor_base: np.ndarray | None = None

    def __array_finalize__(self, obj):
        self.tensor_base = getattr(obj, "tensor_base", None)


class TensorMap:
    """A tiled TMA tensor map over `base` (a NumPy array); `.numpy()` is the bindable descriptor.
    `within_base=False` encodes as the driver does, which sees only a pointer: the extent may pass base's end
    (a template whose address the kernel patches); a TMA reaching past it is then `oob` at the op."""

    def __init__(self, base, global_shape, global_strides, box_shape, element_strides, dtype, swizzle="none",
                 oob_fill="zero", within_base=True):
        if not isinstance(base, np.ndarray):
            raise TensorMapError("base", f"base must be a NumPy array, got {type(base).__name__}")
        if not base.flags.c_contiguous:
            raise TensorMapError("base", "base must be C-contiguous (pass arr.reshape(-1) of a contiguous array)")
        rank = len(global_shape)
        if not 1 <= rank <= 5:
            raise TensorMapError("rank", f"global_shape has {rank} dims; tensor maps have rank 1..5")
        if len(global_strides) != rank - 1:
            raise TensorMapError("global_strides", f"{len(global_strides)} strides for a rank-{rank} map; give the "
                                                   f"{rank - 1} byte strides of dims 1..{rank - 1} (dim 0 is "
                                                   f"contiguous)")
        for field, seq in (("box_shape", box_shape), ("element_strides", element_strides)):
            if len(seq) != rank:
                raise TensorMapError(field, f"{len(seq)} entries for a rank-{rank} map")
        if oob_fill not in OOB_FILLS:
            raise TensorMapError("oob_fill", f"{oob_fill!r} is not 'zero' or 'nan'")
        self.base = base
        dtype = _dtype_name(dtype)
        if dtype in PACKED:           # extents and box in elements, as the driver takes them; held in bytes
            global_shape, box_shape = packed_bytes(dtype, global_shape, box_shape)
        self.fields = TensorMapFields(rank, dtype, _swizzle_code(swizzle), OOB_FILLS[oob_fill],
                                      int(base.__array_interface__["data"][0]), int(base.nbytes),
                                      tuple(int(x) for x in global_shape), tuple(int(x) for x in global_strides),
                                      tuple(int(x) for x in box_shape), tuple(int(x) for x in element_strides),
                                      bool(within_base))
        validate(self.fields)

    def numpy(self) -> np.ndarray:
        return encode_fields(self.fields, self.base)

    def __repr__(self) -> str:
        return f"TensorMap({self.fields.describe()})"


def encode_fields(f: TensorMapFields, base: np.ndarray) -> TensorMapArray:
    """The descriptor array of `f` over `base` (its globalAddress): the header, then a snapshot of base."""
    pad = lambda seq, n: tuple(seq) + (0,) * (n - len(seq))   # noqa: E731
    head = struct.pack(_FMT, MAGIC, f.rank, DTYPES.index(f.dtype), f.swizzle, f.oob_fill, f.global_address,
                       f.base_nbytes, *pad(f.global_shape, 5), *pad(f.global_strides, 4),
                       *pad(f.box_shape, 5), *pad(f.element_strides, 5), 0 if f.within_base else 1)
    out = np.zeros(HEADER + f.base_nbytes, dtype=np.uint8)
    out[:len(head)] = np.frombuffer(head, dtype=np.uint8)
    out[HEADER:] = base.reshape(-1).view(np.uint8)[:f.base_nbytes]
    tm = out.view(TensorMapArray)
    tm.tensor_base = base
    return tm


class MapBuffer(np.ndarray):
    """A buffer input holding tensor maps as data (`with_maps`): `tensor_maps` = {byte offset: descriptor}."""

    tensor_maps: dict | None = None

    def __array_finalize__(self, obj):
        self.tensor_maps = getattr(obj, "tensor_maps", None)


def with_maps(array: np.ndarray, maps: dict) -> MapBuffer:
    """`array` as a buffer input whose bytes at each offset of `maps` hold that tensor map (a `TensorMap` or its
    descriptor): the 128 CUtensorMap bytes a kernel copies, patches with tensormap.replace or hands to a TMA.
    The map itself is what the bytes hold (numsim/tmap_values.py), not an invented encoding."""
    out = np.asarray(array).view(MapBuffer)
    out.tensor_maps = {int(k): (v.numpy() if isinstance(v, TensorMap) else v) for k, v in maps.items()}
    for off in out.tensor_maps:
        if off < 0 or off % 64 or off + 128 > out.nbytes:
            raise TensorMapError("offset", f"a tensor map at byte {off} of a {out.nbytes}-byte buffer: it must be "
                                           f"64-byte aligned and hold all 128 bytes")
    return out


def decode(arr) -> TensorMapFields:
    """Fields of a descriptor array (TensorMapError if it is not one); not validated."""
    if isinstance(arr, TensorMap):
        arr = arr.numpy()
    if not isinstance(arr, np.ndarray):
        raise TensorMapError("descriptor", f"a tensor-map parameter takes TensorMap(...).numpy(), got "
                                           f"{type(arr).__name__}")
    raw = arr.reshape(-1).view(np.uint8) if arr.flags.c_contiguous else np.ascontiguousarray(arr).view(np.uint8)
    size = struct.calcsize(_FMT)
    if raw.size < HEADER or bytes(raw[:8]) != MAGIC:
        raise TensorMapError("descriptor", "the bound array is not a TensorMap descriptor (no MCTMAP header); "
                                           "bind TensorMap(...).numpy()")
    vals = struct.unpack(_FMT, bytes(raw[:size]))
    _, rank, dcode, swz, fill, addr, nbytes = vals[:7]
    shape, strides, box, es, flags = vals[7:12], vals[12:16], vals[16:21], vals[21:26], vals[26]
    if dcode >= len(DTYPES):
        raise TensorMapError("dtype", f"element type code {dcode} is unknown")
    if swz not in SWIZZLE_NAMES:
        raise TensorMapError("swizzle", f"swizzle code {swz} is not none/32B/64B/128B/128B_atom_32B")
    if fill not in (0, 1):
        raise TensorMapError("oob_fill", f"OOB fill code {fill} is not zero (0) or NaN (1)")
    r = max(1, min(rank, 5))
    return TensorMapFields(rank, DTYPES[dcode], swz, fill, addr, nbytes, tuple(shape[:r]), tuple(strides[:r - 1]),
                           tuple(box[:r]), tuple(es[:r]), within_base=not flags & 1)


def rebind(arr, tensor: np.ndarray, offset: int = 0) -> "TensorMapArray":
    """The descriptor `arr` pointing at `tensor` (from byte `offset`): a copy whose globalAddress is that memory
    and which keeps `tensor` alive, so a run binds the map to the buffer parameter holding `tensor` (a
    descriptor loaded from a file has lost its base; without this it would read and write a private copy)."""
    f = decode(arr)
    if not isinstance(tensor, np.ndarray) or not tensor.flags.c_contiguous:
        raise TensorMapError("base", "rebind needs a C-contiguous NumPy array")
    if offset < 0 or offset + f.base_nbytes > tensor.nbytes:
        raise TensorMapError("base", f"the map spans {f.base_nbytes} bytes from offset {offset}, but the tensor "
                                     f"has {tensor.nbytes}")
    raw = np.array(arr.reshape(-1).view(np.uint8), copy=True)
    addr = int(tensor.__array_interface__["data"][0]) + offset
    raw[24:32] = np.frombuffer(struct.pack("<Q", addr), dtype=np.uint8)
    out = raw.view(TensorMapArray)
    out.tensor_base = tensor.reshape(-1).view(np.uint8)[offset:offset + f.base_nbytes]
    return out


def payload(arr, nbytes: int, copy: bool = True) -> np.ndarray:
    """The tensor bytes a descriptor array carries after its header (with `copy` False: a read-only view)."""
    raw = arr.numpy() if isinstance(arr, TensorMap) else arr
    raw = raw.reshape(-1).view(np.uint8)
    if raw.size < HEADER + nbytes:
        raise TensorMapError("descriptor", f"the descriptor array holds {raw.size - HEADER} payload bytes, its "
                                           f"header says {nbytes}")
    if not copy:
        view = raw[HEADER:HEADER + nbytes].view()
        view.flags.writeable = False
        return view
    return raw[HEADER:HEADER + nbytes].copy()


# --------------------------------------------------------------------------- box addressing

@dataclass
class BoxPlan:
    """Where every element of one box goes: all arrays are in box order (dim 0 fastest)."""

    global_off: np.ndarray     # byte offset from globalAddress (int64; OOB entries meaningless)
    inb: np.ndarray            # element inside the tensor
    smem_addr: np.ndarray      # absolute shared address after swizzle (int64)
    esz: int


def box_plan(f: TensorMapFields, coords, dst: int) -> BoxPlan:
    """Element addressing of a tile-mode box at `coords` (dim 0 first) landing at shared `dst`
    (ptx-encodings §8.2): x_i = c_i + j_i * es_i (es_0 = 1); OOB iff some x_i outside [0, dim_i);
    shared offset = esz * linear(j) with dim 0 contiguous; then the swizzle XOR on the absolute address."""
    counts = f.box_counts
    esz = f.esz
    if f.packed > 1:       # dim 0 of a packed map is stored in bytes; its coordinate counts elements
        coords = (int(coords[0]) // f.packed,) + tuple(coords[1:])
    shape = tuple(reversed(counts))                 # C order: dim rank-1 outermost
    goff = np.zeros(shape, dtype=np.int64)
    inb = np.ones(shape, dtype=np.bool_)
    strides_b = (esz,) + tuple(f.global_strides)
    for i in range(f.rank):
        es = 1 if i == 0 else f.element_strides[i]
        x = int(coords[i]) + np.arange(counts[i], dtype=np.int64) * es
        bshape = [1] * f.rank
        bshape[f.rank - 1 - i] = counts[i]
        x = x.reshape(bshape)
        goff = goff + x * strides_b[i]
        inb = inb & (x >= 0) & (x < f.global_shape[i])
    n = goff.size
    soff = np.arange(n, dtype=np.int64) * esz
    smem = tma_swizzle(int(dst) + soff, f.swizzle)
    return BoxPlan(goff.reshape(-1), inb.reshape(-1), smem, esz)


def fill_bits(f: TensorMapFields) -> int:
    """The bit pattern written for an OOB element: zero, or a quiet NaN of the element type (model choice)."""
    if f.oob_fill == 0:
        return 0
    nan = np.array([np.nan], dtype=np_dtype(f.dtype))
    return int(nan.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[nan.itemsize])[0])


# --------------------------------------------------------------------------- engine binding

def handle_scalars(func) -> dict:
    """Values of tensor-map handles -- parameters and the host prelude's encoded maps: a distinct 'param
    space' address each."""
    out = {}
    k = 0
    for p in func.params:
        if p.kind == "handle":
            out[p.name] = TMAP_PARAM_BASE + 256 * k
            k += 1
    for h in func.host:
        if isinstance(h, ir.TensorMapEncode):
            out[h.var.name] = TMAP_PARAM_BASE + 256 * k
            k += 1
    return out


# CUtensorMapSwizzle codes modeled (NONE, 32B, 64B, 128B, 128B_ATOM_32B) and CUtensorMapFloatOOBfill (NONE = zeros,
# NAN)
_HOST_SWIZZLES = {0, 1, 2, 3, 4}
_UNMODELED_SWIZZLES = {5: "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B", 6: "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B"}
_CU_DTYPE_CODES = range(16)      # CU_TENSOR_MAP_DATA_TYPE_UINT8 .. _16U6_ALIGN16B


_CU_16U4_ALIGN8B = 13          # the forced type of packed 4-bit maps (see PACKED)
_PACKED_4BIT = ("float4_e2m1fn", "uint8")


def packed_bytes(dtype: str, shape, box) -> tuple[tuple, tuple]:
    """Dim 0 of a packed map in bytes; an odd element count (a row or box ending mid-byte) is not modeled
    (`TensorMapUnmodeled`)."""
    n = PACKED[dtype]
    shape, box = tuple(int(x) for x in shape), tuple(int(x) for x in box)
    if shape[0] % n or box[0] % n:
        raise TensorMapUnmodeled("box_shape[0]", f"a map of packed {dtype} with an odd dim-0 extent ({shape[0]}) or "
                                                 f"box ({box[0]}) is not modeled")
    return (shape[0] // n,) + shape[1:], (box[0] // n,) + box[1:]


def bind_host_maps(func, scalars: dict, gmem, base_of) -> dict:
    """{handle value: BoundTensorMap} for the tensor maps the host prelude encodes (`ir.TensorMapEncode`) over
    the kernel's own global buffers: the map refers to that buffer's allocation, so TMA loads read and stores
    write the memory the kernel (and `outputs`) see.  `base_of(buffer)` gives the parameter's allocation
    name.  A field NumSim does not model raises `UnsupportedTIRxError`; a map that breaks a
    cuTensorMapEncodeTiled rule raises `EngineError("invalid_descriptor")` at the encode's line, before the
    launch, as the host call fails there."""
    from .compile_stmt import _static
    from .errors import EngineError, UnsupportedTIRxError
    handles = handle_scalars(func)
    consts = func.constant_values
    out = {}
    for h in func.host:
        if not isinstance(h, ir.TensorMapEncode):
            continue

        def val(e, what, h=h):
            v = _static(e, consts, scalars)
            if v is None:
                raise UnsupportedTIRxError(f"tensor map {h.var.name}", h.span,
                                           f"its {what} is not known before the launch")
            return int(v)
        name = h.var.name

        def invalid(field, message, h=h, name=name):
            # the host's cuTensorMapEncodeTiled returns an error and the launch never happens
            return EngineError("invalid_descriptor", f"cuTensorMapEncodeTiled of tensor map {name} over {h.buffer} "
                                                     f"fails: {field}: {message}", h.span, field=field,
                               tensor_map=name)
        cu_dtype = val(h.cu_dtype, "element type")
        if cu_dtype != -1 and cu_dtype not in _CU_DTYPE_CODES:
            raise invalid("dtype", f"{cu_dtype} is not a CUtensorMapDataType")
        packed = cu_dtype == _CU_16U4_ALIGN8B and h.dtype in _PACKED_4BIT
        if not packed and (h.dtype not in DTYPES or h.dtype in PACKED or cu_dtype != -1):
            raise UnsupportedTIRxError(f"tensor map {name} of {h.dtype}", h.span,
                                       "this tensor-map element type (packed sub-byte other than "
                                       "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, tf32 or another forced "
                                       "CUtensorMapDataType) is not modeled")
        interleave, swizzle = val(h.interleave, "interleave"), val(h.swizzle, "swizzle")
        l2, oob = val(h.l2, "L2 promotion"), val(h.oob, "oob fill")
        rank = len(h.shape)
        if interleave not in (0, 1, 2):
            raise invalid("interleave", f"{interleave} is not a CUtensorMapInterleave (0 none, 1 16B, 2 32B)")
        if swizzle not in range(7):
            raise invalid("swizzle", f"{swizzle} is not a CUtensorMapSwizzle (0 none, 1 32B, 2 64B, 3 128B, 4-6 "
                                     f"the 128B atom modes)")
        if l2 not in range(4):
            raise invalid("l2_promotion", f"{l2} is not a CUtensorMapL2promotion (0 none, 1 64B, 2 128B, 3 256B)")
        if oob not in (0, 1):
            raise invalid("oob_fill", f"{oob} is not a CUtensorMapFloatOOBfill (0 none, 1 NaN)")
        if interleave and rank < 3:
            raise invalid("interleave", f"an interleaved map has rank 3 or more, not {rank}")
        if interleave == 2 and swizzle != 1:
            raise invalid("swizzle", "CU_TENSOR_MAP_INTERLEAVE_32B requires CU_TENSOR_MAP_SWIZZLE_32B")
        if interleave:
            raise UnsupportedTIRxError(f"tensor map {name}", h.span, "interleaved tensor maps are not modeled")
        if swizzle not in _HOST_SWIZZLES:
            raise UnsupportedTIRxError(f"tensor map {name}", h.span,
                                       f"swizzle mode {swizzle} ({_UNMODELED_SWIZZLES[swizzle]}) is not "
                                       f"modeled: the cited sources do not give its address bits")
        alloc = gmem.allocs[base_of(h.buffer)]
        off = val(h.byte_offset, "base offset")
        if not 0 <= off < alloc.nbytes:
            raise invalid("base", f"the byte offset {off} is outside {h.buffer} ({alloc.nbytes} bytes)")
        shape = tuple(val(e, "shape") for e in h.shape)
        box = tuple(val(e, "box") for e in h.box)
        if packed:
            try:
                shape, box = packed_bytes("float4_e2m1fn", shape, box)
            except TensorMapUnmodeled as err:
                raise UnsupportedTIRxError(f"tensor map {name}", h.span, err.message) from None
        fields = TensorMapFields(rank, "float4_e2m1fn" if packed else h.dtype, swizzle, oob, alloc.base + off,
                                 alloc.nbytes - off, shape, tuple(val(e, "stride") for e in h.strides), box,
                                 tuple(val(e, "element stride") for e in h.elem_strides))
        try:
            # cuTensorMapEncodeTiled sees only a pointer, not its allocation: a map wider than the buffer
            # encodes fine (a template whose address is patched on the device does so on purpose)
            validate(fields, within_base=False)
        except TensorMapError as err:
            raise invalid(err.field, err.message) from None
        bound = BoundTensorMap(name, fields, alloc=alloc, base_off=off)
        bound.validated = True
        out[handles[name]] = bound
    return out


# in Program.written_globals: some operation stores through a tensor map (no parameter has this name)
TENSOR_MAPS = "<tensor maps>"


class BoundTensorMap:
    """A tensor-map parameter of one run: its decoded fields (or the decode error) and its data."""

    __slots__ = ("name", "fields", "error", "alloc", "base_off", "validated")

    def __init__(self, name, fields=None, error=None, alloc=None, base_off=0):
        self.name = name
        self.fields = fields
        self.error = error
        self.alloc = alloc            # the global Allocation holding the tensor
        self.base_off = base_off      # byte offset of globalAddress in it
        self.validated = False


def buffers_under(func, inputs: dict, maps) -> set[str]:
    """The buffer parameters that tensor-map inputs `maps` point into: a map bound to the live array it was
    encoded over is bound into the buffer parameter holding it (`bind_tensor_maps`), not to bytes of its own."""
    out = set()
    for name in maps:
        arr = inputs.get(name)
        live = getattr(arr, "tensor_base", None)
        if live is None:
            continue
        try:
            f = decode(arr.numpy() if isinstance(arr, TensorMap) else arr)
        except TensorMapError:
            continue
        if int(live.__array_interface__["data"][0]) != f.global_address:
            continue
        for p in func.params:
            v = inputs.get(p.name)
            if p.kind == "buffer" and isinstance(v, np.ndarray) and v.size:
                lo = int(v.__array_interface__["data"][0])
                if lo <= f.global_address and f.global_address + f.base_nbytes <= lo + int(v.nbytes):
                    out.add(p.name)
    return out


def bind_tensor_maps(func, inputs: dict, gmem, written=True) -> dict:
    """{handle value: BoundTensorMap} for every tensor-map parameter; see the module docstring.  `written`:
    the map parameters some operation stores through (True: any may be); another map's tensor bytes are
    bound without a private copy (read-only, when globalAddress is 16-byte aligned as the allocation base is)."""
    handles = handle_scalars(func)
    buffers = input_buffers(func, inputs)
    return {addr: bind_descriptor(name, inputs.get(name), buffers, gmem, stored=written is True or name in written)
            for name, addr in handles.items()}


def input_buffers(func, inputs: dict) -> list:
    """(name, first address, end) of each buffer input's array: where a descriptor's globalAddress may point."""
    buffers = []
    for p in func.params:
        v = inputs.get(p.name)
        if p.kind == "buffer" and isinstance(v, np.ndarray) and v.size:
            lo = int(v.__array_interface__["data"][0])
            buffers.append((p.name, lo, lo + int(v.nbytes)))
    return buffers


def bind_descriptor(name: str, arr, buffers: list, gmem, stored: bool = True) -> BoundTensorMap:
    """One descriptor bound for a run: to the buffer input holding its base (pointer semantics), else to a global
    allocation of its own holding its payload (`stored`: some operation may store through the map, so the payload
    is a private copy; else a read-only view); a decode error is kept and reported at the op using it."""
    if isinstance(arr, TensorMap):
        arr = arr.numpy()
    try:
        f = decode(arr)
    except TensorMapError as err:
        return BoundTensorMap(name, error=err)
    bound = BoundTensorMap(name, f)
    live = getattr(arr, "tensor_base", None)
    if live is not None and int(live.__array_interface__["data"][0]) != f.global_address:
        live = None
    for buf, lo, hi in buffers if live is not None else ():
        if lo <= f.global_address and f.global_address + f.base_nbytes <= hi:
            bound.alloc, bound.base_off = gmem.allocs[buf], f.global_address - lo
            break
    else:
        try:
            # a map no operation stores through reads its bytes in place (a read-only view): no copy of a
            # tensor of hundreds of MB; globalAddress not 16-byte aligned needs the padded copy below
            data = payload(arr, f.base_nbytes, copy=False)
        except TensorMapError as err:
            bound.error = err
        else:
            alloc_name = name if name not in gmem.allocs else f"{name}#{len(gmem.allocs)}"
            if not stored and f.global_address % 16 == 0:
                bound.alloc, bound.base_off = gmem.add(alloc_name, data), 0
                return bound
            # 16-byte aligned like globalAddress: the allocation base is, and the offset is kept mod 16; one
            # copy, of the nonzero part only (an output tensor is mostly zeros: memory.sparse_copy)
            pad = f.global_address % 16
            bound.alloc, bound.base_off = gmem.add(alloc_name, sparse_copy(data, pad)), pad
    return bound
