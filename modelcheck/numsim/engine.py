"""NumSim's entry point: `Engine(func, **limits).run(inputs, outputs, observers)`.

A run binds copies of the inputs, compiles the kernel to closures once, lays out
every CTA's shared memory, runs all warps of the grid under the deterministic
scheduler, and returns a frozen `NumSimResult`: output copies, diagnostics, stats,
why it stopped, and the verdict (error > incomplete > review > clean).  Missing
bindings raise `InputError`; executing an unsupported operation raises
`UnsupportedTIRxError` unless `unsupported="incomplete"` is asked for.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

import numpy as np

import ir

from . import values as V
from .compile_stmt import Compiler, _static
from .errors import Diagnostic, EngineError, ResourceLimit, UnsupportedTIRxError
from .inputs import bind_scalars, buffer_array, check_inputs
from .memory import GlobalMemory, SharedMemory
from .runtime import CTARuntime, EngineState, Scheduler, Warp, id_ranges
from .schedule import Gate, GatedScheduler, GatedState, Schedule, ScheduleStuck
from .tensormap import bind_tensor_maps, handle_scalars
from .tmem import live_at_exit
from .memory import SHARED_BASE
from .trace import Halt, RunInfo

VERDICT_ORDER = {"clean": 0, "review": 1, "incomplete": 2, "error": 3}


@dataclass(frozen=True)
class NumSimResult:
    outputs: dict
    diagnostics: tuple
    stats: dict
    termination: str                 # completed | error | incomplete | halted
    sites: tuple = field(default=(), repr=False)
    halt: object = field(default=None, repr=False)
    schedule: dict | None = field(default=None, repr=False)   # a forced schedule's progress (Gate.progress)

    @property
    def verdict(self) -> str:
        worst = "clean"
        for d in self.diagnostics:
            if VERDICT_ORDER[d.status] > VERDICT_ORDER[worst]:
                worst = d.status
        return worst

    def diagnostics_of(self, kind: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.kind == kind]


class Engine:
    """Runs one kernel; limits are options (exceeding one gives an incomplete result)."""

    def __init__(self, func: ir.PrimFunc, *, max_polls: int = 1_000_000, max_loop_iterations: int = 1_000_000,
                 unsupported: str = "raise"):
        self.func = func
        self.max_polls = max_polls
        self.max_loop_iterations = max_loop_iterations
        if unsupported not in ("raise", "incomplete"):
            raise ValueError("unsupported must be 'raise' or 'incomplete'")
        self.unsupported = unsupported

    def launch_dims(self, scalars: dict):
        consts = self.func.constant_values

        def dims(exprs, what):
            out = []
            for e in exprs:
                v = _static(e, consts, scalars)
                if v is None or int(v) < 1:
                    raise UnsupportedTIRxError(f"launch {what}", self.func.launch.span,
                                               "launch extents must be positive constants or scalar parameters")
                out.append(int(v))
            return tuple(out)
        grid = dims(self.func.launch.grid, "grid")
        block = dims(self.func.launch.block, "block")
        cluster = dims(self.func.launch.cluster, "cluster")
        if cluster != (1, 1, 1):
            raise UnsupportedTIRxError("thread block clusters", self.func.launch.span, "clusters are v2")
        return grid, block

    def run(self, inputs: dict, outputs=None, observers=(), schedule: Schedule | None = None) -> NumSimResult:
        """`schedule`: follow this forced order of steps (numsim.schedule) instead of the default one."""
        func = self.func
        t0 = time.perf_counter()
        check_inputs(func, inputs)
        scalars = bind_scalars(func, inputs)
        scalars.update(handle_scalars(func))     # tensor-map parameters: a param-space address each
        grid, block = self.launch_dims(scalars)
        gate = None
        if schedule is not None:
            gate = Gate(schedule)
            observers = (gate, *observers)
        program = Compiler(func, scalars, block, None if gate is None else schedule.sites()).compile()

        gmem = GlobalMemory()
        arrays: dict[str, np.ndarray] = {}
        for p in func.params:
            if p.kind == "buffer":
                arrays[p.name] = buffer_array(func, p, inputs[p.name], scalars)
                gmem.add(p.name, arrays[p.name])
        eng = EngineState(gmem, program.sites, list(observers)) if gate is None else \
            GatedState(gmem, program.sites, list(observers), gate)
        eng.loop_budget = self.max_loop_iterations
        eng.tensor_maps = bind_tensor_maps(func, inputs, gmem)   # may add global allocations: before first_id
        for info in program.buffers.values():
            if info.space == "global":
                eng.global_views[info.slot] = _view(gmem.allocs[info.alloc].data, info)

        nthreads = block[0] * block[1] * block[2]
        nwarps = (nthreads + 31) // 32
        warps: list[Warp] = []
        ctas: list[CTARuntime] = []
        first_id = len(gmem.allocs)
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    index = len(ctas)
                    shared = SharedMemory(index, program.layout, first_id + index * max(len(program.layout.offsets), 1))
                    rt = CTARuntime(index, (bx, by, bz), shared, nthreads)
                    rt.views = [_view(shared.allocs[i.alloc].data, i) for i in program.shared_infos]
                    for k in range(nwarps):
                        w = Warp(len(warps), rt, k, min(32, nthreads - 32 * k), block, eng, program.nslots)
                        rt.warps.append(w)
                        warps.append(w)
                    ctas.append(rt)

        diagnostics: list[Diagnostic] = []
        termination = "completed"
        halt = None
        info = RunInfo(func, tuple(program.sites), len(warps), nwarps, len(ctas), block, grid,
                       _namer(program.layout, program.shared_infos))
        for observer in observers:
            observer.on_start(info)
        scheduler = (Scheduler if gate is None else GatedScheduler)(eng, warps, self.max_polls)
        gc_was = gc.isenabled()
        gc.disable()   # the cyclic GC scanning a growing trace costs ~10% (engineering measurements §1)
        try:
            scheduler.run(program.body)
        except EngineError as err:
            termination = "error"
            diagnostics.append(Diagnostic(err.kind, "error", err.message, err.span, _with_warp(err.details, eng)))
        except ResourceLimit as err:
            termination = "incomplete"
            diagnostics.append(Diagnostic("analysis_incomplete", "incomplete", err.message, None,
                                          {"reason": "resource_limit", "limit": err.limit, **err.details}))
        except UnsupportedTIRxError as err:
            if self.unsupported == "raise":
                raise
            termination = "incomplete"
            diagnostics.append(Diagnostic("analysis_incomplete", "incomplete", str(err), err.span,
                                          {"reason": "unsupported_operation", "operation": err.name,
                                           "why": err.why}))
        except Halt as stop:
            termination = "halted"
            halt = stop
        except ScheduleStuck as stuck:
            termination = "incomplete"
            diagnostics.append(Diagnostic("schedule_stuck", "incomplete", stuck.message, None, stuck.details))
        finally:
            if gc_was:
                gc.enable()
        if termination == "completed":
            live = live_at_exit(ctas, program.sites)     # TMEM allocations never freed (DESIGN §6)
            if live:
                termination = "error"
                diagnostics.extend(live)
        for (site, issue_site, access), entry in sorted(eng.async_register_hazards.items()):
            s, issued = program.sites[site], program.sites[issue_site]
            line = f" (line {issued.span.line})" if issued.span is not None else ""
            regs = list(entry["registers"])
            shown = ", ".join(regs[:4]) + (f" and {len(regs) - 4} more" if len(regs) > 4 else "")
            diagnostics.append(Diagnostic(
                "async_register_access_before_wait", "error",
                f"{access} of {shown} before {entry['wait']}: {entry['op']}{line} writes "
                f"{'them' if len(regs) > 1 else 'it'} asynchronously ({entry['count']} time(s), warps "
                f"{id_ranges(entry['warps'])})", s.span,
                {"site": site, "issue_site": issue_site, "access": access, **entry, "registers": regs,
                 "warps": sorted(entry["warps"])}))
        for site, entry in sorted(eng.uninitialized.items()):
            s = program.sites[site]
            diagnostics.append(Diagnostic(
                "uninitialized_read", "review",
                f"read of never-written bytes of {entry['allocation']} ({entry['count']} time(s), warps "
                f"{sorted(entry['warps'])[:8]})", s.span,
                {"site": site, "allocation": entry["allocation"], "count": entry["count"],
                 "warps": sorted(entry["warps"])}))
        names = [p.name for p in func.params if p.kind == "buffer"] if outputs is None else list(outputs)
        out = {}
        for name in names:
            if name not in arrays:
                raise ValueError(f"{name!r} is not a buffer parameter of {func.name}")
            src = inputs[name]
            out[name] = arrays[name].reshape(src.shape).copy()
        stats = dict(eng.stats)
        stats["warp_instructions"] = sum(w.instr for w in warps)
        stats["wall_time_s"] = time.perf_counter() - t0
        stats["warps"] = len(warps)
        stats["ctas"] = len(ctas)
        stats["grid"] = grid
        stats["block"] = block
        for observer in observers:
            observer.on_end(None)
        return NumSimResult(out, tuple(diagnostics), stats, termination, tuple(program.sites), halt,
                            None if gate is None else gate.progress())


def _namer(layout, shared_infos):
    """addr -> "name[index]" for shared addresses, from the static layout (same in every CTA)."""
    roots = sorted((SHARED_BASE + off, layout.sizes[name], name) for name, off in layout.offsets.items())
    itemsize = {}
    for info in shared_infos:
        if info.alloc == info.name:
            itemsize[info.name] = info.itemsize

    def name_of(addr: int) -> str:
        for base, size, name in roots:
            if base <= addr < base + size:
                return f"{name}[{(addr - base) // itemsize.get(name, 8)}]"
        return f"shared {addr:#x}"
    return name_of


def _view(data: np.ndarray, info) -> np.ndarray:
    nbytes = info.numel * info.itemsize
    raw = data[info.offset:info.offset + nbytes]
    if raw.size < nbytes:
        raise EngineError("oob", f"buffer {info.name} ({nbytes} B at offset {info.offset}) does not fit its "
                                 f"allocation {info.alloc}", info.span)
    return raw.view(V.NP_DTYPE[info.dtype]) if info.dtype != "bool" else raw.view(np.bool_)


def _with_warp(details: dict, eng) -> dict:
    out = dict(details)
    w = eng.current
    if w is not None and "warp" not in out:
        out["warp"] = w.gid
        out["cta"] = w.cta
        out.setdefault("iters", list(w.iters))
    return out


def run(func, inputs: dict, outputs=None, *, observers=(), schedule: Schedule | None = None,
        **limits) -> NumSimResult:
    """Run `func` (an ir.PrimFunc, Kernel, or object with .script()) on `inputs`; with `schedule`,
    the scheduler follows that forced order (numsim.schedule)."""
    return Engine(ir.as_func(func), **limits).run(inputs, outputs, observers, schedule)
