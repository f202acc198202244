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

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

FAMILIES = ("memory", "mbarrier", "named_barrier", "warp", "async_copy", "tcgen05", "fence",
            "misc", "math", "index")
SYNC_FAMILIES = ("mbarrier", "named_barrier", "warp", "async_copy", "tcgen05", "fence")


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


def _ops(*specs: str | tuple) -> tuple[OperandSpec, ...]:
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


# --------------------------------------------------------------------------- PTX families

def _mbarrier(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    action = t[1] if len(t) > 1 else ""
    q = _quals(t[2:])
    addr = OperandSpec("addr", "addr")
    if action == "init":
        specs = _ops(addr, ("count", "value", "uint32"))
        _check_count("mbarrier.init", n, (2,), _layout(specs))
        return _info(op, "mbarrier.init", "mbarrier", specs, q, {"sync"})
    if action == "inval":
        specs = _ops(addr)
        _check_count("mbarrier.inval", n, (1,), _layout(specs))
        return _info(op, "mbarrier.inval", "mbarrier", specs, q, {"sync"})
    if action in ("arrive", "arrive_drop"):
        base = f"mbarrier.{action}"
        if "expect_tx" in q:
            specs = _ops(addr, ("tx_count", "value", "uint32"))
            _check_count(base + ".expect_tx", n, (2,), _layout(specs))
            info = _info(op, base + ".expect_tx", "mbarrier", specs, q, {"sync"})
        elif "noComplete" in q:
            specs = _ops(addr, ("count", "value", "uint32"))
            _check_count(base + ".noComplete", n, (2,), _layout(specs))
            return _unsupported(_info(op, base + ".noComplete", "mbarrier", specs, q, {"sync"}),
                                "mbarrier.arrive.noComplete is not modeled")
        else:
            specs = _ops(addr, ("count", "value", "uint32"))
            _check_count(base, n, (1, 2), "addr[, count]")
            info = _info(op, base, "mbarrier", specs[:n], q, {"sync"})
        if any(k.startswith("multicast") for k in q):
            return _unsupported(info, "multicast mbarrier arrive needs clusters (v2)")
        return info
    if action in ("expect_tx", "complete_tx"):
        specs = _ops(addr, ("tx_count", "value", "uint32"))
        _check_count(f"mbarrier.{action}", n, (2,), _layout(specs))
        info = _info(op, f"mbarrier.{action}", "mbarrier", specs, q, {"sync"})
        if any(k.startswith("multicast") for k in q):
            return _unsupported(info, "multicast needs clusters (v2)")
        return info
    if action in ("test_wait", "try_wait"):
        name = f"mbarrier.{action}" + (".parity" if "parity" in q else "")
        if "parity" not in q:
            specs = _ops(("wait_complete", "dst", None), addr, ("state", "value", "uint64"))
            _check_count(name, n, (3, 4), "wait_complete, addr, state[, time_hint]")
            return _unsupported(_info(op, name, "mbarrier", specs[:n], q, {"sync"}),
                                "state-token mbarrier waits are not modeled; use the .parity form")
        specs = _ops(("wait_complete", "dst", None), addr, ("phase", "value", "uint32"),
                     ("time_hint", "value", "uint32"))
        _check_count(name, n, (3,) if action == "test_wait" else (3, 4), "wait_complete, addr, phase[, time_hint]")
        info = _info(op, name, "mbarrier", specs[:n], q, {"sync"})
        if "phase_type::primary" in q or "phase_type::conditional" in q:
            return _unsupported(info, "phase_type waits are not modeled")
        return info
    return None


def _bar(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    head = t[0]
    rest = [x for x in t[1:] if x != "cta"]
    if not rest:
        return None
    a = ("barrier_id", "value", "uint32")
    b = ("thread_count", "value", "uint32")
    if rest[0] == "warp" and len(rest) > 1 and rest[1] == "sync":
        specs = _ops(("membermask", "value", "uint32"))
        _check_count("bar.warp.sync", n, (1,), "membermask")
        return _info(op, "bar.warp.sync", "warp", specs, {}, {"sync", "collective"})
    if rest[0] == "cluster":
        return _unsupported(_info(op, f"{head}.cluster", "named_barrier", (), {}, {"sync"}),
                            "cluster barriers need clusters (v2)")
    q = {"aligned": "aligned"} if (head == "bar" or "aligned" in rest) else {}
    if rest[0] == "sync":
        specs = _ops(a, b)
        _check_count(f"{head}.sync", n, (1, 2), "barrier_id[, thread_count]")
        return _info(op, "bar.sync", "named_barrier", specs[:n], q, {"sync"})
    if rest[0] == "arrive":
        specs = _ops(a, b)
        _check_count(f"{head}.arrive", n, (2,), _layout(specs))
        return _info(op, "bar.arrive", "named_barrier", specs, q, {"sync"})
    if rest[0] == "red":
        mode = rest[1] if len(rest) > 1 else ""
        q["red"] = mode
        specs = _ops(("d", "dst", None), a, b, ("predicate", "pred", "uint32"))
        _check_count(f"{head}.red", n, (3, 4), "d, barrier_id[, thread_count], predicate")
        chosen = specs if n == 4 else (specs[0], specs[1], specs[3])
        return _info(op, "bar.red", "named_barrier", chosen, q, {"sync"})
    return None


def _fence(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    _check_count(op, n, (0,), "no operands")
    rest = t[1:]
    if not rest:
        return None
    if rest[0] == "mbarrier_init":
        return _info(op, "fence.mbarrier_init", "fence", (), {"sem": "release", "scope": "cluster"}, {"sync"})
    if rest[0] == "proxy":
        kind = rest[1] if len(rest) > 1 else ""
        q = _quals(rest[2:])
        if kind == "async":
            return _info(op, "fence.proxy.async", "fence", (), q, {"sync"})
        return _unsupported(_info(op, f"fence.proxy.{kind}", "fence", (), q, {"sync"}),
                            f"fence.proxy.{kind} is not modeled")
    if rest[0] in ("acq_rel", "sc"):
        q = _quals(rest[1:])
        q["sem"] = rest[0]
        return _info(op, f"fence.{rest[0]}", "fence", (), q, {"sync"})
    return None


_TYPE_DTYPES = {"b8": "uint8", "u8": "uint8", "s8": "int8", "b16": "uint16", "u16": "uint16", "s16": "int16",
                "b32": "uint32", "u32": "uint32", "s32": "int32", "b64": "uint64", "u64": "uint64", "s64": "int64",
                "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _type_dtype(q: Mapping[str, str]) -> str | None:
    """The dtype a literal value operand takes from the instruction's type (`.u32` -> uint32), as TVM does."""
    return _TYPE_DTYPES.get(q.get("type", ""))


def _vec_width(q: Mapping[str, str]) -> int:
    return _VEC.get(q.get("vec", ""), 1)


def _ld_st(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    q = _quals(t[1:])
    width = _vec_width(q)
    hint = 1 if _has_cache_hint(q) else 0
    if t[0] == "ld":
        specs = _ops(*[(f"d{i}", "dst", None) for i in range(width)], ("addr", "addr"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (width + 1 + hint,), _layout(specs))
        return _info(op, "ld", "memory", specs, q, {"reads"})
    specs = _ops(("addr", "addr"), *[(f"v{i}", "value", _type_dtype(q)) for i in range(width)])
    if hint:
        specs += _ops(("cache_policy", "value", "uint64"))
    _check_count(op, n, (width + 1 + hint,), _layout(specs))
    return _info(op, "st", "memory", specs, q, {"writes"})


_ATOM_OPS = {"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"}


def _atom_red(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    q = _quals(t[1:])
    ops = [x for x in t[1:] if x in _ATOM_OPS]
    if not ops:
        return None
    q["op"] = ops[0]
    hint = 1 if _has_cache_hint(q) else 0
    if t[0] == "atom":
        specs = _ops(("d", "dst", None), ("addr", "addr"), ("b", "value", _type_dtype(q)))
        if ops[0] == "cas":
            specs += _ops(("c", "value", _type_dtype(q)))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "atom", "memory", specs, q, {"reads", "writes"})
    else:
        specs = _ops(("addr", "addr"), ("b", "value", _type_dtype(q)))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "red", "memory", specs, q, {"reads", "writes"})
    if "vec" in q:
        return _unsupported(info, "vector atomics are not modeled")
    if q.get("space") == "shared::cluster":
        return _unsupported(info, "shared::cluster atomics need clusters (v2)")
    return info


def _cp(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if len(t) < 2 or t[1] != "async":
        return None
    rest = t[2:]
    if not rest:
        return None
    # classic cp.async
    if rest[0] in ("ca", "cg"):
        q = _quals(rest[1:])
        q["cache"] = rest[0]
        specs = _ops(("dst", "addr"), ("src", "addr"), ("cp_size", "imm", "int32"), ("src_size", "value", "uint32"))
        hint = 1 if _has_cache_hint(q) else 0
        allowed = (3 + hint, 4 + hint)
        _check_count(op, n, allowed, "dst, src, cp_size[, src_size]")
        chosen = specs[: n - hint] + (_ops(("cache_policy", "value", "uint64")) if hint else ())
        return _info(op, "cp.async", "async_copy", chosen, q, {"async", "reads", "writes"})
    if rest[0] == "commit_group":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.commit_group", "async_copy", (), {}, {"sync"})
    if rest[0] == "wait_group":
        _check_count(op, n, (1,), "n")
        return _info(op, "cp.async.wait_group", "async_copy", _ops(("n", "imm", "int32")), {}, {"sync"})
    if rest[0] == "wait_all":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.wait_all", "async_copy", (), {}, {"sync"})
    if rest[0] == "mbarrier":
        q = _quals(rest[1:])
        _check_count(op, n, (1,), "addr")
        return _info(op, "cp.async.mbarrier.arrive", "async_copy", _ops(("addr", "addr")), q, {"sync"})
    if rest[0] != "bulk":
        return None
    rest = rest[1:]
    if not rest:
        return None
    if rest[0] == "commit_group":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.bulk.commit_group", "async_copy", (), {}, {"sync"})
    if rest[0] == "wait_group":
        q = {"read": "read"} if "read" in rest else {}
        _check_count(op, n, (1,), "n")
        return _info(op, "cp.async.bulk.wait_group", "async_copy", _ops(("n", "imm", "int32")), q, {"sync"})
    if rest[0] == "tensor":
        dim_tok = rest[1] if len(rest) > 1 else ""
        if not (len(dim_tok) == 2 and dim_tok[0] in "12345" and dim_tok[1] == "d"):
            return None
        dims = int(dim_tok[0])
        q = _quals(rest[2:])
        q["dims"] = str(dims)
        hint = 1 if _has_cache_hint(q) else 0
        coords = [(f"c{i}", "value", "int32") for i in range(dims)]
        if q.get("dst") == "global":   # shared -> global (TMA store)
            specs = _ops(("tmap", "tmap"), *coords, ("src", "addr"))
            if hint:
                specs += _ops(("cache_policy", "value", "uint64"))
            _check_count(op, n, (len(specs),), _layout(specs))
            info = _info(op, "cp.async.bulk.tensor.s2g", "async_copy", specs, q, {"async", "reads", "writes"})
            bad = [k for k in q if k.startswith(("im2col", "tile::scatter4", "override"))]
        else:                          # global -> shared (TMA load)
            specs = _ops(("dst", "addr"), ("tmap", "tmap"), *coords, ("mbar", "addr"))
            if "multicast::cluster" in q or any(k.startswith("multicast") for k in q):
                specs += _ops(("cta_mask", "value", "uint16"))
            if hint:
                specs += _ops(("cache_policy", "value", "uint64"))
            _check_count(op, n, (len(specs),), _layout(specs))
            info = _info(op, "cp.async.bulk.tensor.g2s", "async_copy", specs, q, {"async", "reads", "writes"})
            bad = [k for k in q if k.startswith(("im2col", "tile::gather4", "multicast", "override",
                                                 "mbarrier::report"))]
            if q.get("dst") == "shared::cluster":
                bad.append("shared::cluster destination")
            if q.get("cta_group::2"):
                bad.append("cta_group::2")
        if bad:
            return _unsupported(info, f"TMA {', '.join(bad)} is not modeled (v1 models tile mode)")
        return info
    q = _quals(rest)
    hint = 1 if _has_cache_hint(q) else 0
    if q.get("dst") == "global":       # bulk shared -> global
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        if "cp_mask" in q:
            specs += _ops(("byte_mask", "value", "uint16"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.async.bulk.s2g", "async_copy", specs, q, {"async", "reads", "writes"})
        return _unsupported(info, "bulk copy byte masks are not modeled") if "cp_mask" in q else info
    if q.get("src") == "global":       # bulk global -> shared
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"))
        if "ignore_oob" in q:
            specs += _ops(("ignore_bytes_left", "value", "uint32"), ("ignore_bytes_right", "value", "uint32"))
        specs += _ops(("mbar", "addr"))
        if any(k.startswith("multicast") for k in q):
            specs += _ops(("cta_mask", "value", "uint16"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.async.bulk.g2s", "async_copy", specs, q, {"async", "reads", "writes"})
        if q.get("dst") == "shared::cluster" or any(k.startswith(("multicast", "mbarrier::report")) for k in q):
            return _unsupported(info, "cluster bulk copies need clusters (v2)")
        if "ignore_oob" in q:
            return _unsupported(info, "ignore_oob bulk copies are not modeled")
        return info
    if q.get("dst") == "shared::cluster" and q.get("src") in ("shared::cta", "shared"):
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"), ("mbar", "addr"))
        _check_count(op, n, (len(specs),), _layout(specs))
        return _unsupported(_info(op, "cp.async.bulk.s2c", "async_copy", specs, q, {"async"}),
                            "shared::cta -> shared::cluster copies need clusters (v2)")
    return None


_TC_LD_SHAPES = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
_TC_CP_SHAPES = {"128x256b", "4x256b", "128x128b", "64x128b", "32x128b"}


def _tcgen05(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if len(t) < 2:
        return None
    action = t[1]
    q = _quals(t[2:])
    two_cta = "cta_group::2" in q
    fam = "tcgen05"

    def maybe_v2(info: OpInfo) -> OpInfo:
        return _unsupported(info, "cta_group::2 needs clusters (v2)") if two_cta else info

    if action == "alloc":
        specs = _ops(("dst", "addr"), ("ncols", "value", "uint32"))
        _check_count("tcgen05.alloc", n, (2,), _layout(specs))
        info = _info(op, "tcgen05.alloc", fam, specs, q, {"sync", "collective", "writes"})
        return maybe_v2(_unsupported(info, "exclusive TMEM allocation is not modeled") if "exclusive" in q else info)
    if action == "dealloc":
        specs = _ops(("taddr", "value", "uint32"), ("ncols", "value", "uint32"))
        _check_count("tcgen05.dealloc", n, (2,), _layout(specs))
        return maybe_v2(_info(op, "tcgen05.dealloc", fam, specs, q, {"sync", "collective"}))
    if action == "relinquish_alloc_permit":
        _check_count("tcgen05.relinquish_alloc_permit", n, (0,), "no operands")
        return maybe_v2(_info(op, "tcgen05.relinquish_alloc_permit", fam, (), q, {"sync", "collective"}))
    if action in ("ld", "st"):
        shape = next((x for x in t[2:] if x in _TC_LD_SHAPES), None)
        num = next((x for x in t[2:] if x.startswith("x") and x[1:].isdigit()), None)
        if shape is None or num is None:
            return None
        q["shape"], q["num"] = shape, num
        regs = _TC_LD_SHAPES[shape] * int(num[1:])
        split = shape == "16x32bx2"
        if action == "ld":
            specs = _ops(*[(f"r{i}", "dst", None) for i in range(regs)], ("taddr", "value", "uint32"))
            if split:
                specs += _ops(("half_splitoff", "imm", "int32"))
        else:
            specs = _ops(("taddr", "value", "uint32"))
            if split:
                specs += _ops(("half_splitoff", "imm", "int32"))
            specs += _ops(*[(f"r{i}", "value", None) for i in range(regs)])
        _check_count(f"tcgen05.{action}.{shape}.{num}", n, (len(specs),),
                     f"{regs} register(s) and taddr" if action == "ld" else f"taddr and {regs} register(s)")
        effects = {"sync", "collective", "async", "reads" if action == "ld" else "writes"}
        info = _info(op, f"tcgen05.{action}", fam, specs, q, effects)
        if "red" in q or "spcompress" in q:
            return _unsupported(info, "tcgen05.ld.red / spcompress are not modeled")
        return info
    if action in ("wait::ld", "wait::st"):
        _check_count(f"tcgen05.{action}", n, (0,), "no operands")
        return _info(op, f"tcgen05.{action}", fam, (), q, {"sync", "collective"})
    if action in ("fence::before_thread_sync", "fence::after_thread_sync"):
        _check_count(f"tcgen05.{action}", n, (0,), "no operands")
        return _info(op, f"tcgen05.{action}", fam, (), q, {"sync"})
    if action == "cp":
        shape = next((x for x in t[2:] if x in _TC_CP_SHAPES), None)
        if shape is None:
            return None
        q["shape"] = shape
        specs = _ops(("taddr", "value", "uint32"), ("s_desc", "value", "uint64"))
        _check_count("tcgen05.cp", n, (2,), _layout(specs))
        info = _info(op, "tcgen05.cp", fam, specs, q, {"async", "reads", "writes"})
        if any(k.startswith(("b8x16", "b6x16", "b4x16")) for k in q):
            return _unsupported(info, "tcgen05.cp decompression is not modeled")
        return maybe_v2(info)
    if action == "shift":
        specs = _ops(("taddr", "value", "uint32"))
        _check_count("tcgen05.shift", n, (1,), "taddr")
        return maybe_v2(_info(op, "tcgen05.shift", fam, specs, q, {"async", "reads", "writes"}))
    if action == "commit":
        specs = _ops(("mbar", "addr"))
        multicast = any(k.startswith("multicast") for k in q)
        if multicast:
            specs += _ops(("cta_mask", "value", "uint16"))
        _check_count("tcgen05.commit", n, (len(specs),), _layout(specs))
        info = _info(op, "tcgen05.commit", fam, specs, q, {"sync"})
        if multicast:
            return _unsupported(info, "multicast tcgen05.commit needs clusters (v2)")
        if any(k.startswith("sync_restrict") for k in q):
            return _unsupported(info, "sync_restrict commits are not modeled")
        return maybe_v2(info)
    if action == "mma":
        kind = next((x for x in t[2:] if x.startswith("kind::")), None)
        if kind is None:
            return None
        q["kind"] = kind
        masks = 8 if two_cta else 4
        is_ts = len(dtypes) > 1 and dtypes[1] in ("uint32", "int32")
        q["form"] = "ts" if is_ts else "ss"
        a = ("a_tmem", "value", "uint32") if is_ts else ("a_desc", "value", "uint64")
        full = _ops(("d_tmem", "value", "uint32"), a, ("b_desc", "value", "uint64"), ("idesc", "value", "uint32"),
                    *[(f"disable_output_lane{i}", "value", "uint32") for i in range(masks)],
                    ("enable_input_d", "pred", "uint32"))
        short = full[:4] + full[-1:]
        _check_count("tcgen05.mma", n, (len(short), len(full)),
                     "d_tmem, a, b_desc, idesc[, 4 disable-output-lane masks], enable_input_d")
        specs = full if n == len(full) else short
        info = _info(op, "tcgen05.mma", fam, specs, q, {"async", "reads", "writes"})
        if kind not in ("kind::f16", "kind::tf32"):
            return _unsupported(info, f"tcgen05.mma {kind} is not modeled (v1: kind::f16, kind::tf32)")
        if any(k in q for k in ("ws", "sp", "block_scale", "ashift")) or any(k.startswith("decompress") for k in q):
            return _unsupported(info, "tcgen05.mma .ws/.sp/.block_scale/.ashift are not modeled")
        return maybe_v2(info)
    return None


def _warp_ptx(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    head = t[0]
    q = _quals(t[1:])
    mask = ("membermask", "value", "uint32")
    if head == "elect_sync":
        specs = _ops(("d", "dst", None), ("p", "dst", None), mask)
        _check_count("elect.sync", n, (3,), _layout(specs))
        return _info(op, "elect.sync", "warp", specs, q, {"sync", "collective"})
    if head == "shfl_sync":
        mode = next((x for x in t[1:] if x in ("up", "down", "bfly", "idx")), None)
        if mode is None:
            return None
        q["mode"] = mode
        if n == 6:
            specs = _ops(("d", "dst", None), ("p", "dst", None), ("a", "value", _type_dtype(q)),
                         ("b", "value", "uint32"), ("c", "value", "uint32"), mask)
        else:
            specs = _ops(("d", "dst", None), ("a", "value", _type_dtype(q)), ("b", "value", "uint32"),
                         ("c", "value", "uint32"), mask)
        _check_count("shfl.sync", n, (5, 6), "d[, p], a, b, c, membermask")
        return _info(op, "shfl.sync", "warp", specs, q, {"sync", "collective"})
    if head == "vote_sync":
        mode = next((x for x in t[1:] if x in ("all", "any", "uni", "ballot")), None)
        if mode is None:
            return None
        q["mode"] = mode
        specs = _ops(("d", "dst", None), ("a", "pred", "uint32"), mask)
        _check_count("vote.sync", n, (3,), _layout(specs))
        return _info(op, "vote.sync", "warp", specs, q, {"sync", "collective"})
    if head == "activemask":
        specs = _ops(("d", "dst", None))
        _check_count("activemask", n, (1,), "d")
        return _info(op, "activemask", "warp", specs, q, set())
    return None


def _misc_ptx(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if t[0] == "setmaxnreg":
        specs = _ops(("count", "imm", "int32"))
        _check_count("setmaxnreg", n, (1,), "count")
        q = {"dir": t[1]} if len(t) > 1 and t[1] in ("inc", "dec") else {}
        return _info(op, "setmaxnreg", "misc", specs, q, {"collective"})
    if t[0] == "griddepcontrol":
        _check_count(op, n, (0,), "no operands")
        return _info(op, f"griddepcontrol.{t[1] if len(t) > 1 else ''}", "misc", (), {}, set())
    if t[0] == "mapa":
        addr = "uint64" if "u64" in t else "uint32"
        specs = _ops(("d", "dst", None), ("a", "value", addr), ("b", "value", "uint32"))[:n]
        return _unsupported(_info(op, "mapa", "misc", specs, {}, set()), "mapa needs clusters (v2)")
    if t[0] == "clusterlaunchcontrol":
        return _unsupported(_info(op, "clusterlaunchcontrol", "misc", (), {}, {"async"}),
                            "cluster launch control is not modeled (v2)")
    if t[0] == "wgmma":
        return _unsupported(_info(op, "wgmma", "misc", (), {}, {"async"}), "wgmma is not modeled (v2)")
    return None


_PTX_FAMILIES: dict[str, Callable[..., OpInfo | None]] = {
    "mbarrier": _mbarrier, "bar": _bar, "barrier": _bar, "fence": _fence, "ld": _ld_st, "st": _ld_st,
    "atom": _atom_red, "red": _atom_red, "cp": _cp, "tcgen05": _tcgen05,
    "elect_sync": _warp_ptx, "shfl_sync": _warp_ptx, "vote_sync": _warp_ptx, "activemask": _warp_ptx,
    "setmaxnreg": _misc_ptx, "griddepcontrol": _misc_ptx, "mapa": _misc_ptx,
    "clusterlaunchcontrol": _misc_ptx, "wgmma": _misc_ptx,
}

# PTX spells these with a dot; the TIRx table names them with an underscore.
_HEAD_ALIASES = {("shfl", "sync"): "shfl_sync", ("vote", "sync"): "vote_sync", ("elect", "sync"): "elect_sync"}


def normalize_mnemonic(op: str) -> str:
    """Canonical spelling of a PTX mnemonic (`elect.sync` -> `elect_sync`, as the TIRx table names it)."""
    tokens = op.split(".")
    if len(tokens) >= 2 and (tokens[0], tokens[1]) in _HEAD_ALIASES:
        tokens = [_HEAD_ALIASES[(tokens[0], tokens[1])]] + tokens[2:]
    return ".".join(tokens)


# --------------------------------------------------------------------------- cuda.* and tir.* intrinsics

@dataclass(frozen=True, slots=True)
class _Intrinsic:
    name: str
    family: str
    arity: tuple[int, ...]
    operands: tuple[OperandSpec, ...] = ()
    effects: frozenset[str] = frozenset()
    result: str | None = None
    supported: bool = True
    why: str = ""


def _intr(name, family, arity, operands=(), effects=(), result=None, supported=True, why=""):
    return _Intrinsic(name, family, tuple(arity), _ops(*operands), frozenset(effects), result, supported, why)


_ADDR = ("addr", "addr")
_INTRINSICS: dict[str, _Intrinsic] = {i.name: i for i in [
    _intr("cuda.mbarrier_wait", "mbarrier", (2,), (_ADDR, ("parity", "value")), {"sync"}),
    _intr("cuda.mbarrier_wait_acquire_cluster", "mbarrier", (2,), (_ADDR, ("parity", "value")), {"sync"},
          supported=False, why="cluster-scope mbarrier waits need clusters (v2)"),
    _intr("cuda.cta_sync", "named_barrier", (0,), (), {"sync"}),
    _intr("cuda.warpgroup_sync", "named_barrier", (1,), (("barrier_id", "value"),), {"sync"}),
    _intr("cuda.warp_sync", "warp", (0, 1), (("membermask", "value"),), {"sync", "collective"}),
    _intr("cuda.cluster_sync", "named_barrier", (0,), (), {"sync"}, supported=False,
          why="cluster_sync needs clusters (v2)"),
    _intr("cuda.grid_sync", "named_barrier", (0,), (), {"sync"}, supported=False, why="grid sync is not modeled"),
    _intr("tir.tvm_storage_sync", "named_barrier", (1, 3),
          (("scope", "imm"), ("barrier_id", "value"), ("thread_count", "value")), {"sync"}),
    _intr("cuda.thread_fence", "fence", (0,), (), {"sync"}),
    _intr("cuda.elect_sync", "warp", (0, 1), (("membermask", "value"),), {"sync", "collective"}, result="uint32"),
    _intr("cuda.__shfl_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"), ("src_lane", "value"),
                                               ("width", "value")), {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_xor_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"),
                                                   ("lane_mask", "value"), ("width", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_up_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"), ("delta", "value"),
                                                  ("width", "value")), {"sync", "collective"}, result="arg1"),
    _intr("cuda.__shfl_down_sync", "warp", (3, 4), (("membermask", "value"), ("value", "value"),
                                                    ("delta", "value"), ("width", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("tir.gpu_warp_shuffle", "warp", (5,), (("membermask", "value"), ("value", "value"), ("src_lane", "value"),
                                                 ("width", "value"), ("warp_size", "value")),
          {"sync", "collective"}, result="arg1"),
    _intr("cuda.warp_reduce", "warp", (3,), (("value", "value"), ("op", "imm"), ("width", "value")),
          {"sync", "collective"}, result="arg0"),
    _intr("cuda.ballot_sync", "warp", (2,), (("membermask", "value"), ("predicate", "value")),
          {"sync", "collective"}, result="uint32"),
    _intr("cuda.any_sync", "warp", (2,), (("membermask", "value"), ("predicate", "value")),
          {"sync", "collective"}, result="int32"),   # TVM types it int32 (ballot_sync is uint32)
    _intr("cuda.atomic_add", "memory", (2,), (_ADDR, ("value", "value")), {"reads", "writes"}, result="arg1"),
    _intr("cuda.atomic_cas", "memory", (3,), (_ADDR, ("compare", "value"), ("value", "value")),
          {"reads", "writes"}, result="arg2"),
    _intr("cuda.nano_sleep", "misc", (1,), (("ns", "value"),)),
    _intr("cuda.clock64", "misc", (0,), (), result="uint64"),   # TVM types it uint64
    _intr("cuda.printf", "misc", tuple(range(0, 33)), ()),
    _intr("cuda.lane_id", "index", (0,), (), result="int32"),
    _intr("cuda.warp_id", "index", (0,), (), result="int32"),
    _intr("cuda.thread_rank", "index", (0,), (), result="int32"),
    _intr("cuda.warpgroup_id", "index", (0,), (), result="int32"),
    _intr("cuda.warp_in_warpgroup", "index", (0,), (), result="int32"),
    _intr("cuda.thread_in_warpgroup", "index", (0,), (), result="int32"),
    _intr("cuda.cvta_generic_to_shared", "index", (1,), (("addr", "value"),), result="uint32"),
    _intr("tir.reinterpret", "math", (2,), (("dtype", "imm"), ("value", "value")), result="arg0"),
    *[_intr(f"tir.{m}", "math", (1,), (("x", "value"),), result="arg0")
      for m in ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
                "tanh", "sigmoid", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "erf", "atan", "asin",
                "acos", "sinh", "cosh")],
    *[_intr(f"tir.{m}", "math", (1,), (("x", "value"),), result="bool") for m in ("isnan", "isinf", "isfinite")],
    *[_intr(f"tir.{m}", "math", (2,), (("x", "value"), ("y", "value")), result="arg0")
      for m in ("pow", "fmod", "atan2", "copysign", "hypot")],
]}

# `T.cuda.warp_sum(x)` prints as `T.cuda.warp_reduce(x, "sum", 32)`; the builder rewrites these.
WARP_REDUCE_ALIASES = {"cuda.warp_sum": "sum", "cuda.warp_max": "max", "cuda.warp_min": "min"}


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
    handler = _PTX_FAMILIES.get(tokens[0])
    if handler is None:
        return None
    return handler(op, tokens, n, tuple(arg_dtypes))


def known_intrinsics() -> tuple[str, ...]:
    return tuple(sorted(_INTRINSICS))


def is_sync_family(family: str) -> bool:
    return family in SYNC_FAMILIES
