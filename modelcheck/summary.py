"""A static summary of a kernel's IR: parameters, buffers by space, thread space, sync ops by family.
Data only: `modelcheck.report.summary` renders it (`modelcheck parse`)."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import ir
from ir import dtypes as dt
from ir.canonical import fold


def static_value(e: ir.Expr, constants: dict[str, int]) -> int | None:
    """Evaluate a constant expression (module constants substituted), or None if it depends on inputs."""
    if isinstance(e, ir.Const):
        return int(e.value)
    if isinstance(e, ir.ConstRef):
        return constants.get(e.name)
    if isinstance(e, ir.BinOp):
        a, b = static_value(e.a, constants), static_value(e.b, constants)
        if a is None or b is None:
            return None
        folded = fold(ir.BinOp(e.op, ir.Const(a, e.a.dtype), ir.Const(b, e.b.dtype), e.dtype))
        return int(folded.value) if isinstance(folded, ir.Const) else None
    if isinstance(e, ir.Cast):
        return static_value(e.value, constants)
    return None


@dataclass(frozen=True)
class Summary:
    func: ir.PrimFunc
    grid: tuple
    block: tuple
    cluster: tuple
    buffers: dict          # scope -> list of (name, dtype, shape, bytes or None)
    ops: dict              # family -> Counter(op name -> static sites)
    unsupported: list      # (name, span)


def prod(dims):
    out = 1
    for d in dims:
        if d is None:
            return None
        out *= d
    return out


def summarize(func: ir.PrimFunc) -> Summary:
    consts = func.constant_values
    launch = func.launch
    buffers: dict[str, list] = defaultdict(list)
    all_buffers = func.buffers()
    for name, buf in all_buffers.items():
        sizes = [static_value(s, consts) for s in buf.shape]
        nbytes = None if any(d is None for d in sizes) or buf.data is not None else prod(sizes) * dt.nbytes(buf.dtype)
        shape = "x".join(str(d) if d is not None else "?" for d in sizes)
        buffers[buf.scope].append((name, buf.dtype, shape + (f" @ {buf.data}" if buf.data else ""), nbytes))
    ops: dict[str, Counter] = defaultdict(Counter)
    unsupported = []
    for node in ir.walk(func.body):
        if isinstance(node, ir.OpCall):
            info = ir.classify(node.op, tuple(o.dtype for o in node.operands))
            if info is None:
                continue
            ops[info.family][info.name] += 1
            if not info.supported:
                unsupported.append((f"{node.op} ({info.why_unsupported})", node.span))
        elif isinstance(node, ir.Unsupported):
            unsupported.append((node.name, node.span))
        elif isinstance(node, (ir.Load, ir.Store)) and node.buffer in all_buffers:
            if all_buffers[node.buffer].scope != "local":
                ops["memory"]["element " + ("load" if isinstance(node, ir.Load) else "store")] += 1
    def dims(exprs) -> tuple:
        return tuple(static_value(e, consts) for e in exprs)
    return Summary(func, dims(launch.grid), dims(launch.block), dims(launch.cluster), dict(buffers), dict(ops),
                   unsupported)
