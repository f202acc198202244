"""Chained launches: a function's buffers that an earlier launch of the module writes, taken from NumSim's run
of that launch on its own captured inputs.

The capture launches nothing, so a buffer the library's test hands to two kernels (a `prologue` that fills a
descriptor workspace with patched tensor maps, then `main` that loads through them) holds in `main`'s capture
only what the test left there.  Here the earlier launch (the function the capture names as the buffer's first
holder) is run by NumSim on its captured inputs (same generation, else the other), and when it completes, the
buffers it wrote -- tensor maps held as data included (numsim/tmap_values.py) -- replace the captured ones.
"""
from __future__ import annotations

from pathlib import Path

_SUFFIXES = ("_ptr", "_handle")
MAX_DEPTH = 3


def _base(name: str) -> str:
    return next((name[: -len(s)] for s in _SUFFIXES if name.endswith(s)), name)


def _output(outputs: dict, name: str):
    for key in (name, *(name + s for s in _SUFFIXES)):
        if key in outputs:
            return outputs[key]
    return None


class Chain:
    """Runs of a module's earlier launches, once each, for the functions that take their buffers."""

    def __init__(self, cache: Path, mod: dict, target: str | None, seconds: float):
        self.cache, self.mod, self.target, self.seconds = cache, mod, target, seconds
        self.runs: dict = {}

    def _function(self, name: str) -> dict | None:
        return next((f for f in self.mod.get("functions", []) if f["function"] == name), None)

    def run(self, name: str, gen: str, depth: int = 0):
        """(outputs or None, note) of launch `name` run on its captured (and chained) inputs."""
        key = (name, gen)
        if key in self.runs:
            return self.runs[key]
        self.runs[key] = (None, "a cycle of launches")
        self.runs[key] = self._run(name, gen, depth)
        return self.runs[key]

    def _run(self, name: str, gen: str, depth: int):
        import ir
        from modelcheck import numsim

        from benchmarks.corpus.check import captured_inputs
        frec = self._function(name)
        cap = (frec or {}).get("captured") or {}
        if frec is None or "npz" not in cap:
            return None, f"{name}: no captured inputs"
        notes = []
        for g in (gen, "pre" if gen == "lowered" else "lowered"):
            if not frec.get(g):
                continue
            try:
                func = ir.parse_file(self.cache / frec[g])
            except ir.ParseError as err:
                notes.append(f"{name} ({g}): does not parse ({str(err).splitlines()[0][:120]})")
                continue
            pre = self.cache / frec["pre"] if g == "lowered" and frec.get("pre") else None
            inputs, problems = captured_inputs(self.cache, cap, func, pre)
            if problems:
                notes.append(f"{name} ({g}): " + "; ".join(problems)[:200])
                continue
            if depth < MAX_DEPTH:
                inputs, _ = self.inputs(frec, func, inputs, g, depth + 1)
            res = numsim.run(func, inputs, unsupported="incomplete", max_seconds=self.seconds, target=self.target)
            if res.termination == "completed":
                return res.outputs, f"{name} ({g}) ran to completion"
            why = next((d.message for d in res.diagnostics if d.status != "review"), res.termination)
            notes.append(f"{name} ({g}) stopped ({res.termination}): {why[:200]}")
            if any(d.details.get("reason") == "resource_limit" for d in res.diagnostics):
                break       # out of budget: the other generation, the same program, would be too

        return None, "; ".join(notes) or f"{name}: no printed text"

    def inputs(self, frec: dict, func, inputs: dict, gen: str, depth: int = 0) -> tuple[dict, dict]:
        """(inputs with the buffers earlier launches wrote, {"buffers": {param: source}, "launches": {...}})."""
        import numpy as np
        shared = (frec.get("captured") or {}).get("shared_with_unlaunched") or {}
        wanted = {}
        for p in func.params:
            src = shared.get(_base(p.name)) or shared.get(p.name)
            if src and src.partition(".")[0] != frec["function"] and p.kind == "buffer":
                wanted[p.name] = src
        out, info = dict(inputs), {"buffers": {}, "launches": {}}
        for param, src in wanted.items():
            launch, _, buf = src.partition(".")
            outputs, note = self.run(launch, gen, depth)
            info["launches"][launch] = note
            if outputs is None:
                continue
            value = _output(outputs, buf)
            given = inputs.get(param)
            if value is None or not isinstance(given, np.ndarray) or value.nbytes != given.nbytes:
                info["launches"][launch] += f"; {buf} does not fit {param}"
                continue
            # a view keeps the maps the buffer holds (tensormap.MapBuffer: byte offsets)
            out[param] = (value if value.dtype == given.dtype else value.view(given.dtype)).reshape(given.shape)
            info["buffers"][param] = src
        return out, info
