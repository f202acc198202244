"""Static summaries rendered: the text `modelcheck parse` prints for a `summary.Summary`."""
from __future__ import annotations

import ir

from ..summary import Summary, prod, static_value


def format_summary(summary: Summary) -> str:
    """The text `modelcheck parse` prints after the canonical IR."""
    f = summary.func
    consts = ", ".join(f"{c.name}={c.value}" for c in f.constants) or "none"
    lines = [f"kernel {f.name} ({f.path})", f"constants: {consts}", "params:"]
    for p in f.params:
        if p.kind == "buffer":
            assert p.buffer is not None         # a buffer parameter always has its buffer
            shape = "x".join(_text(s, f.constant_values) for s in p.buffer.shape)
            lines.append(f"  {p.name}: {p.dtype}[{shape}] (global)")
        else:
            lines.append(f"  {p.name}: {p.dtype} ({p.kind})")
    if not f.params:
        lines.append("  none")
    threads = prod(summary.block)
    warps = f"{threads // 32} warp(s)" + ("" if threads % 32 == 0 else f" + {threads % 32} thread(s)") \
        if threads is not None else "?"
    lines.append(f"launch: grid {_dims(summary.grid)}, block {_dims(summary.block)} = "
                 f"{threads if threads is not None else '?'} thread(s), {warps}, cluster {_dims(summary.cluster)}")
    lines.append("buffers:")
    for scope in ("global", "shared", "shared.dyn", "local"):
        entries = summary.buffers.get(scope)
        if not entries:
            continue
        total = sum(b for *_, b in entries if b is not None)
        parts = [f"{n} {d}[{s}]" for n, d, s, _ in entries]
        lines.append(f"  {scope} ({total} B): " + ", ".join(parts))
    lines.append("sync and memory ops by family (static sites):")
    if not summary.ops:
        lines.append("  none")
    for family in ir.ops.FAMILIES:
        counter = summary.ops.get(family)
        if counter:
            detail = ", ".join(f"{name} {n}" for name, n in sorted(counter.items()))
            lines.append(f"  {family}: {sum(counter.values())} ({detail})")
    if summary.unsupported:
        lines.append("unsupported ops (execution reports incomplete):")
        for name, span in summary.unsupported:
            lines.append(f"  {name} at {span}")
    return "\n".join(lines)


def _text(e, constants) -> str:
    v = static_value(e, constants)
    return str(v) if v is not None else "?"


def _dims(dims) -> str:
    return "x".join(str(d) if d is not None else "?" for d in dims)


__all__ = ["format_summary"]
