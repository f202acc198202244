"""`T.cuda.wait_until(dst, ptr, condition, scope, space, ptx_type, backoff_ns)` (apache-tvm 0.27,
tvm/backend/cuda/op.py and its codegen in cpp/asm.py): each thread loads the global word at `ptr` into `dst`
with `ld.relaxed.<scope>.global` until `condition` (which reads `dst`) holds, then performs one
`ld.acquire.<scope>.global` of the word into a discarded register; `dst` keeps the value the condition
accepted.  The backoff sleep changes nothing observable and is not simulated.

A lane whose condition holds stops polling; the warp goes on when every active lane's has.  A failed poll parks
the warp on a `MemoryWatch` of the words it polls, which the scheduler re-checks between rounds: it runs again
when one of them changed, and a run in which nothing can change them is a `deadlock` naming the wait (a spin no
write will ever end), not a poll-budget `incomplete`.  Each poll is a relaxed read at `scope` and the closing
load an acquire read, so Racecheck orders what the writer released before the value the wait accepted.
"""
from __future__ import annotations

import numpy as np

from .. import values as V
from ..runtime import MemoryWatch, Wait
from .access import decode
from .memory import PTX_NP, _check_aligned, _to_register, _typed_view

_TYPE_OF_DTYPE = {"int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64"}


def _text(e) -> str:
    return str(getattr(e, "value", "") or "")


def _wait_until(ctx, call, info):
    ops = call.operands
    dst = ctx.lvalue(ops[0], "cuda.wait_until")
    addr = ctx.expr(ops[1])
    cond = ctx.expr(ops[2])
    # TVM's defaults for the arguments the authoring form may leave out: scope "gpu", space "global", the
    # destination's type
    scope = _text(ops[3]) if len(ops) > 3 and _text(ops[3]) else "gpu"
    space = _text(ops[4]) if len(ops) > 4 and _text(ops[4]) else "global"
    ptx_type = (_text(ops[5]) if len(ops) > 5 else "") or _TYPE_OF_DTYPE.get(ops[0].dtype, "")
    if space != "global" or ptx_type not in PTX_NP or np.dtype(PTX_NP[ptx_type]).itemsize not in (4, 8):
        return ctx.unsupported(call, "cuda.wait_until", f"a wait on a {space} {ptx_type or '?'} word (TVM 0.27 "
                                                        "waits on 32- or 64-bit global words)"), False
    np_t = PTX_NP[ptx_type]
    size = np.dtype(np_t).itemsize
    site = ctx.site(call, "cuda.wait_until")
    span = call.span
    what = "cuda.wait_until"

    def load(w, lanes, order):
        """Load the word for `lanes` (a relaxed poll or the closing acquire); (allocation, offsets, raw)."""
        saved = w.mask
        w.mask = lanes
        try:
            alloc, offs = decode(w, addr(w), size, "global", span, what)
            if alloc is None:
                return None, None, None
            _check_aligned(offs, size, span, what, alloc)
            live = offs[lanes] if type(offs) is np.ndarray else offs
            if not alloc.all_written and alloc.unwritten(live, size):
                w.eng.note_uninitialized(site, w, alloc.name)
            w.eng.access(w, site, alloc, offs, size, "read", order=order, scope=scope)
            view = _typed_view(alloc, np_t)
            idx = offs // size
            raw = view[idx] if type(idx) is not np.ndarray else view.take(idx)
            return alloc, offs, raw
        finally:
            w.mask = saved

    def poll(w, lanes):
        """One relaxed poll of `lanes`: writes `dst` for them; the lanes whose condition now holds."""
        alloc, offs, raw = load(w, lanes, "relaxed")
        if alloc is None:
            return lanes, None, None
        saved = w.mask
        w.mask = lanes
        try:
            dst(w, _to_register(raw, ptx_type, dst.dtype))
            c = V.truthy(cond(w))
        finally:
            w.mask = saved
        ok = (c & lanes) if type(c) is np.ndarray else (lanes.copy() if c else np.zeros(32, bool))
        return ok, alloc, offs

    def run(w):
        todo = w.active().copy()
        if not todo.any():
            return
        while True:
            ok, alloc, offs = poll(w, todo)
            todo = todo & ~ok
            if not todo.any():
                break
            watch = MemoryWatch(alloc, offs, todo, size, lambda a=alloc, o=offs, t=todo: _describe_wait(
                ctx, call, a, o, t, np_t, size))
            yield Wait(watch, watch.changed, watch.describe, site)
        # the closing acquire: one more load of the word, into a discarded register
        load(w, w.active(), "acquire")
    return run, True


def _describe_wait(ctx, call, alloc, offs, lanes, np_t, size) -> str:
    lane = int(np.flatnonzero(lanes)[0])
    off = int(offs[lane]) if type(offs) is np.ndarray else int(offs)
    value = np.frombuffer(alloc.data[off:off + size].tobytes(), dtype=np_t)[0]
    src = ctx.source_lines[call.span.line - 1].strip() if call.span is not None and \
        1 <= call.span.line <= len(ctx.source_lines) else "cuda.wait_until"
    return (f"await cuda.wait_until on {alloc.name}[{off // size}] (lane {lane}: the word is {value}, the "
            f"condition is false): {src[:120]}")


HANDLERS = {"cuda.wait_until": _wait_until}
