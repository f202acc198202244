"""Scalar dtypes of TIRx and TIR's typing rules.

The rules mirror what apache-tvm-tirx does when it builds expressions, because its
printer makes every implicit conversion explicit (`T.Cast(...)`); to parse printed
text to the same IR as the source, we insert the same casts.
"""
from __future__ import annotations

INT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16",
               "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e8m0fnu")
# sub-byte floats (packed two or more to a byte): recognized, so kernels that name them parse; NumSim reports
# their use as not modeled
SUBBYTE_TYPES = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn")
# wider than any NumPy scalar: a 16-byte value (a cluster-launch-control response); NumSim reports its use
WIDE_TYPES = ("uint128", "int128")
SCALAR_TYPES = INT_TYPES + UINT_TYPES + FLOAT_TYPES + ("bool",) + SUBBYTE_TYPES + WIDE_TYPES
HANDLE = "handle"
VOID = "void"

_BITS = {
    "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "float16": 16, "float32": 32, "float64": 64, "bfloat16": 16,
    "float8_e4m3fn": 8, "float8_e5m2": 8, "float8_e4m3": 8, "float8_e8m0fnu": 8,
    "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "uint128": 128, "int128": 128,
    "bool": 1, HANDLE: 64, VOID: 0,
}

# vector dtypes (TVM's DataType with lanes > 1): `uint32x4` is one thread's four uint32 in 16 bytes, as a
# kernel views memory for 16-byte accesses; NumSim holds such a value as its bytes (loads, stores,
# reinterpret) and reports arithmetic on it as not modeled
VECTOR_LANES = (2, 4, 8)
VECTOR_TYPES = tuple(f"{t}x{n}" for t in INT_TYPES + UINT_TYPES + FLOAT_TYPES for n in VECTOR_LANES)
_BITS.update({v: _BITS[v.rpartition("x")[0]] * int(v.rpartition("x")[2]) for v in VECTOR_TYPES})

# Spellings accepted for dtypes (T.int32, "int32", T.f32 ...), mapped to the canonical name.
ALIASES = {
    "float": "float32", "int": "int32", "half": "float16", "bf16": "bfloat16",
    "f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16", "i32": "int32",
    "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "float8_e4m3fn": "float8_e4m3fn",
    "void": VOID, "handle": HANDLE,
}


def canonical(name: str) -> str | None:
    """Canonical dtype for a spelling, or None if it is not a dtype."""
    if name in _BITS:
        return name
    return ALIASES.get(name)


def bits(dtype: str) -> int:
    return _BITS[dtype]


def nbytes(dtype: str) -> int:
    """Storage size in bytes (bool is one byte)."""
    if dtype == "bool":
        return 1
    return _BITS[dtype] // 8


def is_int(dtype: str) -> bool:
    return dtype in INT_TYPES


def is_uint(dtype: str) -> bool:
    return dtype in UINT_TYPES


def is_integral(dtype: str) -> bool:
    """Signed or unsigned integer, or bool (TIR treats bool as a 1-bit uint)."""
    return dtype in INT_TYPES or dtype in UINT_TYPES or dtype == "bool"


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_TYPES


def int_range(dtype: str) -> tuple[int, int]:
    b = _BITS[dtype]
    if dtype == "bool":
        return 0, 1
    if is_uint(dtype):
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


def literal_int_dtype(value: int) -> str:
    """dtype TIR gives a bare Python int: int32 when it fits, else int64."""
    lo, hi = int_range("int32")
    return "int32" if lo <= value <= hi else "int64"


def wrap(value: int, dtype: str) -> int:
    """Fixed-width wraparound of an integer to `dtype`."""
    if dtype == "bool":
        return 1 if value else 0
    b = _BITS[dtype]
    value &= (1 << b) - 1
    if is_int(dtype) and value >= 1 << (b - 1):
        value -= 1 << b
    return value


def fits(value: int, dtype: str) -> bool:
    lo, hi = int_range(dtype)
    return lo <= value <= hi


def promote(a: str, b: str) -> str:
    """Common type of a binary arithmetic op (TVM's BinaryOpMatchTypes)."""
    if a == b:
        return a
    if is_float(a) and not is_float(b):
        return a
    if is_float(b) and not is_float(a):
        return b
    if is_float(a) and is_float(b):
        if bits(a) == bits(b) and "bfloat16" in (a, b):
            return b if a == "bfloat16" else a   # TVM: bfloat16 meets float16 as float16
        return a if bits(a) >= bits(b) else b
    if a == "bool":
        return b
    if b == "bool":
        return a
    if bits(a) < bits(b):
        return b
    if bits(a) > bits(b):
        return a
    # same width, one signed and one unsigned: unsigned wins
    return a if is_uint(a) else b


def vector_parts(dtype: str) -> tuple[str, int] | None:
    """(element dtype, lanes) of a vector dtype, None for any other."""
    if dtype not in VECTOR_TYPES:
        return None
    elem, _, lanes = dtype.rpartition("x")
    return elem, int(lanes)
