"""mbarrier, named-barrier and fence instructions."""
from __future__ import annotations

from .base import (OpInfo, OperandSpec, _check_count, _info, _layout, _ops, _quals,
                   _unsupported)


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
        # PTX: `mbarrier.arrive... state, [addr]{, count}`; the state (the phase the arrival landed in, an
        # opaque 64-bit token) is a register or the sink `_`.  TVM 0.27 prints the sink as no operand, and a
        # register as a first operand: 3 operands are always state, addr, count/tx_count.
        state = OperandSpec("state", "dst", None)
        if "expect_tx" in q:
            specs = _ops(addr, ("tx_count", "value", "uint32"))
            _check_count(base + ".expect_tx", n, (2, 3), "[state, ]addr, tx_count")
            info = _info(op, base + ".expect_tx", "mbarrier", (state,) + specs if n == 3 else specs, q, {"sync"})
        elif "noComplete" in q:
            specs = _ops(addr, ("count", "value", "uint32"))
            _check_count(base + ".noComplete", n, (2, 3), "[state, ]addr, count")
            return _unsupported(_info(op, base + ".noComplete", "mbarrier", (state,) + specs if n == 3 else specs,
                                      q, {"sync"}), "mbarrier.arrive.noComplete is not modeled")
        else:
            specs = _ops(addr, ("count", "value", "uint32"))
            _check_count(base, n, (1, 2, 3), "[state, ]addr[, count]")
            info = _info(op, base, "mbarrier", (state,) + specs if n == 3 else specs[:n], q, {"sync"})
        if any(k.startswith("multicast") for k in q):
            return _unsupported(info, "multicast mbarrier arrive is not modeled")
        return info
    if action in ("expect_tx", "complete_tx"):
        specs = _ops(addr, ("tx_count", "value", "uint32"))
        _check_count(f"mbarrier.{action}", n, (2,), _layout(specs))
        info = _info(op, f"mbarrier.{action}", "mbarrier", specs, q, {"sync"})
        if any(k.startswith("multicast") for k in q):
            return _unsupported(info, "multicast expect_tx/complete_tx is not modeled")
        return info
    if action in ("test_wait", "try_wait"):
        name = f"mbarrier.{action}" + (".parity" if "parity" in q else "")
        # without .parity: the phase named by the 64-bit state token an arrive on the same barrier returned
        third = ("phase", "value", "uint32") if "parity" in q else ("state", "value", "uint64")
        specs = _ops(("wait_complete", "dst", None), addr, third, ("time_hint", "value", "uint32"))
        _check_count(name, n, (3,) if action == "test_wait" else (3, 4),
                     f"wait_complete, addr, {third[0]}[, time_hint]")
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
        # barrier.cluster.arrive[.release|.relaxed][.aligned] / barrier.cluster.wait[.acquire][.aligned]
        # (PTX ISA 9.7.13.3): no operands; arrive defaults to release, wait to acquire
        action = rest[1] if len(rest) > 1 else ""
        if action not in ("arrive", "wait"):
            return None
        _check_count(f"barrier.cluster.{action}", n, (0,), "no operands")
        q = _quals(rest[2:])
        q.setdefault("sem", "release" if action == "arrive" else "acquire")
        return _info(op, f"barrier.cluster.{action}", "cluster_barrier", (), q, {"sync"})
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
    rest = t[1:]
    if len(rest) > 1 and rest[0] == "proxy" and rest[1].startswith("tensormap::"):
        return _fence_tensormap(op, rest, n)
    _check_count(op, n, (0,), "no operands")
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




def _fence_tensormap(op: str, rest: list[str], n: int) -> OpInfo:
    """fence.proxy.tensormap::generic.release.scope (no operands) and .acquire.scope [addr], 128 (PTX ISA
    9.7.13.4; TVM 0.27 prints the size, a literal 128, or leaves it out).  They order generic-proxy writes of a
    tensor map in memory (tensormap.replace) against the tensormap proxy's reads (modelcheck/numsim/ops/tmap.py)."""
    q = _quals(rest[2:])
    q["proxykind"] = rest[1]
    if q.get("sem") == "acquire":
        specs = _ops(("addr", "addr"), ("size", "imm", "int32"))
        _check_count(op, n, (1, 2), "addr[, size]")
        return _info(op, "fence.proxy.tensormap", "fence", specs[:n], q, {"sync"})
    _check_count(op, n, (0,), "no operands (the acquire form takes addr[, size])")
    return _info(op, "fence.proxy.tensormap", "fence", (), q, {"sync"})
