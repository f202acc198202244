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


def build(kernel, inputs=None, *, accesses: bool = True, max_polls: int = 1_000_000,
          max_loop_iterations: int = 1_000_000) -> HappensBefore:
    """Run `kernel` (ir.PrimFunc, Kernel, or object with .script()) once and build its happens-before graph.

    `accesses=False` skips recording memory accesses (no release/acquire-through-memory edges and no
    access anchoring; enough for deadlock explanations and pictures of sync-only kernels)."""
    func = ir.as_func(kernel)
    inputs, missing = resolve_inputs(func, inputs)
    if missing:
        raise numsim.InputError(f"no value for parameter(s) {', '.join(missing)} of {func.name}; give scalars "
                                f"and buffers without static shapes as inputs", tuple(missing))
    recorder = Recorder(accesses)
    engine = numsim.Engine(func, max_polls=max_polls, max_loop_iterations=max_loop_iterations,
                           unsupported="incomplete")
    result = engine.run(inputs, observers=(recorder,))
    return from_trace(recorder, recorder.run, result)
