"""What the capture (benchmarks/corpus/capture.py) stands in for on a CPU machine without CUDA.

- `StandIn`: a value of a reference package that is not installed here (flashinfer, cudnn, deep_gemm ...).
  Calls, attributes and items give further stand-ins and `a, b = ref(...)` unpacks into as many stand-ins
  as the statement names, so a test that merely *builds* its reference before launching still reaches
  the launch.  A helper of such a package with a CPU implementation (benchmarks/corpus/references.py)
  is handed out instead of a stand-in, so data the test builds with it is real.  A stand-in never becomes data: using one as a number raises `ReferenceUnavailable`, a torch
  op on one gives a stand-in, and a tensor a stand-in is written into is *tainted* (`Taint`): the capture
  refuses a kernel argument that is tainted, since its values were never built by the library.
- `driver_module` / `CtypesDriver`: the CUDA driver's `cuTensorMapEncodeTiled` as the library's host code
  calls it through cuda-python (`cuda.bindings.driver`) or through `ctypes` on libcuda, recording the
  encode arguments like the TVM runtime recorder (`build.EncodeRecorder`).  The descriptor handed back is
  not the driver's (undocumented) format: it holds `DESCRIPTOR_MAGIC` and the encode's serial, so the
  capture can tie descriptor bytes the library passes as a buffer back to the encode.
- `aligned_copy`: CUDA allocations are 256-byte aligned; CPU ones only 64.  Host code checks TMA bases
  for 128-byte alignment, so fresh CPU tensors are re-homed to 256-byte aligned storage.
"""
from __future__ import annotations

import dis
import enum
import sys
import types

DESCRIPTOR_MAGIC = 0x2170616D745F636D   # b"mc_tmap!" little-endian: descriptor bytes made by a stand-in encode
CUDA_ALIGN = 256


class ReferenceUnavailable(RuntimeError):
    """A test needs a concrete value from a reference package this machine does not have."""


def _unpack_count(frame) -> int:
    """How many items the statement iterating a stand-in takes: `a, b = x` -> 2, `a, *r, b = x` -> 2
    (the starred part gets none), anything else (a loop, `list(x)`) -> 0."""
    if frame is None:
        return 0
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset == frame.f_lasti:
            if ins.opname == "UNPACK_SEQUENCE":
                return int(ins.arg or 0)
            if ins.opname == "UNPACK_EX":
                return int(ins.arg or 0) % 256 + int(ins.arg or 0) // 256
            return 0
    return 0


