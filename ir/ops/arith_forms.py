"""Which PTX register-arithmetic forms NumSim models, and their operand layouts.

`parse(op, dtypes)` reads a PTX arithmetic mnemonic (`fma.rz.ftz.f32x2`, `cvt.rn.satfinite.e4m3x2.f32`,
`mov.b64` with three operands, ...) into a `MathForm`, or returns the reason the form is not modeled.
The registry (`arith.py`) turns a form into operand specs; NumSim's `ops/ptx_math.py` executes it.
Both read the same `MathForm`, so what is classified as supported is exactly what is simulated.
Qualifier meanings follow the PTX ISA (9.7.3 integer and 9.7.4 floating-point arithmetic, 9.7.7
comparison and selection, 9.7.9 logic and shifts, 9.7.10.3-4 mov, 9.7.10.24 cvt).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import base
from .. import dtypes as dt

# type token -> (register bits, element dtype, elements per register)
TYPES: dict[str, tuple[int, str, int]] = {
    "f32": (32, "float32", 1), "f64": (64, "float64", 1), "f16": (16, "float16", 1), "bf16": (16, "bfloat16", 1),
    "f32x2": (64, "float32", 2), "f16x2": (32, "float16", 2), "bf16x2": (32, "bfloat16", 2),
    "tf32": (32, "float32", 1),
    "e4m3x2": (16, "float8_e4m3fn", 2), "e5m2x2": (16, "float8_e5m2", 2), "e2m1x2": (8, "float4_e2m1fn", 2),
    "ue8m0x2": (16, "float8_e8m0fnu", 2),
    "b8": (8, "uint8", 1), "u8": (8, "uint8", 1), "s8": (8, "int8", 1),
    "b16": (16, "uint16", 1), "u16": (16, "uint16", 1), "s16": (16, "int16", 1),
    "b32": (32, "uint32", 1), "u32": (32, "uint32", 1), "s32": (32, "int32", 1),
    "b64": (64, "uint64", 1), "u64": (64, "uint64", 1), "s64": (64, "int64", 1),
    "pred": (32, "bool", 1),
}
FLOATS = ("f32", "f64", "f16", "bf16", "f32x2", "f16x2", "bf16x2")
INTS = ("u16", "u32", "u64", "s16", "s32", "s64")
BITS = ("b16", "b32", "b64")
ROUNDINGS = ("rn", "rz", "rm", "rp", "rna")
INT_ROUNDINGS = ("rni", "rzi", "rmi", "rpi")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
           "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_FLAGS = ("ftz", "sat", "satfinite", "relu", "approx", "full", "NaN", "hi", "lo", "wide")
UNARY_MATH = ("ex2", "lg2", "rcp", "rsqrt", "sqrt", "tanh", "sin", "cos")
HEADS = ("mov", "add", "sub", "mul", "fma", "div", "min", "max", "and", "or", "xor", "not", "shl", "shr",
         "neg", "abs", "setp", "selp", "cvt", "popc", "clz", "fns", "prmt") + UNARY_MATH


@dataclass(frozen=True, slots=True)
class MathForm:
    """One modeled instruction: `types` as written (cvt: destination then source; mixed precision
    `add.f32.bf16`: result then the narrow source), the rounding mode (`rn` when PTX implies it), flags
    (`ftz`, `sat`, ...), the comparison of setp, and for a 3-operand mov whether it packs or unpacks."""

    head: str
    types: tuple[str, ...]
    rounding: str = ""
    flags: frozenset[str] = frozenset()
    compare: str = ""
    operands: int = 0
    unpack: bool = False

    def has(self, flag: str) -> bool:
        return flag in self.flags


def parse(op: str, dtypes: tuple[str, ...]) -> MathForm | str:
    """The form of `op` with operand dtypes `dtypes`, or why it is not modeled."""
    return _parse(op, tuple(dtypes))


@lru_cache(maxsize=4096)
def _parse(op: str, dtypes: tuple[str, ...]) -> MathForm | str:
    tokens = op.split(".")
    head, rest = tokens[0], tokens[1:]
    if head not in HEADS:
        return f"the PTX arithmetic instruction {head} is not simulated"
    if head == "mov" and rest == ["b128"]:
        return _mov_b128(op, dtypes)
    if "b128" in rest:
        return f"{op}: 128-bit registers are not simulated"
    types = tuple(t for t in rest if t in TYPES)
    rnd = [t for t in rest if t in ROUNDINGS or t in INT_ROUNDINGS]
    cmp = [t for t in rest if head == "setp" and t in COMPARE]
    flags = frozenset(t for t in rest if t in _FLAGS and not (head == "setp" and t in cmp))
    unknown = [t for t in rest if t not in TYPES and t not in rnd and t not in cmp and t not in flags]
    if unknown:
        return f"{op}: the qualifier .{unknown[0]} is not modeled"
    odd = [d for d in dtypes if d in dt.WIDE_TYPES + dt.SUBBYTE_TYPES + (dt.HANDLE, dt.VOID, "string")]
    if odd:
        return f"{op}: an operand of type {odd[0]} is not simulated"
    form = MathForm(head, types, rnd[0] if rnd else "", flags, cmp[0] if cmp else "", len(dtypes))
    why = _check(form, op, dtypes)
    if why:
        return why
    if head != "mov" or len(dtypes) == 2:
        bad = _width_mismatch(form, dtypes)
        if bad:
            return f"{op}: {bad}"
    if head == "mov" and len(dtypes) == 3:
        full = TYPES[types[0]][0]
        if dt.bits(dtypes[0]) == full:
            return form
        if dt.bits(dtypes[2]) == full:
            return MathForm(head, types, form.rounding, flags, "", 3, True)
        return f"{op}: no operand is the {full}-bit register, so packing and unpacking cannot be told apart"
    return form


def _mov_b128(op: str, dtypes: tuple[str, ...]) -> MathForm | str:
    """`mov.b128 d, a` (a copy), `mov.b128 d, {lo, hi}` (pack two b64) and `mov.b128 {lo, hi}, a` (unpack): PTX
    ISA 9.7.9.10, the first element the low half, as for b32/b64."""
    wide = [d in dt.WIDE_TYPES for d in dtypes]
    if len(dtypes) == 2 and all(wide):
        return MathForm("mov", ("b128",), operands=2)
    if len(dtypes) == 3:
        if wide == [True, False, False] and all(dt.bits(d) == 64 for d in dtypes[1:]):
            return MathForm("mov", ("b128",), operands=3)
        if wide == [False, False, True] and all(dt.bits(d) == 64 for d in dtypes[:2]):
            return MathForm("mov", ("b128",), operands=3, unpack=True)
    return f"{op}: only a copy of a b128 register and its pack/unpack from two 64-bit registers are modeled"


def _check(f: MathForm, op: str, dtypes: tuple[str, ...]) -> str:
    """'' when the form is modeled, else the reason."""
    head, types, n = f.head, f.types, len(dtypes)
    if not types:
        return f"{op}: no operand type"
    t = types[0]
    directed = f.rounding in ("rz", "rm", "rp")
    if head == "mov":
        if t == "b128":
            return f"{op}: 128-bit registers are not simulated"
        if n == 3 and t not in ("b32", "b64"):
            return f"{op}: only b32 (two b16) and b64 (two b32) pack/unpack are modeled"
        return "" if len(types) == 1 and n in (2, 3) else f"{op}: this mov form is not modeled"
    if head in ("add", "sub", "mul", "fma"):
        want = 4 if head == "fma" else 3
        if n != want:
            return f"{op}: {n} operands"
        if len(types) == 2:                       # mixed precision: op.f32.{f16,bf16}
            if types[0] != "f32" or types[1] not in ("f16", "bf16") or head == "mul":
                return f"{op}: this mixed-precision form is not modeled"
            return ""
        if t in INTS:
            if head == "fma":
                return f"{op}: integer fma does not exist"
            if head == "mul" and f.has("hi") and t in ("u64", "s64"):
                return f"{op}: the high half of a 64-bit product is not simulated"
            if f.has("sat") and t != "s32":
                return f"{op}: .sat is only defined for s32"
            return ""
        if t not in FLOATS:
            return f"{op}: type .{t} is not modeled for {head}"
        if t == "f64" and (head == "fma" or directed):
            return f"{op}: f64 fma and directed f64 rounding are not simulated"
        if t in ("f16", "bf16", "f16x2", "bf16x2") and directed:
            return f"{op}: directed rounding of half-precision arithmetic is not simulated"
        return ""
    if head == "div":
        if t not in ("f32", "f64") or n != 3:
            return f"{op}: only floating-point division is modeled"
        return f"{op}: directed rounding of division is not simulated" if directed else ""
    if head in ("min", "max"):
        if n not in (3, 4) or (n == 4 and t not in ("f32", "f16", "bf16")):
            return f"{op}: {n} operands"
        return "" if t in FLOATS + INTS else f"{op}: type .{t} is not modeled for {head}"
    if head in ("and", "or", "xor", "not"):
        return "" if t in BITS + ("pred",) and n == (2 if head == "not" else 3) else f"{op}: not modeled"
    if head in ("shl", "shr"):
        return "" if t in BITS + INTS and n == 3 else f"{op}: not modeled"
    if head in ("popc", "clz"):       # PTX ISA 9.7.3.x: d (.u32) = set bits / leading zeros of a .b32 or .b64
        return "" if t in ("b32", "b64") and n == 2 else f"{op}: not modeled"
    if head == "fns":                 # d = the position of the offset-th set bit of mask from base
        return "" if t == "b32" and n == 4 else f"{op}: not modeled"
    if head == "prmt":                # PTX ISA 9.7.8.7: the generic byte permute (a mode qualifier is refused above)
        return "" if t == "b32" and n == 4 else f"{op}: not modeled"
    if head in ("neg", "abs"):
        return "" if t in FLOATS + ("s16", "s32", "s64") and n == 2 else f"{op}: not modeled"
    if head in UNARY_MATH:
        if t not in ("f32", "f64") or n != 2:
            return f"{op}: only the f32 and f64 forms are modeled"
        return f"{op}: directed rounding is not simulated" if directed else ""
    if head == "setp":
        if n != 3:
            return f"{op}: setp with a combining predicate is not modeled"
        return "" if f.compare and t in FLOATS[:4] + INTS + BITS else f"{op}: not modeled"
    if head == "selp":
        return "" if n == 4 and t in INTS + BITS + ("f32", "f64") else f"{op}: not modeled"
    return _check_cvt(f, op, n)


_NARROW = ("e4m3x2", "e5m2x2", "e2m1x2", "ue8m0x2")


def _check_cvt(f: MathForm, op: str, n: int) -> str:
    if len(f.types) != 2:
        return f"{op}: cvt needs a destination and a source type"
    d, a = f.types
    scalar_float = ("f32", "f64", "f16", "bf16")
    if n == 3:
        if a != "f32" or d not in ("f16x2", "bf16x2") + _NARROW:
            return f"{op}: this packed cvt is not modeled"
        if d == "ue8m0x2":
            return "" if f.rounding in ("rz", "rp") else f"{op}: ue8m0 takes .rz or .rp"
        return "" if f.rounding == "rn" else f"{op}: only .rn is modeled"
    if n != 2:
        return f"{op}: {n} operands"
    if d in ("f16x2", "bf16x2") and a in _NARROW:
        if (d, a) == ("bf16x2", "ue8m0x2") or (d == "f16x2" and a != "ue8m0x2"):
            return ""
        return f"{op}: this packed cvt is not modeled"
    if d == "tf32":
        return "" if a == "f32" and f.rounding == "rna" else f"{op}: only cvt.rna.tf32.f32 is modeled"
    if d in scalar_float and a in scalar_float:
        if f.rounding in INT_ROUNDINGS and d != a:
            return f"{op}: integer rounding between float types"
        exact = d == a or (TYPES[d][0] > TYPES[a][0] and not (d == "f16" and a == "bf16"))
        # PTX ISA 9.7.10.24: float rounding is required where precision is lost, illegal elsewhere
        if exact and d != a and f.rounding:
            return f"{op}: a rounding modifier on an exact widening is not valid PTX"
        if not exact and f.rounding not in ROUNDINGS:
            return f"{op}: a narrowing conversion needs a rounding modifier"
        if f.rounding in ("rz", "rm", "rp", "rna") and d != "f32" and not exact:
            return f"{op}: directed rounding to half precision is not simulated"
        return ""
    if d in scalar_float and a in INTS + ("u8", "s8"):
        if TYPES[a][0] == 64 and d != "f64":
            return f"{op}: 64-bit integers to narrower floats are not simulated"
        return "" if f.rounding == "rn" else f"{op}: only .rn is modeled for integer to float"
    if d in INTS + ("u8", "s8") and a in scalar_float:
        return "" if f.rounding in INT_ROUNDINGS else f"{op}: float to integer needs .rni/.rzi/.rmi/.rpi"
    if d in INTS + ("u8", "s8") and a in INTS + ("u8", "s8"):
        return ""
    return f"{op}: this cvt is not modeled"


def _width_mismatch(form: MathForm, dtypes: tuple[str, ...]) -> str:
    """'' when every operand's register fits its role: the register width of a packed or narrow type
    exactly; an integer of another width for integer and bit types (converted, as TVM casts); a float of
    another width for a scalar float (converted by value)."""
    for spec, d in zip(operand_specs(form), dtypes):
        want = spec.dtype
        if want is None or d == want or dt.bits(d) == dt.bits(want) or spec.role == "pred":
            continue
        if dt.is_float(d) and dt.is_float(want):
            continue
        if not dt.is_float(d) and not dt.is_float(want) and want in ("uint8", "int8", "uint16", "int16", "uint32",
                                                                      "int32", "uint64", "int64") \
                and not any(TYPES[t][2] > 1 for t in form.types):
            continue
        return f"operand {spec.name} is a {d} register, not the {dt.bits(want)}-bit register the instruction reads"
    return ""


def operand_specs(form: MathForm) -> tuple[base.OperandSpec, ...]:
    """The operand roles, with the dtype a literal operand takes (a float literal in a `.bN` operand
    keeps its bits; see `build_expr.coerce`)."""
    head, t = form.head, form.types[0]
    if head == "mov" and t == "b128":
        if form.operands == 2:
            return base._ops(("d", "dst", None), ("a", "value", None))
        if form.unpack:
            return base._ops(("d0", "dst", None), ("d1", "dst", None), ("a", "value", None))
        return base._ops(("d", "dst", None), ("a0", "value", "uint64"), ("a1", "value", "uint64"))
    if head == "mov" and form.operands == 3:
        half = "uint16" if t == "b32" else "uint32"
        full = TYPES[t][1]
        if form.unpack:
            return base._ops(("d0", "dst", None), ("d1", "dst", None), ("a", "value", full))
        return base._ops(("d", "dst", None), ("a0", "value", half), ("a1", "value", half))
    carrier = _carrier(t)
    if head == "fns":
        return base._ops(("d", "dst", None), ("mask", "value", "uint32"), ("base", "value", "uint32"),
                         ("offset", "value", "int32"))
    if head == "cvt":
        src = _carrier(form.types[1])
        return base._ops(("d", "dst", None), *[(f"a{i}", "value", src) for i in range(form.operands - 1)])
    if head == "setp":
        return base._ops(("p", "dst", None), ("a", "value", carrier), ("b", "value", carrier))
    if head == "selp":
        return base._ops(("d", "dst", None), ("a", "value", carrier), ("b", "value", carrier), ("c", "pred", None))
    if head in ("shl", "shr"):
        return base._ops(("d", "dst", None), ("a", "value", carrier), ("b", "value", "uint32"))
    if len(form.types) == 2:     # mixed precision: the f32 operands and the narrow ones
        narrow = _carrier(form.types[1])
        srcs = [narrow, "float32"] if head in ("add", "sub") else [narrow, narrow, "float32"]
        return base._ops(("d", "dst", None), *[(f"a{i}", "value", s) for i, s in enumerate(srcs)])
    return base._ops(("d", "dst", None), *[(f"a{i}", "value", carrier) for i in range(form.operands - 1)])


def _carrier(t: str) -> str:
    """The register dtype of a type token: the element dtype for scalars, an unsigned integer of the
    register's width for packed and narrow formats."""
    bits, elem, lanes = TYPES[t]
    if t == "pred":
        return "uint32"
    if lanes > 1 or t in ("f16", "bf16", "tf32"):
        return {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}[bits]
    return elem
