"""`build(kernel, inputs)`: one NumSim run with a recording observer, then the graph.

Inputs follow the checkers' convention (None: zero-filled static-shape buffers); a
missing binding raises `numsim.InputError` naming the parameters.  An unsupported
operation or an exhausted budget still gives the graph of the events up to that point
(`hb.result.termination` says how the run stopped).
"""
from __future__ import annotations

import ir

from .. import numsim
from ..common.results import resolve_inputs
from .graph import HappensBefore, Recorder, from_trace


def build(kernel, inputs=None, *, accesses: bool = True, **limits) -> HappensBefore:
    """Run `kernel` (ir.PrimFunc, Kernel, or object with .script()) once and build its happens-before graph.

    `accesses=False` skips recording memory accesses (no release/acquire-through-memory edges and no
    access anchoring; enough for deadlock explanations and pictures of sync-only kernels).  `limits`:
    numsim.Engine's budgets and target."""
    func = ir.as_func(kernel)
    inputs, missing = resolve_inputs(func, inputs, limits.get("max_memory_mb", numsim.budget.DEFAULT_MAX_MEMORY_MB))
    if missing:
        raise numsim.InputError(f"no value for parameter(s) {', '.join(missing)} of {func.name}; give scalars "
                                f"and buffers without static shapes as inputs", tuple(missing))
    recorder = Recorder(accesses)
    engine = numsim.Engine(func, unsupported="incomplete", **limits)
    result = engine.run(inputs, observers=(recorder,))
    if recorder.run is None:
        raise RunNotStarted(result)
    return from_trace(recorder, recorder.run, result)


class RunNotStarted(Exception):
    """The launch never started (outside the hardware limits, an invalid buffer shape, ...): no graph.
    `result` is the NumSim result whose diagnostics say why."""

    def __init__(self, result):
        self.result = result
        super().__init__("; ".join(d.message for d in result.diagnostics) or result.termination)
