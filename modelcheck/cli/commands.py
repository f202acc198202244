"""The commands of `modelcheck`, one kernel at a time: run, check|sync|race, states, prove, graph,
replay, parse.  Each takes the parsed options and a `Job` (the kernel file, its input plan and the
command's time budget) and returns an exit code; `modelcheck.cli.main` loops over the files."""
from __future__ import annotations

import argparse
import io
import json
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from ir.errors import UsageError

from .. import numsim
from ..common import findings as F
from ..common.files import check_output, write_output
from ..kernel import Kernel, is_module_target, load, load_module, parse_config
from ..report.coverage import sources_text
from ..summary import summarize
from .inputs import InputPlan, parse_consts, split_consts
from .progress import Progress

if TYPE_CHECKING:
    from ..numsim.engine import NumSimResult

EXIT_USAGE = 64
EXIT_FOR_VERDICT = {"clean": 0, "review": 0, "error": 1, "incomplete": 2}
ORDER = ["clean", "review", "incomplete", "error"]


@dataclass(frozen=True)
class Loaded:
    """A job's kernel as `Job.load` read it: what a command works on."""

    kernel: Kernel
    plan: InputPlan
    inputs: dict    # the built inputs; empty after load(with_inputs=False) (prove builds its own per size)


@dataclass
class Job:
    """One kernel of a command line: its file, options, input plan and time budget."""

    path: str
    args: argparse.Namespace
    progress: Progress
    deadline: float = 0.0
    consts: dict = field(default_factory=dict)
    scalars: dict = field(default_factory=dict)
    plan: InputPlan | None = None       # set by load(), as are kernel and inputs
    kernel: Kernel | None = None
    inputs: dict | None = None
    reports: list = field(default_factory=list)     # what the HTML/SARIF outputs of the whole call collect

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.01)

    def limits(self) -> dict:
        a = self.args
        return {"max_steps": a.max_steps, "max_seconds": self.remaining(), "max_memory_mb": a.max_memory,
                "target": a.target}

    def protected(self) -> list:
        """Files this run reads: an output may never overwrite one of them."""
        return [self.path] + (self.plan.files() if self.plan else [])

    def load(self, with_inputs: bool = True) -> Loaded:
        name = getattr(self.args, "kernel_name", None)
        if is_module_target(self.path):
            return self._load_module(name, with_inputs)
        if getattr(self.args, "config", None):
            raise UsageError("--config KEY=VALUE configures a `package.module:NAME` target; a kernel file takes "
                             "--const NAME=V")
        given = parse_consts(getattr(self.args, "const", []))
        dims = parse_consts(getattr(self.args, "dim", []), "--dim")
        try:    # usually every --const is a module constant: one build (a build is most of a small check's parse)
            kernel = load(self.path, kernel_name=name, **given)
        except UsageError:      # some name a scalar parameter or a dimension (or nothing): a plain build sorts them
            probe = load(self.path, kernel_name=name)
            consts, self.scalars = split_consts(probe.func, given, dims)
            kernel = load(self.path, kernel_name=name, **consts) if consts else probe
        else:
            consts, self.scalars = split_consts(kernel.func, given, dims)
        self.consts = consts
        self.kernel = kernel
        return self._plan_inputs(self.kernel, with_inputs)

    def _load_module(self, name, with_inputs: bool) -> Loaded:
        """A `pkg.mod:NAME` target: the real compiler builds the kernel (`--config` configures it); module
        constants are folded by then, so `--const` applies to scalar parameters and `--dim` to dimensions."""
        self.kernel = load_module(self.path, kernel_name=name, config=parse_config(getattr(self.args, "config", [])))
        consts, self.scalars = split_consts(self.kernel.func, parse_consts(getattr(self.args, "const", [])),
                                            parse_consts(getattr(self.args, "dim", []), "--dim"))
        if consts:
            raise UsageError(f"--const {', '.join(consts)}: a kernel built from a Python module has no module "
                             f"constants left to override; configure the build with --config KEY=VALUE")
        return self._plan_inputs(self.kernel, with_inputs)

    def _plan_inputs(self, kernel: Kernel, with_inputs: bool) -> Loaded:
        self.plan = plan = InputPlan.from_args(self.args, self.scalars)
        inputs: dict = {}
        if with_inputs:
            self.progress.phase(f"{kernel.name}: inputs")
            self.inputs = inputs = plan.build(kernel.func, self.args.max_memory)
        return Loaded(kernel, plan, inputs)

    def annotate(self, report):
        report.sources = self.plan.describe() if self.plan else {}
        report.overrides = dict(self.consts)
        report.kernel_path = self.path
        return report


