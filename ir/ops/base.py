"""Shared pieces of the op registry: operand and op records, qualifier sorting, count checks."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

FAMILIES = ("memory", "mbarrier", "named_barrier", "cluster_barrier", "warp", "async_copy", "tcgen05", "wgmma",
            "fence", "misc", "math", "index")
SYNC_FAMILIES = ("mbarrier", "named_barrier", "cluster_barrier", "warp", "async_copy", "tcgen05", "wgmma", "fence")


@dataclass(frozen=True, slots=True)
class OperandSpec:
    """One operand: `role` is addr (a memory address), tmap (tensor-map handle), dst (a
    written register, must be an lvalue), value, pred (a value read as a PTX `.pred`: a bool,
    or 0/1), or imm; `dtype` is what a literal becomes."""

    name: str
    role: str = "value"
    dtype: str | None = None


@dataclass(frozen=True, slots=True)
class OpInfo:
    op: str                                  # canonical name as written
    name: str                                # spec name, e.g. "mbarrier.arrive"
    family: str
    operands: tuple[OperandSpec, ...]
    quals: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    effects: frozenset[str] = frozenset()    # sync, collective, reads, writes, async, result
    supported: bool = True
    why_unsupported: str = ""
    result: str | None = None                # result dtype of value-returning intrinsics ("arg0": first value)


class OperandCountError(ValueError):
    def __init__(self, name: str, expected: str, got: int, layout: str):
        self.name, self.expected, self.got, self.layout = name, expected, got, layout
        super().__init__(f"{name} takes {expected} operand(s) ({layout}), got {got}")


def _ops(*specs: "str | tuple | OperandSpec") -> tuple[OperandSpec, ...]:
    out = []
    for s in specs:
        if isinstance(s, OperandSpec):
            out.append(s)
        elif isinstance(s, tuple):
            out.append(OperandSpec(*s))
        else:
            out.append(OperandSpec(s))
    return tuple(out)


def _check_count(name: str, n: int, allowed: tuple[int, ...], layout: str) -> None:
    if n not in allowed:
        expected = " or ".join(str(a) for a in sorted(set(allowed)))
        raise OperandCountError(name, expected, n, layout)


def _layout(specs: tuple[OperandSpec, ...]) -> str:
    return ", ".join(s.name for s in specs)


# --------------------------------------------------------------------------- qualifier vocabularies

_SEM = {"weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "sc", "mmio"}
_SCOPE = {"cta", "cluster", "gpu", "sys"}
_SPACE = {"shared", "shared::cta", "shared::cluster", "global", "local", "param"}
_TYPES = {"b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
          "f16", "f32", "f64", "bf16", "f16x2", "bf16x2", "pred", "e4m3x2", "e5m2x2"}
_VEC = {"v2": 2, "v4": 4, "v8": 8}


def _quals(tokens: list[str]) -> dict[str, str]:
    """Sort qualifier tokens into sem/scope/space/type/vec/...; the rest become flags."""
    q: dict[str, str] = {}
    spaces: list[str] = []
    for t in tokens:
        if t in _SEM:
            q["sem"] = t
        elif t in _SCOPE and "scope" not in q:
            q["scope"] = t
        elif t in _SPACE:
            spaces.append(t)
        elif t in _TYPES:
            q["type"] = t
        elif t in _VEC:
            q["vec"] = t
        else:
            q[t] = t
    if spaces:
        q["space"] = spaces[0]
        if len(spaces) > 1:
            q["dst"], q["src"] = spaces[0], spaces[1]
    return q


def _has_cache_hint(q: Mapping[str, str]) -> bool:
    return "L2::cache_hint" in q


def _info(op, name, family, operands, quals, effects=(), supported=True, why="", result=None) -> OpInfo:
    return OpInfo(op, name, family, operands, MappingProxyType(dict(quals)), frozenset(effects),
                  supported, why, result)


def _unsupported(info: OpInfo, why: str) -> OpInfo:
    return OpInfo(info.op, info.name, info.family, info.operands, info.quals, info.effects, False, why, info.result)



_TYPE_DTYPES = {"b8": "uint8", "u8": "uint8", "s8": "int8", "b16": "uint16", "u16": "uint16", "s16": "int16",
                "b32": "uint32", "u32": "uint32", "s32": "int32", "b64": "uint64", "u64": "uint64", "s64": "int64",
                "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _type_dtype(q: Mapping[str, str]) -> str | None:
    """The dtype a literal value operand takes from the instruction's type (`.u32` -> uint32), as TVM does."""
    return _TYPE_DTYPES.get(q.get("type", ""))


def _vec_width(q: Mapping[str, str]) -> int:
    return _VEC.get(q.get("vec", ""), 1)


