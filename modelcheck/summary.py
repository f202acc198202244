"""A static summary of a kernel's IR: parameters, buffers by space, thread space, sync ops by family."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import ir
from ir import dtypes as dt
from ir.canonical import fold


def _value(e: ir.Expr, constants: dict[str, int]) -> int | None:
    """Evaluate a constant expression (module constants substituted), or None if it depends on inputs."""
    if isinstance(e, ir.Const):
        return int(e.value)
    if isinstance(e, ir.ConstRef):
        return constants.get(e.name)
    if isinstance(e, ir.BinOp):
        a, b = _value(e.a, constants), _value(e.b, constants)
        if a is None or b is None:
            return None
        folded = fold(ir.BinOp(e.op, ir.Const(a, e.a.dtype), ir.Const(b, e.b.dtype), e.dtype))
        return int(folded.value) if isinstance(folded, ir.Const) else None
    if isinstance(e, ir.Cast):
        return _value(e.value, constants)
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

    def format(self) -> str:
        f = self.func
        consts = ", ".join(f"{c.name}={c.value}" for c in f.constants) or "none"
        lines = [f"kernel {f.name} ({f.path})", f"constants: {consts}", "params:"]
        for p in f.params:
            if p.kind == "buffer":
                shape = "x".join(_text(s, f.constant_values) for s in p.buffer.shape)
                lines.append(f"  {p.name}: {p.dtype}[{shape}] (global)")
            else:
                lines.append(f"  {p.name}: {p.dtype} ({p.kind})")
        if not f.params:
            lines.append("  none")
        threads = _prod(self.block)
        warps = f"{threads // 32} warp(s)" + ("" if threads % 32 == 0 else f" + {threads % 32} thread(s)") \
            if threads is not None else "?"
        lines.append(f"launch: grid {_dims(self.grid)}, block {_dims(self.block)} = "
                     f"{threads if threads is not None else '?'} thread(s), {warps}, cluster {_dims(self.cluster)}")
        lines.append("buffers:")
        for scope in ("global", "shared", "shared.dyn", "local"):
            entries = self.buffers.get(scope)
            if not entries:
                continue
            total = sum(b for *_, b in entries if b is not None)
            parts = [f"{n} {d}[{s}]" for n, d, s, _ in entries]
            lines.append(f"  {scope} ({total} B): " + ", ".join(parts))
        lines.append("sync and memory ops by family (static sites):")
        if not self.ops:
            lines.append("  none")
        for family in ir.ops.FAMILIES:
            counter = self.ops.get(family)
            if counter:
                detail = ", ".join(f"{name} {n}" for name, n in sorted(counter.items()))
                lines.append(f"  {family}: {sum(counter.values())} ({detail})")
        if self.unsupported:
            lines.append("unsupported ops (execution reports incomplete):")
            for name, span in self.unsupported:
                lines.append(f"  {name} at {span}")
        return "\n".join(lines)


def _text(e, constants) -> str:
    v = _value(e, constants)
    return str(v) if v is not None else "?"


def _dims(dims) -> str:
    return "x".join(str(d) if d is not None else "?" for d in dims)


def _prod(dims):
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
        dims = [_value(s, consts) for s in buf.shape]
        nbytes = None if any(d is None for d in dims) or buf.data is not None else _prod(dims) * dt.nbytes(buf.dtype)
        shape = "x".join(str(d) if d is not None else "?" for d in dims)
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
    return Summary(func, tuple(_value(e, consts) for e in launch.grid), tuple(_value(e, consts) for e in launch.block),
                   tuple(_value(e, consts) for e in launch.cluster), dict(buffers), dict(ops), unsupported)