def missing_inputs(ld: Loaded, command: str) -> int | None:
    missing = [p.name for p in ld.kernel.func.params if p.name not in ld.inputs]
    if not missing:
        return None
    print(f"modelcheck {command}: no value for {', '.join(missing)}; give scalars with --const NAME=V, buffers "
          f"without static shapes with --input NAME=FILE.npy, tensor maps with --input NAME=FILE.npy or "
          f"--inputs BUILDER.py:FUNCTION", file=sys.stderr)
    return EXIT_USAGE


def _format_array(a) -> str:
    import numpy as np
    with np.printoptions(threshold=64, edgeitems=8, linewidth=110):
        return np.array2string(a)


def run(args, job: Job) -> int:
    if args.out:
        check_output(args.out, [job.path])
    ld = job.load()
    if (code := missing_inputs(ld, "run")) is not None:
        return code
    limits = job.limits()
    if args.max_polls:
        limits["max_polls"] = args.max_polls
    if args.max_loop_iterations:
        limits["max_loop_iterations"] = args.max_loop_iterations
    job.progress.phase(f"{ld.kernel.name}: numsim")
    try:
        res = numsim.run(ld.kernel.func, ld.inputs, **limits)
    except numsim.UnsupportedTIRxError as err:
        print(f"modelcheck run: incomplete: {err}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    print(f"numsim {res.verdict.upper()} - {ld.kernel.name} ({res.termination})")
    print(f"inputs: {sources_text(ld.plan.describe())}")
    if args.out:
        import numpy as np
        buf = io.BytesIO()
        np.savez(buf, **res.outputs)
        write_output(args.out, buf.getvalue(), job.protected())
        print(f"outputs saved to {args.out}: {', '.join(res.outputs)}")
    else:
        for name, arr in res.outputs.items():
            print(f"{name} ({arr.dtype}{list(arr.shape)}):\n{_format_array(arr)}")
    if res.diagnostics:
        print("diagnostics:")
        for d in res.diagnostics:
            print(f"  {d}")
    st = res.stats
    print(f"stats: {st['ctas']} CTA(s), {st['warps']} warp(s), {st['warp_instructions']} warp-instructions, "
          f"{st['accesses']} memory accesses ({st['lane_accesses']} lane accesses), {st['sync_events']} sync "
          f"operations, {st['polls']} polls, {st['async_ops']} async ops, {st['wall_time_s']:.3f} s")
    return EXIT_FOR_VERDICT[res.verdict]


def checker_reports(which: str, job: Job, ld: Loaded) -> list:
    """The checkers' reports in the order `modelcheck check` prints them: synccheck, then racecheck."""
    import modelcheck
    reports = []
    func = ld.kernel.func
    if which in ("check", "sync"):
        job.progress.phase(f"{ld.kernel.name}: synccheck")
        reports.append(job.annotate(modelcheck.synccheck(func, ld.inputs, **job.limits())))
    if which in ("check", "race"):
        job.progress.phase(f"{ld.kernel.name}: racecheck")
        reports.append(job.annotate(modelcheck.racecheck(func, ld.inputs, **job.limits())))
    return reports


def combined(which: str, job: Job, ld: Loaded):
    from ..report import CheckReport
    reports = checker_reports(which, job, ld)
    return CheckReport(reports) if which == "check" else reports[0]


def check(args, job: Job) -> int:
    report = combined(args.command, job, job.load())
    job.reports.append(report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        report.print()
    if report.verdict == "review" and args.strict:
        return 3
    return EXIT_FOR_VERDICT[report.verdict]


def states(args, job: Job) -> int:
    """Phase A once, then the explorer under each reduction configuration (issue #7 item 4)."""
    from ..explorer import reductions
    from ..synccheck import phase_a, verdict_of
    from .states_table import print_states
    ld = job.load()
    configs = "".join(dict.fromkeys(args.configs.replace(",", "")))
    unknown = sorted(set(configs) - set(reductions.CONFIGURATIONS))
    if unknown or not configs:
        raise UsageError(f"--configs {args.configs!r}: choose letters from {''.join(reductions.CONFIGURATIONS)}")
    job.progress.phase(f"{ld.kernel.name}: phase A")
    a = phase_a(ld.kernel.func, ld.inputs, **{k: v for k, v in job.limits().items() if k != "max_seconds"})
    if a.programs is None:
        verdict = verdict_of(a.findings)
        print(f"modelcheck states: phase A of {ld.kernel.name} did not give sync programs to explore "
              f"({a.stats.get('termination', 'not run')}, verdict {verdict}):", file=sys.stderr)
        for f in a.findings:
            print(f"  {f.status} {f.kind}: {f.message}", file=sys.stderr)
        return EXIT_FOR_VERDICT["error" if verdict == "clean" else verdict]
    programs = a.programs
    job.progress.phase(f"{ld.kernel.name}: exploring")
    rows = reductions.measure(programs, configs, max_states=args.max_states, max_seconds=job.remaining())
    if args.json:
        print(json.dumps({"kernel": ld.kernel.name, "warps": len(programs.warps), "commands": programs.size(),
                          "projections": [programs.resource_names.get(r, str(r)) for r in programs.resources()],
                          "phase_a_findings": [f.kind for f in a.findings], "configurations": rows,
                          "inputs": ld.plan.describe()}, indent=2, sort_keys=True))
    else:
        print_states(ld.kernel.name, a, rows)
        print(f"inputs: {sources_text(ld.plan.describe())}")
    first = rows[0]
    if first["status"] == "complete":
        return 0
    return EXIT_FOR_VERDICT["incomplete" if first["status"] == "limit" else "error"]


def symbolic(specs: list[str]) -> dict:
    """NAME, NAME=LO.., NAME=LO..HI -> {name: (lo, hi or None)}."""
    out = {}
    for spec in specs:
        name, sep, rng = spec.partition("=")
        if not name.isidentifier():
            raise UsageError(f"--symbolic expects NAME[=LO..HI], got {spec!r}")
        lo, hi = 1, None
        if sep:
            a, dots, b = rng.partition("..")
            try:
                lo = int(a) if a else 1
                hi = int(b) if b else None
            except ValueError:
                raise UsageError(f"--symbolic {name}: {rng!r} is not a range LO..HI (e.g. 1.. or 2..64)") from None
            if not dots:
                raise UsageError(f"--symbolic {name}: {rng!r} is not a range LO..HI (e.g. 1.. or 2..64)")
            if hi is not None and hi < lo:
                raise UsageError(f"--symbolic {name}: empty range {lo}..{hi}")
        out[name] = (lo, hi)
    return out


def prove(args, job: Job) -> int:
    from ..prover import prove as _prove
    from ..report.proof import ProofReport
    ranges = symbolic(args.symbolic)
    ld = job.load(with_inputs=False)
    names = {c.name for c in ld.kernel.func.constants}
    unknown = sorted(set(ranges) - names)
    if unknown:
        raise UsageError(f"--symbolic {', '.join(unknown)}: not a module constant of {ld.kernel.name} "
                         f"(constants: {', '.join(sorted(names)) or 'none'})")
    overridden = sorted(set(ranges) & set(job.consts))
    if overridden:
        raise UsageError(f"--symbolic {', '.join(overridden)}: also fixed with --const; a size is either symbolic "
                         f"or fixed")
    inputs = ld.plan.for_constants(job.path, args.max_memory) if ld.plan.options or job.scalars else None
    job.progress.phase(f"{ld.kernel.name}: prove")
    report = ProofReport(_prove(ld.kernel.func, symbolic=list(ranges), ranges=ranges, inputs=inputs,
                                max_seconds=job.remaining()))
    report.sources = ld.plan.sources or {"(all)": "zeros (default)"}
    report.kernel_path = job.path
    job.reports.append(report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print(report.format(verbose=args.verbose), end="")
    return {"proved": 0, "refuted": 1, "incomplete": 2}[report.verdict]


def graph(args, job: Job) -> int:
    """The happens-before graph of one run, exported by extension; --finding explains one finding."""
    from pathlib import Path

    from .. import hb
    out = Path(args.out)
    if out.suffix.lower() not in hb.FORMATS:
        raise UsageError(f"--out {args.out}: the extension chooses the format; use one of {', '.join(hb.FORMATS)}")
    check_output(out, [job.path])
    ld = job.load()
    check_output(out, job.protected())
    if (code := missing_inputs(ld, "graph")) is not None:
        return code
    job.progress.phase(f"{ld.kernel.name}: happens-before graph")
    try:
        g = hb.build(ld.kernel.func, ld.inputs, **job.limits())
    except hb.RunNotStarted as err:
        print(f"modelcheck graph: {ld.kernel.name} never started, so it has no graph:", file=sys.stderr)
        for d in err.result.diagnostics:
            print(f"  {d}", file=sys.stderr)
        return EXIT_FOR_VERDICT[err.result.verdict]
    explanation = None
    if args.finding is not None:
        report = combined(args.checker, job, ld)
        explanation = hb.explain(report, _select(report, args.finding), hb=g)
    witness = explanation.data.get("witness_nodes") if explanation is not None else None
    result = cast("NumSimResult", g.result)     # hb.build keeps the result of its run
    partial = result.termination == "incomplete"
    highlight = explanation.path if explanation else ()
    fmt = out.suffix.lower()[1:]
    from ..report import layout
    if fmt == "svg" and layout.dot_available():     # laid out by Graphviz; hb.write's hand-laid timeline otherwise
        title = f"{'witness schedule' if witness else 'happens-before timeline'} of {ld.kernel.name}"
        svg = layout.render_svg(layout.timeline_dot(g, highlight, witness, title))
        write_output(out, svg, job.protected())
    else:
        fmt = hb.write(g, out, highlight=highlight, order=witness, protect=job.protected())
    nx_graph = g.graph
    print(f"happens-before graph of {ld.kernel.name}: {nx_graph.number_of_nodes()} nodes, "
          f"{nx_graph.number_of_edges()} edges (run: {result.termination}); wrote {fmt.upper()} to {out}")
    if witness and fmt == "svg":
        print(f"the timeline shows the finding's witness schedule ({len(witness)} operations of the run)")
    if explanation is not None:
        print(json.dumps(explanation.to_dict(), indent=2) if args.json else explanation.format(), end="")
    if partial:     # the run stopped early (a budget, an unsupported operation): the graph is partial
        print("modelcheck graph: the run was incomplete, so the graph covers only what ran:", file=sys.stderr)
        for d in result.diagnostics:
            if d.status == "incomplete":
                print(f"  {d}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    return 0


def _select(report, which):
    """Finding `which` of a report, numbered like `modelcheck check` prints them; UsageError listing them."""
    if not report.findings:
        raise UsageError(f"{report.func.name} has no findings (the checkers are clean): nothing to select")
    try:
        return report.select(which) if hasattr(report, "select") else F.select(report.findings, which)
    except F.NoSuchFinding as err:
        listing = "\n".join(f"  {k}. [{f.status}] {f.kind} {f.id}" for k, f in enumerate(report.findings, 1))
        if err.reason == "range":
            raise UsageError(f"--finding {err.which} is not between 1 and {err.count}; the findings of "
                             f"{report.func.name}:\n{listing}") from None
        what = "matches several findings" if err.reason == "several" else "matches no finding"
        raise UsageError(f"--finding {which!r} {what}; give a number or a full id:\n{listing}") from None


# reproduced: the forced schedule shows the error; not followed: the replay could not decide (incomplete)
_REPLAY_EXIT = {"reproduced": 1, "no_difference": 0, "schedule_not_followed": 2}


def replay(args, job: Job) -> int:
    """Synccheck then Racecheck, pick finding N (1-based, in the merged list `check` prints) or by id, replay it."""
    from ..replay import PlanError, replay as _replay
    from ..report.replay import ReplayReport
    ld = job.load()
    report = combined("check", job, ld)
    finding = _select(report, args.finding)
    if finding.status == "incomplete" or finding.kind == "unsupported_operation_not_reached":
        print(f"modelcheck replay: finding {args.finding} ({finding.kind}) says what the analysis did not cover, "
              f"not what went wrong; there is no schedule to replay:\n  {finding.message}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    job.progress.phase(f"{ld.kernel.name}: replay")
    try:
        rep = ReplayReport(_replay(ld.kernel.func, ld.inputs, finding, **job.limits()))
    except PlanError as err:
        print(f"modelcheck replay: {err}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    if args.json:
        print(rep.to_json())
    else:
        rep.print()
    return _REPLAY_EXIT[rep.outcome] if rep.outcome != "default_schedule" else \
        EXIT_FOR_VERDICT["error" if rep.effects else "clean"]


def parse(args, job: Job) -> int:
    from ..report.summary import format_summary
    if is_module_target(job.path):
        if args.const:
            raise UsageError("--const: a kernel built from a Python module has no module constants left to "
                             "override; configure the build with --config KEY=VALUE")
        kernel = load_module(job.path, kernel_name=args.kernel_name, config=parse_config(args.config))
    elif args.config:
        raise UsageError("--config KEY=VALUE configures a `package.module:NAME` target; a kernel file takes "
                         "--const NAME=V")
    else:
        kernel = load(job.path, kernel_name=args.kernel_name, **parse_consts(args.const))
    if not args.summary_only:
        print(kernel.script())
    print(format_summary(summarize(kernel.func)))
    return 0
