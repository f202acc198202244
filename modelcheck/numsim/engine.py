"""NumSim's entry point: `Engine(func, **limits).run(inputs, outputs, observers)`.

A run binds copies of the inputs (a buffer the compiled kernel can only read -- never stored to, its
address never taken -- is bound as a read-only view instead, and is that view in the outputs),
compiles the kernel to closures once, gives each CTA its shared memory while it is resident
(numsim.residency), runs all warps of the grid under the deterministic scheduler, and returns a
frozen `NumSimResult`: outputs, diagnostics, stats, why it stopped, and the verdict (error >
incomplete > review > clean).  Missing bindings raise `InputError`; executing an unsupported
operation raises `UnsupportedTIRxError` unless `unsupported="incomplete"` is asked for.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

import numpy as np

import ir

from ..common.verdict import Verdict
from . import budget, cohort, registers_budget, targets
from . import values as V
from .compile_expr import nbytes
from .compile_stmt import Compiler, _static
from .errors import Diagnostic, EngineError, ResourceLimit, UnsupportedTIRxError
from .inputs import all_zero, bind_scalars, buffer_array, check_inputs, normalize, resolve_dims
from .memory import GlobalMemory, SharedMemory
from ..common.ranges import id_ranges
from .runtime import CTARuntime, EngineState, Scheduler, Warp, spin_details, spin_note
from .schedule import Gate, GatedScheduler, GatedState, Schedule, ScheduleStuck
from .tensormap import TENSOR_MAPS, bind_host_maps, bind_tensor_maps, buffers_under, handle_scalars
from .tmap_values import MapStore, attach_output_maps, bind_buffer_maps, bind_param_bytes, stray_words
from .ops.wgmma import at_exit as wgmma_at_exit
from .tmem import live_at_exit
from .memory import SHARED_BASE
from .ops.clc import ClcScheduler, NotLaunched, launch_gate
from .residency import Residency, release_shared
from .sync import ClusterBarrier
from .trace import Halt, RunInfo



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
    def verdict(self) -> Verdict:
        return Verdict.worst(d.status for d in self.diagnostics)

    def diagnostics_of(self, kind: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.kind == kind]


class Engine:
    """Runs one kernel; limits are options (exceeding one gives an incomplete result).

    Budgets (numsim.budget): `max_steps` warp-instructions, `max_seconds` of wall clock and
    `max_memory_mb` the run may add, besides the per-loop `max_loop_iterations` and `max_polls`.
    `target` (numsim.targets) gives the hardware launch limits and the CTAs resident at once
    (`resident_ctas` overrides the latter: a larger grid runs in waves, numsim.residency)."""

    def __init__(self, func: ir.PrimFunc, *, max_polls: int = 1_000_000, max_loop_iterations: int = 1_000_000,
                 unsupported: str = "raise", max_steps: int = budget.DEFAULT_MAX_STEPS,
                 max_seconds: float = budget.DEFAULT_MAX_SECONDS,
                 max_memory_mb: float = budget.DEFAULT_MAX_MEMORY_MB, target: str | None = None,
                 clc_resident: int = 1, clc_policy: str = "steal", clc_answers: tuple = (),
                 resident_ctas: int | None = None, cohorts: int = 0, clc_choice=None):
        self.func = func
        if cohorts < 0:
            raise ValueError("cohorts must be at least 0")
        self.cohorts = cohorts              # > 1: run up to this many CTAs as one cohort (numsim.cohort; off: 0)
        if resident_ctas is not None and resident_ctas < 1:
            raise ValueError("resident_ctas must be at least 1")
        self.resident_ctas = resident_ctas  # CTAs resident at once (None: the target's, numsim.residency)
        if clc_policy not in ("steal", "fail"):
            raise ValueError("clc_policy must be 'steal' or 'fail'")
        self.clc_resident = clc_resident    # clusters running at once under cluster launch control (ops/clc.py)
        self.clc_policy = clc_policy
        self.clc_answers = tuple(bool(a) for a in clc_answers)   # the first CLC choice points' answers, forced
        # (the answers so far, the policy's answer, warp-instructions so far) -> the answer, at each later CLC
        # choice point: where a checker may snapshot the run (the snapshot goes on with the other answer)
        self.clc_choice = clc_choice
        self.max_polls = max_polls
        self.max_loop_iterations = max_loop_iterations
        if unsupported not in ("raise", "incomplete"):
            raise ValueError("unsupported must be 'raise' or 'incomplete'")
        self.unsupported = unsupported
        self.max_steps = max_steps
        self.max_seconds = max_seconds
        self.max_memory_mb = max_memory_mb
        self.target = targets.target(target)

    def launch_dims(self, scalars: dict):
        consts = self.func.constant_values

        def dims(exprs, what):
            out = []
            for e in exprs:
                v = _static(e, consts, scalars)
                if v is None:
                    raise UnsupportedTIRxError(f"launch {what}", self.func.launch.span,
                                               "launch extents must be constants or scalar parameters")
                out.append(int(v))
            return tuple(out)
        grid = dims(self.func.launch.grid, "grid")
        block = dims(self.func.launch.block, "block")
        cluster = dims(self.func.launch.cluster, "cluster")
        return grid, block, cluster

    def _residency(self, warps_per_cta: int, shared_bytes: int) -> tuple[int, str]:
        """CTAs resident at once, and how that was decided (for messages)."""
        if self.resident_ctas is not None:
            return self.resident_ctas, f"{self.resident_ctas:,} CTA(s) resident at once, as asked"
        t = self.target
        n = targets.resident_ctas(t, warps_per_cta, shared_bytes)
        return n, f"{t.sms} SMs x {n // t.sms} CTA(s) per SM on {t.name}"

    def meter(self) -> budget.Meter:
        """A fresh meter of this engine's budgets (a checker may share one between the run and its analysis)."""
        return budget.Meter(self.max_steps, self.max_seconds, self.max_memory_mb)

    def run(self, inputs: dict, outputs=None, observers=(), schedule: Schedule | None = None,
            meter: budget.Meter | None = None) -> NumSimResult:
        """`schedule`: follow this forced order of steps (numsim.schedule) instead of the default one;
        `meter`: the budgets to charge (default: a fresh one of this engine's)."""
        func = self.func
        t0 = time.perf_counter()
        meter = meter if meter is not None else self.meter()
        inputs = normalize(func, inputs)
        check_inputs(func, inputs)
        scalars = bind_scalars(func, inputs)
        scalars.update(resolve_dims(func, inputs))
        scalars.update(handle_scalars(func))     # tensor maps (parameters, host-encoded): a param-space address each
        gate = None
        if schedule is not None:
            gate = Gate(schedule)
            observers = (gate, *observers)
        diagnostics: list[Diagnostic] = []
        termination = "completed"
        halt = None
        arrays: dict[str, np.ndarray] = {}
        warps: list[Warp] = []
        ctas: list[CTARuntime] = []
        eng = None
        program = None
        started = False
        cohort_stats: dict | None = None
        gc_was = gc.isenabled()
        quiet = None
        try:
            host_values(func, scalars)           # the host prelude's integer bindings and assertions
            grid, block, cluster = self.launch_dims(scalars)
            program = Compiler(func, scalars, block, None if schedule is None else schedule.sites(),
                               shared_limit=self.target.max_shared_per_block).compile()
            limits = targets.violations(self.target, grid, block, program.layout.total)
            limits += targets.cluster_violations(grid, cluster)
            if limits:
                raise EngineError("launch_exceeds_hardware_limits",
                                  f"this launch cannot start on {self.target.name}: " + "; ".join(limits),
                                  func.launch.span, target=self.target.name, violations=limits,
                                  grid=list(grid), block=list(block), cluster=list(cluster),
                                  shared_bytes=program.layout.total)
            nthreads = block[0] * block[1] * block[2]
            nwarps = (nthreads + 31) // 32
            nctas = grid[0] * grid[1] * grid[2]
            csize = cluster[0] * cluster[1] * cluster[2]
            resident, per_sm = self._residency(nwarps, program.layout.total)
            # a launch with cluster launch control has its own launch scheduler (ops/clc.py)
            clc = any(s.op == "clusterlaunchcontrol.try_cancel" for s in program.sites)
            waves = not clc and resident // csize < nctas // csize
            # CTAs holding shared memory at once: a wave's, or (CLC) the running clusters' only
            held = min(nctas, max(resident // csize, 1) * csize) if waves else \
                min(nctas, max(self.clc_resident, 1) * csize) if clc else nctas
            # buffers the kernel only reads are bound as they are (host tensor maps stored through write theirs)
            written = program.written_globals | {program.buffers_alloc(h.buffer) for h in func.host
                                                 if isinstance(h, ir.TensorMapEncode)
                                                 and (h.var.name in program.written_globals
                                                      or TENSOR_MAPS in program.written_globals)}
            maps = {p.name for p in func.params if p.kind == "handle"} & written
            if TENSOR_MAPS in written:      # a store through some map: it may point into any buffer parameter
                written |= {p.name for p in func.params if p.kind == "buffer"}
            written |= buffers_under(func, inputs, maps)     # the buffers stored-through maps point into
            # (an all-zero buffer gets fresh zeros, whose pages the resident size counts as they are written)
            meter.allocate(sum(int(np.asarray(inputs[p.name]).nbytes) for p in func.params
                               if p.kind == "buffer" and p.name in written
                               and not all_zero(np.asarray(inputs[p.name]))), "copying the global buffers")
            meter.allocate(nctas * (budget.CTA_BYTES + nwarps * budget.WARP_BYTES) + held * 2 * program.layout.total,
                           f"{nctas:,} CTA(s) of {nwarps} warp(s) with {program.layout.total:,} bytes of shared "
                           f"memory each" + (f" ({held:,} resident at once)" if held < nctas else ""))
            gmem = GlobalMemory()
            for p in func.params:
                if p.kind == "buffer":
                    arrays[p.name] = buffer_array(func, p, inputs[p.name], scalars, copy=p.name in written)
                    gmem.add(p.name, arrays[p.name])
            eng = EngineState(gmem, program.sites, list(observers)) if gate is None else \
                GatedState(gmem, program.sites, list(observers), gate)
            eng.loop_budget = self.max_loop_iterations
            eng.meter = meter
            # may add global allocations: before first_id
            eng.tensor_maps = bind_tensor_maps(func, inputs, gmem,
                                               written=True if TENSOR_MAPS in written else maps)
            eng.tensor_maps.update(bind_host_maps(func, scalars, gmem, program.buffers_alloc))
            eng.map_store = MapStore()
            bind_buffer_maps(func, inputs, gmem, eng.map_store)     # maps held as data in buffer inputs
            bind_param_bytes(eng.tensor_maps, gmem, eng.map_store)  # and the parameters' own bytes
            for info in program.buffers.values():
                if info.space == "global":
                    eng.global_views[info.slot] = _view(gmem.allocs[info.alloc].data, info)
            first_id = len(gmem.allocs)

            def make_shared(rt, pool=None, written=None):
                rt.shared = SharedMemory(rt.index, program.layout,
                                         first_id + rt.index * max(len(program.layout.offsets), 1), pool, written)
                rt.views = [_view(rt.shared.allocs[i.alloc].data, i) for i in program.shared_infos]
            for bz in range(grid[2]):
                for by in range(grid[1]):
                    for bx in range(grid[0]):
                        rt = CTARuntime(len(ctas), (bx, by, bz), None, nthreads)
                        if clc:             # its cluster's launch gives it shared memory (ops/clc.py)
                            rt.shared = NotLaunched(rt.index, {})
                        elif not waves:
                            make_shared(rt)
                        for k in range(nwarps):
                            w = Warp(len(warps), rt, k, min(32, nthreads - 32 * k), block, eng, program.nslots)
                            rt.warps.append(w)
                            warps.append(w)
                        ctas.append(rt)
            form_clusters(ctas, grid, cluster)
            info = RunInfo(func, tuple(program.sites), len(warps), nwarps, len(ctas), block, grid,
                           _namer(program.layout, program.shared_infos), tuple(cluster),
                           frozenset(a.id for a in gmem.allocs.values() if not a.data.flags.writeable))
            for observer in observers:
                observer.on_start(info)
            started = True
            off = cohort.eligible(func, program, cluster, gate is not None, clc) if self.cohorts > 1 else "off"
            gc.disable()   # the cyclic GC scanning a growing trace costs ~10% (engineering measurements §1)
            # the ops make IEEE infinities and NaNs on purpose: numpy's floating-point error reports are off for the
            # whole run, so an op closure needs no `np.errstate` of its own (entering one costs more than a 32-lane op)
            quiet = np.errstate(all="ignore")
            quiet.__enter__()
            rest = ctas
            if off is None:
                for rt in ctas if waves and not program.layout.total else ():
                    make_shared(rt)       # an empty pool each: what the checks at exit read of a CTA
                batched = Compiler(func, scalars, block, None, shared_limit=self.target.max_shared_per_block,
                                   wrap_op=cohort.wrap_op, wrap_access=cohort.wrap_access).compile()
                dtypes = {i.slot: i.dtype for i in batched.buffers.values() if i.space == "local"}
                # with waves, a cohort's CTAs hold their shared memory together: it takes k of the wave's slots
                size = min(self.cohorts, max(resident // csize, 1)) if waves and program.layout.total else \
                    self.cohorts
                # (`written`: the buffers stored-through tensor maps point into too)
                launch = cohort.Launch(program.body, batched.body, batched.nslots, {
                    gmem.allocs[n].id for n in written if n in gmem.allocs}, dtypes, self.max_polls,
                    make_shared if program.layout.total else None, waves, program.layout)
                cohort_stats = {}
                first = cohort.run_cohorts(eng, ctas, size, launch, cohort_stats)
                rest = [] if first is None else ctas[first:]
            else:
                cohort_stats = {"off": off}
            if rest:
                rest_warps = warps if rest is ctas else [w for rt in rest for w in rt.warps]
                scheduler = (Scheduler if gate is None else GatedScheduler)(eng, rest_warps, self.max_polls)
                body = program.body
                if waves:
                    eng.residency = Residency(eng, _clusters_in_order(rest), resident // csize, per_sm,
                                              make_shared)
                    body = eng.residency.gate(body)
                    eng.residency.start()
                if clc:
                    clusters = _clusters_in_order(rest)

                    def launched(cid: int) -> None:
                        for rt in clusters[cid]:
                            make_shared(rt)

                    def released(cid: int) -> None:
                        release_shared(eng, clusters[cid])
                    eng.clc = ClcScheduler(clusters, self.clc_resident, self.clc_policy, self.clc_answers,
                                           launched, released)
                    if self.clc_choice is not None:
                        hook = self.clc_choice
                        eng.clc.on_choice = lambda taken, default: hook(taken, default, meter.steps)
                    body = launch_gate(eng, body, eng.clc)
                scheduler.run(body)
            eng.finish_accesses()       # the last access records, inside the run's error handling
        except EngineError as err:
            termination = "error"
            details = _with_warp(err.details, eng) if eng is not None else dict(err.details)
            diagnostics.append(Diagnostic(err.kind, Verdict.ERROR, err.message, err.span, details))
        except ResourceLimit as err:
            termination = "incomplete"
            message, details = err.message, {"reason": "resource_limit", "limit": err.limit, **err.details}
            waiting = eng.residency.pending() if eng is not None and eng.residency is not None else 0
            if eng is not None and eng.residency is not None and waiting:
                message += eng.residency.stalled_note(meter.steps)
                details["ctas_not_launched"] = waiting
            if eng is not None and eng.poll_sites:
                message += spin_note(eng)
                details.update(spin_details(eng))
            diagnostics.append(Diagnostic("analysis_incomplete", Verdict.INCOMPLETE, message, None, details))
        except ValueError as err:
            if "read-only" not in str(err):
                raise
            # a write into an input bound without a copy, which the compiler took for read-only: a NumSim
            # defect, reported as one rather than changing the caller's array
            termination = "incomplete"
            diagnostics.append(Diagnostic("analysis_incomplete", Verdict.INCOMPLETE,
                                          f"internal: a write reached an input NumSim bound read-only ({err})", None,
                                          {"reason": "internal", "error": str(err)}))
        except UnsupportedTIRxError as err:
            if self.unsupported == "raise":
                raise
            termination = "incomplete"
            diagnostics.append(Diagnostic("analysis_incomplete", Verdict.INCOMPLETE, str(err), err.span,
                                          {"reason": "unsupported_operation", "operation": err.name,
                                           "why": err.why}))
        except Halt as stop:
            termination = "halted"
            halt = stop
        except ScheduleStuck as stuck:
            termination = "incomplete"
            diagnostics.append(Diagnostic("schedule_stuck", Verdict.INCOMPLETE, stuck.message, None, stuck.details))
        finally:
            if quiet is not None:
                quiet.__exit__(None, None, None)
            if gc_was:
                gc.enable()
        if started and eng is not None and eng.columns is not None and eng.columns.pending():
            eng.finish_accesses()       # the run stopped early: the records it made still go to the observers
        sites = tuple(program.sites) if program is not None else ()
        if termination == "completed":
            assert program is not None              # a completed run compiled its program
            # TMEM allocations never freed (docs/semantics.md#tcgen05-and-tmem), setmaxnreg accounting
            live = live_at_exit(ctas, program.sites)
            live += registers_budget.at_exit(ctas, program.sites)
            live += wgmma_at_exit(ctas, program.sites)
            if live:
                termination = "error"
                diagnostics.extend(live)
        if eng is not None:
            diagnostics.extend(_advisories(eng, program))
        if program is not None and termination != "halted":
            diagnostics.extend(_unreached_unsupported(program, eng))
        names = [p.name for p in func.params if p.kind == "buffer"] if outputs is None else list(outputs)
        out = {}
        for name in names:
            if name not in {p.name for p in func.params if p.kind == "buffer"}:
                raise ValueError(f"{name!r} is not a buffer parameter of {func.name}")
            src = inputs[name]
            if name in arrays:
                out[name] = arrays[name].reshape(src.shape)    # the run's private copy: nothing else holds it
            else:           # the launch never started: memory is as the inputs left it
                view = np.asarray(src).view()
                view.flags.writeable = False
                out[name] = view
        if eng is not None and eng.map_store is not None:
            out = attach_output_maps(eng.map_store, eng.globals, out)
            stray = stray_words(eng.map_store, eng.globals, names, inputs) if termination == "completed" else {}
            if stray:
                termination = "incomplete"
                where = "; ".join(f"{n} bytes {r}" for n, r in stray.items())
                diagnostics.append(Diagnostic(
                    "analysis_incomplete", Verdict.INCOMPLETE,
                    f"the run left bytes of a tensor map outside any whole map ({where}): the kernel read a map's "
                    f"bytes as numbers or copied part of one; the CUtensorMap byte layout is not modeled",
                    None, {"reason": "unsupported_operation", "operation": "tensor-map bytes as data",
                           "why": "the CUtensorMap byte layout is not modeled", "buffers": stray}))
        stats = dict(eng.stats) if eng is not None else dict(EngineState.EMPTY_STATS)
        stats["warp_instructions"] = sum(w.instr for w in warps)
        stats["wall_time_s"] = time.perf_counter() - t0
        stats["warps"] = len(warps)
        stats["ctas"] = len(ctas)
        stats["grid"] = grid if program is not None else None
        stats["block"] = block if program is not None else None
        stats["cluster"] = cluster if program is not None else None
        stats["target"] = self.target.name
        if self.cohorts > 1 and cohort_stats is not None:
            stats["cohorts"] = cohort_stats
        if eng is not None and eng.residency is not None:
            r = eng.residency
            stats["residency"] = {"resident_clusters": r.resident, "cluster_ctas": len(r.clusters[0]),
                                  "peak_resident_clusters": r.peak, "launched_clusters": r.next}
        if eng is not None and eng.clc is not None:
            stats["clc"] = {"choices": list(eng.clc.choices), "forced": len(self.clc_answers),
                            "cancels": eng.clc.cancels}
        stats["budget"] = {"max_steps": meter.max_steps, "max_seconds": meter.max_seconds,
                           "max_memory_mb": meter.max_bytes >> 20, "max_loop_iterations": self.max_loop_iterations,
                           "max_polls": self.max_polls}
        if started:
            for observer in observers:
                observer.on_end(None)
        return NumSimResult(out, tuple(diagnostics), stats, termination, sites, halt,
                            None if gate is None else gate.progress())


def _clusters_in_order(ctas: list[CTARuntime]) -> list[list[CTARuntime]]:
    """The grid's clusters by cluster id, each its CTAs by rank (a one-CTA launch: every CTA its own cluster)."""
    out: dict[int, list[CTARuntime]] = {}
    for rt in ctas:
        out.setdefault(rt.cluster_id, [None] * rt.cluster_size)[rt.cluster_rank] = rt   # type: ignore[list-item]
    return [out[c] for c in sorted(out)]


def form_clusters(ctas: list[CTARuntime], grid: tuple, cluster: tuple) -> None:
    """Group the grid's CTAs into clusters of shape `cluster` (the grid is a whole number of clusters: checked
    before).  Rank = x + y * cx + z * cx * cy of the CTA's place in its cluster (PTX %cluster_ctarank)."""
    cx, cy, cz = cluster
    size = cx * cy * cz
    groups: dict[tuple, list] = {}
    for rt in ctas:
        bx, by, bz = rt.block_idx
        key = (bx // cx, by // cy, bz // cz)
        rt.cluster_idx = (bx % cx, by % cy, bz % cz)
        rt.cluster_rank = rt.cluster_idx[0] + rt.cluster_idx[1] * cx + rt.cluster_idx[2] * cx * cy
        rt.cluster_size = size
        rt.cluster_id = key[0] + key[1] * (grid[0] // cx) + key[2] * (grid[0] // cx) * (grid[1] // cy)
        groups.setdefault(key, [None] * size)[rt.cluster_rank] = rt
    for members in groups.values():
        barrier = ClusterBarrier(members[0].cluster_id, members)
        for rt in members:
            rt.cluster = members
            rt.cluster_barrier = barrier


def host_values(func, scalars: dict) -> None:
    """Run the host prelude's integer `Let`s (into `scalars`, which the device code then reads) and its
    `Assert`s (a failing one stops the launch as the host would)."""
    consts = func.constant_values
    for h in func.host:
        if isinstance(h, ir.Let):
            v = _static(h.value, consts, scalars)
            if v is None:
                raise UnsupportedTIRxError(f"host binding {h.var.name}", h.span,
                                           "its value needs something not known before the launch")
            scalars[h.var.name] = v
        elif isinstance(h, ir.Assert):
            v = _static(h.cond, consts, scalars)
            if v is None:
                raise UnsupportedTIRxError("host assertion", h.span, "its condition is not known before the launch")
            if not v:
                raise EngineError("assertion_failed", f"host assertion failed: {h.message or 'condition is false'}",
                                  h.span)


def _advisories(eng, program) -> list:
    """Diagnostics gathered along the run without stopping it."""
    out = []
    for (site, issue_site, access), entry in sorted(eng.async_register_hazards.items()):
        s, issued = program.sites[site], program.sites[issue_site]
        line = f" (line {issued.span.line})" if issued.span is not None else ""
        regs = list(entry["registers"])
        shown = ", ".join(regs[:4]) + (f" and {len(regs) - 4} more" if len(regs) > 4 else "")
        out.append(Diagnostic(
            "async_register_access_before_wait", Verdict.ERROR,
            f"{access} of {shown} before {entry['wait']}: {entry['op']}{line} writes "
            f"{'them' if len(regs) > 1 else 'it'} asynchronously ({entry['count']} time(s), warps "
            f"{id_ranges(entry['warps'])})", s.span,
            {"site": site, "issue_site": issue_site, "access": access, **entry, "registers": regs,
             "warps": sorted(entry["warps"])}))
    for site, entry in sorted(eng.uninitialized.items()):
        s = program.sites[site]
        out.append(Diagnostic(
            "uninitialized_read", Verdict.REVIEW,
            f"read of never-written bytes of {entry['allocation']} ({entry['count']} time(s), warps "
            f"{sorted(entry['warps'])[:8]})", s.span,
            {"site": site, "allocation": entry["allocation"], "count": entry["count"],
             "warps": sorted(entry["warps"])}))
    return out


def _unreached_unsupported(program, eng) -> list:
    """Operations outside the modeled set that this run never executed: its verdict covers only the paths
    these inputs took, so each is a review finding (an executed one already made the run incomplete)."""
    out = []
    executed = eng.unsupported_reached if eng is not None else set()
    for site, (name, why) in sorted(program.unsupported.items()):
        if site in executed:
            continue
        s = program.sites[site]
        out.append(Diagnostic(
            "unsupported_operation_not_reached", Verdict.REVIEW,
            f"{name} is outside the modeled set ({why}); these inputs never reached it, so the verdict covers only "
            f"the paths they took", s.span, {"site": site, "operation": name, "why": why}))
    return out


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
    size = nbytes(info)
    raw = data[info.offset:info.offset + size]
    if raw.size < size:
        raise EngineError("oob", f"buffer {info.name} ({size} B at offset {info.offset}) does not fit its "
                                 f"allocation {info.alloc}", info.span)
    if info.bits:            # packed sub-byte elements: their bytes (element access is not modeled)
        return raw
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
