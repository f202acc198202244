"""The op registry: which operations modelcheck models, and what each does.

`classify(op, arg_dtypes)` takes a canonical op name (a PTX mnemonic such as
`mbarrier.arrive.release.cta.shared::cta.b64`, or `cuda.<name>` / `tir.<name>`)
and returns an `OpInfo` (family, qualifiers, operand layout, effects), or None
for an op outside the modeled set (the builder turns that into `Unsupported`).
A known op called with the wrong number of operands raises `OperandCountError`.
Ops that are known but out of scope for v1 (clusters, multicast, cta_group::2,
exotic forms) come back with `supported=False` so the simulator reports them as
incomplete rather than guessing.

Operand facts (counts, register groups, the dtype an integer literal is given)
follow the PTX ISA as encoded by apache-tvm-tirx's instruction table.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable

from . import arith
from .base import (FAMILIES, SYNC_FAMILIES, OperandCountError, OperandSpec, OpInfo, _check_count, _layout)
from .intrinsics import _INTRINSICS, KEYWORD_INTRINSICS, WARP_REDUCE_ALIASES
from .memory import _atom_red, _cache_range, _cp, _ld_st
from .misc import _misc_ptx, _warp_ptx
from .sync import _bar, _fence, _mbarrier
from .tcgen05 import _tcgen05
from .wgmma import wgmma as _wgmma

__all__ = ["FAMILIES", "SYNC_FAMILIES", "OperandCountError", "OperandSpec", "OpInfo", "WARP_REDUCE_ALIASES",
           "KEYWORD_INTRINSICS", "classify", "known_intrinsics", "is_sync_family", "normalize_mnemonic"]


_PTX_FAMILIES: dict[str, Callable[..., OpInfo | None]] = {
    "mbarrier": _mbarrier, "bar": _bar, "barrier": _bar, "fence": _fence, "ld": _ld_st, "st": _ld_st,
    "atom": _atom_red, "red": _atom_red, "cp": _cp, "tcgen05": _tcgen05,
    "elect_sync": _warp_ptx, "shfl_sync": _warp_ptx, "vote_sync": _warp_ptx, "activemask": _warp_ptx,
    "setmaxnreg": _misc_ptx, "griddepcontrol": _misc_ptx, "mapa": _misc_ptx,
    "clusterlaunchcontrol": _misc_ptx, "wgmma": _wgmma, "discard": _cache_range, "applypriority": _cache_range,
}

# PTX spells these with a dot; the TIRx table names them with an underscore.
_HEAD_ALIASES = {("shfl", "sync"): "shfl_sync", ("vote", "sync"): "vote_sync", ("elect", "sync"): "elect_sync"}


def normalize_mnemonic(op: str) -> str:
    """Canonical spelling of a PTX mnemonic (`elect.sync` -> `elect_sync`, as the TIRx table names it)."""
    tokens = op.split(".")
    if len(tokens) >= 2 and (tokens[0], tokens[1]) in _HEAD_ALIASES:
        tokens = [_HEAD_ALIASES[(tokens[0], tokens[1])]] + tokens[2:]
    return ".".join(tokens)




def classify(op: str, arg_dtypes: tuple[str, ...] | list[str] = ()) -> OpInfo | None:
    """Classify a canonical op with its operand dtypes; None if outside the modeled set."""
    n = len(arg_dtypes)
    intr = _INTRINSICS.get(op)
    if intr is not None:
        layout = _layout(intr.operands) if intr.operands else "no operands"
        if intr.name != "cuda.printf":
            _check_count(op, n, intr.arity, layout)
        operands = intr.operands[:n] if len(intr.operands) >= n else intr.operands
        info = OpInfo(op, op, intr.family, operands, MappingProxyType({}), intr.effects, intr.supported,
                      intr.why, intr.result)
        return info
    if op.startswith(("cuda.", "tir.")):
        return None
    tokens = normalize_mnemonic(op).split(".")
    if tokens[:2] == ["cp", "reduce"]:
        return arith.cluster_memory(op, tokens, n, tuple(arg_dtypes))
    handler = _PTX_FAMILIES.get(tokens[0]) or arith.HANDLERS.get(tokens[0])
    if handler is None:
        return None
    return handler(op, tokens, n, tuple(arg_dtypes))


def known_intrinsics() -> tuple[str, ...]:
    return tuple(sorted(_INTRINSICS))


def is_sync_family(family: str) -> bool:
    return family in SYNC_FAMILIES
