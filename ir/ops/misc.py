"""Warp collectives and the remaining PTX: setmaxnreg, griddepcontrol, mapa, CLC."""
from __future__ import annotations

from .base import (OpInfo, _check_count, _info, _layout, _ops, _quals,
                   _type_dtype, _unsupported)


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
                         ("b", "value", "uint32"),
                         ("c", "value", "uint32"), mask)
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
        specs = _ops(("d", "dst", None), ("a", "value", addr), ("b", "value", "uint32"))
        _check_count("mapa", n, (3,), "d, a, b (the address in the CTA of rank b)")
        return _info(op, "mapa", "misc", specs, _quals(t[1:]), set())
    if t[0] == "clusterlaunchcontrol":
        return _clc(op, t, n)
    return None


def _clc(op: str, t: list[str], n: int) -> OpInfo | None:
    """Cluster launch control (PTX ISA 9.7.15.18-19): `try_cancel` writes a 16-byte response to shared memory and
    completes 16 tx bytes on an mbarrier; `query_cancel` decodes a b128 response register."""
    q = _quals(t[1:])
    action = t[1] if len(t) > 1 else ""
    if action == "try_cancel":
        specs = _ops(("addr", "addr"), ("mbar", "addr"))
        _check_count("clusterlaunchcontrol.try_cancel", n, (2,), _layout(specs))
        info = _info(op, "clusterlaunchcontrol.try_cancel", "async_copy", specs, q, {"async", "writes"})
        if "async" not in q or "mbarrier::complete_tx::bytes" not in q:
            return _unsupported(info, "clusterlaunchcontrol.try_cancel needs .async and "
                                      ".mbarrier::complete_tx::bytes")
        return info
    if action == "query_cancel":
        query = next((x for x in t[2:] if x.startswith(("is_canceled", "get_first_ctaid"))), "")
        if query == "is_canceled":
            specs = _ops(("p", "dst", None), ("response", "value", "uint128"))
        elif query in ("get_first_ctaid::x", "get_first_ctaid::y", "get_first_ctaid::z"):
            specs = _ops(("d", "dst", None), ("response", "value", "uint128"))
        else:
            return None
        q["query"] = query
        _check_count(f"clusterlaunchcontrol.query_cancel.{query}", n, (2,), _layout(specs))
        return _info(op, "clusterlaunchcontrol.query_cancel", "misc", specs, q, set())
    return None