class StandIn:
    """A value a missing reference package would have produced (see the module docstring)."""

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<stand-in for {self._name}>"

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        from benchmarks.corpus import references   # a helper with a CPU implementation is no stand-in
        return references.lookup(f"{self._name}.{attr}") or StandIn(f"{self._name}.{attr}")

    def __setattr__(self, attr, value) -> None:
        pass

    def __call__(self, *args, **kwargs):
        return StandIn(f"{self._name}(...)")

    def __getitem__(self, key):
        return StandIn(f"{self._name}[...]")

    def __setitem__(self, key, value) -> None:
        pass

    def __iter__(self):
        n = _unpack_count(sys._getframe(1))
        return iter([StandIn(f"{self._name}[{i}]") for i in range(n)])

    def __bool__(self) -> bool:
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __mro_entries__(self, bases):
        return (object,)   # `class X(ref.Base)`: a plain class, its reference behaviour is absent

    def _number(self, *args):
        raise ReferenceUnavailable(f"{self._name} is needed as a concrete value; its package is not installed "
                                   "here (CUDA-only)")

    __int__ = __float__ = __index__ = _number

    def __len__(self) -> int:
        # a TypeError, so `list(x)` falls back to iterating (no items) while `len(x)` still fails clearly
        raise TypeError(f"{self._name} has no length: its package is not installed here (CUDA-only)")

    def _derived(self, *args):
        return StandIn(f"{self._name}(op)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _derived
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __abs__ = _derived
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __invert__ = __lt__ = __le__ = __gt__ = __ge__ = _derived
    __matmul__ = __rmatmul__ = _derived

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # only reached without the capture's mode (which handles stand-ins first): still never data
        return StandIn(getattr(func, "__name__", "torch op"))


# submodules with a dedicated stand-in (`from cuda.bindings import driver` must import it, not get a StandIn)
DRIVER_MODULES = ("cuda.bindings.driver", "cuda.cuda")


def stand_in_module(name: str, spec) -> types.ModuleType:
    """A module of a missing reference package: every attribute is a stand-in."""
    import importlib
    module = types.ModuleType(name)
    module.__path__ = []            # type: ignore[attr-defined]
    module.__spec__ = spec
    module.__file__ = f"<stand-in for {name}>"

    def attribute(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if f"{name}.{attr}" in DRIVER_MODULES:
            return importlib.import_module(f"{name}.{attr}")
        from benchmarks.corpus import references
        return references.lookup(f"{name}.{attr}") or StandIn(f"{name}.{attr}")

    module.__getattr__ = attribute   # type: ignore[method-assign]
    return module


class Taint:
    """Storages a stand-in was written into (keyed by data pointer: views share it)."""

    def __init__(self):
        self.storages: dict[int, str] = {}

    def of(self, tensor) -> str | None:
        try:
            return self.storages.get(tensor.untyped_storage().data_ptr())
        except Exception:   # noqa: BLE001 -- a tensor without storage (meta) carries no data
            return None

    def mark(self, tensor, why: str) -> None:
        try:
            self.storages.setdefault(tensor.untyped_storage().data_ptr(), why)
        except Exception:   # noqa: BLE001
            pass


def aligned_copy(t):
    """`t` re-homed to a CUDA_ALIGN-aligned storage of its own (same shape, strides, dtype, values)."""
    import numpy as np
    import torch
    nbytes = t.untyped_storage().nbytes()
    raw = np.empty(nbytes + CUDA_ALIGN, np.uint8)
    start = (-raw.ctypes.data) % CUDA_ALIGN
    base = torch.frombuffer(memoryview(raw[start:start + nbytes]), dtype=torch.uint8) if nbytes else \
        torch.empty(0, dtype=torch.uint8)
    storage = base.untyped_storage()
    out = torch.empty(0, dtype=t.dtype)
    out.set_(storage, t.storage_offset(), t.size(), t.stride())
    storage.copy_(t.untyped_storage())
    if t.requires_grad and t.is_leaf:
        out.requires_grad_(True)
    return out


# ----------------------------------------------------------------------------- the CUDA driver's encode

class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0


class CUtensorMapDataType(enum.IntEnum):   # cuda.h values
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0
    CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1
    CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2
    CU_TENSOR_MAP_DATA_TYPE_INT32 = 3
    CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4
    CU_TENSOR_MAP_DATA_TYPE_INT64 = 5
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15


# element type of each data-type code as the TVM recorder names it (the packed sub-byte types: raw bytes)
DTYPE_NAMES = ("uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64",
               "bfloat16", "float32", "float32", "float32", "uint8", "uint8", "uint8")


class CUtensorMapInterleave(enum.IntEnum):
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0
    CU_TENSOR_MAP_INTERLEAVE_16B = 1
    CU_TENSOR_MAP_INTERLEAVE_32B = 2


class CUtensorMapSwizzle(enum.IntEnum):
    CU_TENSOR_MAP_SWIZZLE_NONE = 0
    CU_TENSOR_MAP_SWIZZLE_32B = 1
    CU_TENSOR_MAP_SWIZZLE_64B = 2
    CU_TENSOR_MAP_SWIZZLE_128B = 3
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6


class CUtensorMapL2promotion(enum.IntEnum):
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3


class CUtensorMapFloatOOBfill(enum.IntEnum):
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1


class _CuInt(int):
    """cuda-python's `cuuint32_t` / `cuuint64_t`: an integer wrapper."""

    def getPtr(self):   # noqa: N802 -- cuda-python's name
        raise ReferenceUnavailable("cuuint*_t.getPtr(): no device memory on the capture machine")


class CUtensorMap:
    """What the stand-in encode returns: 16 64-bit words, the magic and the encode's serial."""

    def __init__(self, serial: int):
        self.opaque = [DESCRIPTOR_MAGIC, serial] + [0] * 14


def record_encode(calls: list, dtype, rank, address, dims, strides, box, elem, interleave, swizzle, l2, oob,
                  descriptor: int | None) -> int:
    """Append one encode record (the fields of `build.EncodeRecorder`); its serial."""
    code = int(dtype)
    serial = len(calls)
    calls.append({"dtype": DTYPE_NAMES[code] if 0 <= code < len(DTYPE_NAMES) else f"cu_dtype_{code}",
                  "cu_dtype": code, "rank": int(rank), "data": int(address or 0), "descriptor": descriptor,
                  "serial": serial, "dims": [int(x) for x in dims[:int(rank)]],
                  "strides": [int(x) for x in strides[:int(rank) - 1]], "box": [int(x) for x in box[:int(rank)]],
                  "element_strides": [int(x) for x in elem[:int(rank)]], "interleave": int(interleave),
                  "swizzle": int(swizzle), "l2_promotion": int(l2), "oob_fill": int(oob)})
    return serial


def _address(value) -> int:
    value = getattr(value, "value", value)
    if hasattr(value, "data_ptr"):
        return int(value.data_ptr())
    return int(value or 0)


def driver_module(name: str, spec, calls: list) -> types.ModuleType:
    """`cuda.bindings.driver` (cuda-python): enums, the device queries host code makes, and the encode."""
    module = stand_in_module(name, spec)
    module.__path__ = []   # type: ignore[attr-defined]
    for cls in (CUresult, CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                CUtensorMapFloatOOBfill, CUtensorMap):
        setattr(module, cls.__name__, cls)
    module.cuuint32_t = module.cuuint64_t = _CuInt   # type: ignore[attr-defined]

    def encode(dtype, rank, address, dims, strides, box, elem, interleave, swizzle, l2, oob):
        serial = record_encode(calls, dtype, rank, _address(address), dims, strides, box, elem, interleave,
                               swizzle, l2, oob, descriptor=None)
        return CUresult.CUDA_SUCCESS, CUtensorMap(serial)

    module.cuTensorMapEncodeTiled = encode   # type: ignore[attr-defined]
    module.cuInit = lambda flags=0: (CUresult.CUDA_SUCCESS,)   # type: ignore[attr-defined]
    module.cuDeviceGetCount = lambda: (CUresult.CUDA_SUCCESS, 1)   # type: ignore[attr-defined]
    module.cuDeviceGet = lambda index: (CUresult.CUDA_SUCCESS, int(index))   # type: ignore[attr-defined]
    module.cuDeviceGetUuid = lambda dev: (CUresult.CUDA_SUCCESS,   # type: ignore[attr-defined]
                                          types.SimpleNamespace(bytes=bytes(16)))
    return module


class _CtypesFunction:
    def __init__(self, fn):
        self.fn, self.argtypes, self.restype = fn, None, None

    def __call__(self, *args):
        return self.fn(*args)


class CtypesDriver:
    """`ctypes.CDLL("libcuda.so")` as host code binds it: `cuInit` and `cuTensorMapEncodeTiled`, which writes
    the stand-in descriptor words into the caller's 128-byte buffer."""

    def __init__(self, calls: list):
        import ctypes
        self.cuInit = _CtypesFunction(lambda flags: 0)

        def encode(desc, dtype, rank, address, dims, strides, box, elem, interleave, swizzle, l2, oob):
            ptr = _address(desc)
            serial = record_encode(calls, dtype, rank, _address(address), dims, strides, box, elem, interleave,
                                   swizzle, l2, oob, descriptor=ptr)
            words = (ctypes.c_uint64 * 16).from_address(ptr)
            words[:] = CUtensorMap(serial).opaque
            return 0

        self.cuTensorMapEncodeTiled = _CtypesFunction(encode)

    def __getattr__(self, name: str):
        raise ReferenceUnavailable(f"libcuda.{name}: no CUDA driver on the capture machine and no stand-in for it")


def descriptor_serials(raw) -> list[tuple[int, int]]:
    """(byte offset, encode serial) of every stand-in descriptor in a captured array's bytes."""
    import numpy as np
    data = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
    words = data[: data.size - data.size % 8].view(np.uint64)
    hits = np.nonzero(words == np.uint64(DESCRIPTOR_MAGIC))[0]
    return [(int(i) * 8, int(words[i + 1])) for i in hits if i + 1 < words.size]
