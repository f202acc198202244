"""The `modelcheck` command line (docs/architecture.md#verdicts-and-exit-codes).

Exit codes: 0 clean (and review unless --strict), 1 error, 2 incomplete, 3 review under
--strict, 64 usage or parse error, 70 internal error (a bug in modelcheck: a one-line
message; the traceback with --debug), 130 interrupted (Ctrl-C), 141 the output was closed
early (a broken pipe, e.g. `| head`).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
from pathlib import Path

import ir
from ir.errors import UsageError, shorten

from . import numsim
from .common import findings as F
from .common.files import check_output, write_output
from .common.verdict import Verdict
from .kernel import load
from .portfolio import cli as _batch_cli
from .report.summary import format_summary
from .summary import summarize

EXIT_USAGE = 64
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
EXIT_FOR_VERDICT = {v.value: v.exit_code() for v in Verdict}

# Subcommands whose machinery lands with later issues; each says which.
_PENDING = {
}


def _consts(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--const expects NAME=VALUE, got {pair!r}")
        try:
            out[name] = int(value, 0)
        except ValueError:
            try:
                out[name] = float(value)
            except ValueError:
                raise UsageError(f"--const {name}: {value!r} is not a number") from None
    return out


def _split_consts(kernel_path: str, consts: dict):
    """--const values: module constants override the kernel; scalar parameters become inputs."""
    probe = load(kernel_path)
    names = {c.name for c in probe.func.constants}
    scalars = {p.name for p in probe.func.params if p.kind == "scalar"}
    unknown = sorted(set(consts) - names - scalars)
    if unknown:
        raise UsageError(f"--const {', '.join(unknown)}: not a module constant or scalar parameter of "
                         f"{probe.name} (constants: {', '.join(sorted(names)) or 'none'}; scalar parameters: "
                         f"{', '.join(sorted(scalars)) or 'none'})")
    return {k: v for k, v in consts.items() if k in names}, {k: v for k, v in consts.items() if k in scalars}


def build_inputs(func: ir.PrimFunc, specs: list[str], npz: str | None, scalars: dict,
                 max_memory_mb: float = numsim.budget.DEFAULT_MAX_MEMORY_MB) -> dict:
    """Inputs for a CLI run: the embedded default (zero-filled buffers) plus --inputs/--input/--const."""
    import numpy as np      # (here, not at the top: `modelcheck --version` and `parse` start without numpy)
    overrides: dict = dict(scalars)
    if npz:
        with np.load(npz) as data:
            overrides.update({k: data[k] for k in data.files})
    for spec in specs or ():
        name, sep, value = spec.partition("=")
        if not sep:
            raise UsageError(f"--input expects NAME=zeros|ones|random[:seed]|FILE.npy, got {spec!r}")
        if value.endswith(".npy"):
            overrides[name] = np.load(value)
        else:
            overrides[name] = value
    params = {p.name for p in func.params}
    unknown = sorted(set(overrides) - params)
    if unknown:
        raise UsageError(f"inputs for unknown parameter(s) {', '.join(unknown)}; parameters: "
                         f"{', '.join(sorted(params))}")
    return numsim.default_inputs(func, overrides, max_memory_mb=max_memory_mb)


def _format_array(a) -> str:
    import numpy as np
    with np.printoptions(threshold=64, edgeitems=8, linewidth=110):
        return np.array2string(a)


def _kernel_and_inputs(args):
    """The kernel with its --const overrides, and its inputs from --input/--inputs and the scalar --consts."""
    overrides, scalar_inputs = _split_consts(args.kernel, _consts(args.const))
    kernel = load(args.kernel, **overrides)
    return kernel, build_inputs(kernel.func, args.input, args.inputs, scalar_inputs,
                                max_memory_mb=_limits(args)["max_memory_mb"])


def _limits(args) -> dict:
    """The run budgets and target of --max-steps/--max-seconds/--max-memory/--target."""
    return {"max_steps": args.max_steps, "max_seconds": args.max_seconds, "max_memory_mb": args.max_memory,
            "target": args.target}


def _protected(args) -> list:
    """Files this run reads: an output may never overwrite one of them."""
    files = [args.kernel, getattr(args, "inputs", None)]
    for spec in getattr(args, "input", None) or ():
        value = spec.partition("=")[2]
        if value.endswith((".npy", ".npz")):
            files.append(value)
    return files


def _reports(which: str, func, inputs, limits: dict | None = None) -> list:
    """The checkers' reports in the order `modelcheck check` prints them: synccheck, then racecheck."""
    import modelcheck
    limits = limits or {}
    reports = []
    if which in ("check", "sync"):
        reports.append(modelcheck.synccheck(func, inputs, **limits))
    if which in ("check", "race"):
        reports.append(modelcheck.racecheck(func, inputs, **limits))
    return reports


def _run(args) -> int:
    if args.out:
        check_output(args.out, _protected(args))
    kernel, inputs = _kernel_and_inputs(args)
    missing = [p.name for p in kernel.func.params if p.name not in inputs]
    if missing:
        print(f"modelcheck run: no value for {', '.join(missing)}; give scalars with --const NAME=V and "
              f"buffers without static shapes with --input NAME=FILE.npy", file=sys.stderr)
        return EXIT_USAGE
    limits = _limits(args)
    if args.max_polls:
        limits["max_polls"] = args.max_polls
    if args.max_loop_iterations:
        limits["max_loop_iterations"] = args.max_loop_iterations
    try:
        res = numsim.run(kernel.func, inputs, **limits)
    except numsim.UnsupportedTIRxError as err:
        print(f"modelcheck run: incomplete: {err}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    print(f"numsim {res.verdict.upper()} - {kernel.name} ({res.termination})")
    if args.out:
        import numpy as np
        buf = io.BytesIO()
        np.savez(buf, **res.outputs)
        write_output(args.out, buf.getvalue(), _protected(args))
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


def _check(args) -> int:
    import json

    if args.sarif:
        check_output(args.sarif, _protected(args))
    kernel, inputs = _kernel_and_inputs(args)
    reports = _reports(args.command, kernel.func, inputs, _limits(args))
    if args.json:
        payload = [r.to_dict() for r in reports]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, sort_keys=True))
    else:
        for k, r in enumerate(reports):
            if k:
                print()
            r.print()
    if args.sarif:
        sarif = reports[0].to_sarif()
        for r in reports[1:]:
            sarif["runs"].extend(r.to_sarif()["runs"])
        write_output(args.sarif, json.dumps(sarif, indent=2), _protected(args))
    return Verdict.worst(r.verdict for r in reports).exit_code(args.strict)


def _states(args) -> int:
    """Phase A once, then the explorer under each reduction configuration (issue #7 item 4)."""
    import json

    from .explorer import reductions
    from .synccheck import phase_a, verdict_of
    kernel, inputs = _kernel_and_inputs(args)
    configs = "".join(dict.fromkeys(args.configs.replace(",", "")))
    unknown = sorted(set(configs) - set(reductions.CONFIGURATIONS))
    if unknown or not configs:
        raise UsageError(f"--configs {args.configs!r}: choose letters from "
                         f"{''.join(reductions.CONFIGURATIONS)}")
    a = phase_a(kernel.func, inputs, **{k: v for k, v in _limits(args).items() if k != "max_seconds"})
    if a.programs is None:
        verdict = verdict_of(a.findings)
        print(f"modelcheck states: phase A of {kernel.name} did not give sync programs to explore "
              f"({a.stats.get('termination', 'not run')}, verdict {verdict}):", file=sys.stderr)
        for f in a.findings:
            print(f"  {f.status} {f.kind}: {f.message}", file=sys.stderr)
        return (Verdict.ERROR if verdict is Verdict.CLEAN else verdict).exit_code()
    programs = a.programs
    rows = reductions.measure(programs, configs, max_states=args.max_states, max_seconds=args.max_seconds)
    if args.json:
        print(json.dumps({"kernel": kernel.name, "warps": len(programs.warps), "commands": programs.size(),
                          "projections": [programs.resource_names.get(r, str(r)) for r in programs.resources()],
                          "phase_a_findings": [f.kind for f in a.findings], "configurations": rows},
                         indent=2, sort_keys=True))
    else:
        _print_states(kernel.name, a, rows)
    first = rows[0]
    if first["status"] == "complete":
        return 0
    return EXIT_FOR_VERDICT["incomplete" if first["status"] == "limit" else "error"]


def _print_states(name: str, a, rows: list[dict]) -> None:
    from .explorer import reductions
    programs = a.programs
    resources = [programs.resource_names.get(r, str(r)) for r in programs.resources()]
    print(f"explorer states - {name}: {len(programs.warps)} warp(s), {programs.size()} sync command(s), "
          f"{len(resources)} projection(s); phase A {a.stats.get('phase_a_wall_time_s', 0.0):.3f} s")
    if a.findings:
        print(f"phase A findings: {', '.join(f'{f.status} {f.kind}' for f in a.findings)}")
    print()
    print(f"{'configuration':<58} {'states':>10} {'transitions':>12} {'wall (s)':>9}  result")
    for row in rows:
        label = f"({row['config']}) {row['label']}"
        print(f"{label:<58} {row['states']:>10,} {row['transitions']:>12,} {row['wall_time_s']:>9.3f}  "
              f"{reductions.describe(row)}")
    projected = [row for row in rows if row["config"] != "d"]
    if not projected:
        return
    print()
    width = max([len("projection"), *(len(p["resource"]) for row in projected for p in row["per_projection"]),
                 *(len(r) for r in resources)])
    head = f"{'projection':<{width}}"
    for row in projected:
        head += f" | ({row['config']}) {'method':<11} {'states':>8} {'transitions':>11}"
    print(head)
    # a projected configuration may end in a whole-program search (when a schedule leaves the run's
    # generation assignment); show such extra entries after the projections
    extra = [p["resource"] for row in projected for p in row["per_projection"] if p["resource"] not in resources]
    for resource in resources + list(dict.fromkeys(extra)):
        line = f"{resource:<{width}}"
        for row in projected:
            p = next((p for p in row["per_projection"] if p["resource"] == resource), None)
            if p is None:
                line += f" | {'    not explored':<16} {'-':>8} {'-':>11}"
                continue
            method = p["method"] if p.get("status", "complete") == "complete" else f"{p['method']}!"
            line += f" | {'':4}{method:<11} {p['states']:>8,} {p['transitions']:>11,}"
        print(line)
    if any(p.get("status", "complete") != "complete" for row in projected for p in row["per_projection"]):
        print("(search! = the search of that projection stopped: at a limit, or on a finding)")


def _symbolic(specs: list[str]) -> dict:
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


def _prove(args) -> int:
    import json

    from .prover import prove
    from .report.proof import ProofReport
    ranges = _symbolic(args.symbolic)
    kernel = load(args.kernel, **_consts(args.const))
    names = {c.name for c in kernel.func.constants}
    unknown = sorted(set(ranges) - names)
    if unknown:
        raise UsageError(f"--symbolic {', '.join(unknown)}: not a module constant of {kernel.name} "
                         f"(constants: {', '.join(sorted(names)) or 'none'})")
    report = ProofReport(prove(kernel.func, symbolic=list(ranges), ranges=ranges, max_seconds=args.max_seconds))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        report.print()
    return report.verdict.verdict.exit_code()


def _graph(args) -> int:
    """The happens-before graph of one run, exported by extension; --finding explains one finding."""
    import json

    from . import hb
    out = Path(args.out)
    if out.suffix.lower() not in hb.FORMATS:
        raise UsageError(f"--out {args.out}: the extension chooses the format; use one of "
                         f"{', '.join(hb.FORMATS)}")
    check_output(out, _protected(args))
    kernel, inputs = _kernel_and_inputs(args)
    missing = [p.name for p in kernel.func.params if p.name not in inputs]
    if missing:
        print(f"modelcheck graph: no value for {', '.join(missing)}; give scalars with --const NAME=V and buffers "
              f"without static shapes or tensor maps with --input NAME=FILE.npy or --inputs FILE.npz",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        graph = hb.build(kernel.func, inputs, **_limits(args))
    except hb.RunNotStarted as err:
        print(f"modelcheck graph: {kernel.name} never started, so it has no graph:", file=sys.stderr)
        for d in err.result.diagnostics:
            print(f"  {d}", file=sys.stderr)
        return EXIT_FOR_VERDICT[err.result.verdict]
    explanation = None
    if args.finding is not None:
        report = _Combined(_reports(args.checker, kernel.func, inputs, _limits(args)))
        explanation = hb.explain(report, args.finding, hb=graph)
    witness = explanation.data.get("witness_nodes") if explanation is not None else None
    partial = graph.result.termination == "incomplete"
    fmt = hb.write(graph, out, highlight=explanation.path if explanation else (), order=witness,
                   protect=_protected(args))
    g = graph.graph
    print(f"happens-before graph of {kernel.name}: {g.number_of_nodes()} nodes, {g.number_of_edges()} edges "
          f"(run: {graph.result.termination}); wrote {fmt.upper()} to {out}")
    if witness and fmt == "svg":
        print(f"the timeline shows the finding's witness schedule ({len(witness)} operations of the run)")
    if explanation is not None:
        print(json.dumps(explanation.to_dict(), indent=2) if args.json else explanation.format(), end="")
    if partial:     # the run stopped early (a budget, an unsupported operation): the graph is partial
        print("modelcheck graph: the run was incomplete, so the graph covers only what ran:", file=sys.stderr)
        for d in graph.result.diagnostics:
            if d.status == Verdict.INCOMPLETE:
                print(f"  {d}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    return 0


class _Combined:
    """Several reports' findings numbered in the order `modelcheck check` prints them (sync, then race)."""

    def __init__(self, reports):
        self.reports = reports
        self.findings = [f for r in reports for f in r.findings]
        self.result = reports[0].result


def _replay(args) -> int:
    """Synccheck then Racecheck, pick finding N (1-based, in that combined order) or by id, replay it."""
    from .replay import PlanError, replay
    from .report.replay import ReplayReport
    kernel, inputs = _kernel_and_inputs(args)
    limits = _limits(args)
    finding = _pick(_Combined(_reports("check", kernel.func, inputs, limits)).findings, args.finding, kernel.name)
    if finding is None:
        return EXIT_USAGE
    if finding.status is Verdict.INCOMPLETE or finding.kind == "unsupported_operation_not_reached":
        print(f"modelcheck replay: finding {args.finding} ({finding.kind}) says what the analysis did not cover, "
              f"not what went wrong; there is no schedule to replay:\n  {finding.message}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    try:
        report = ReplayReport(replay(kernel.func, inputs, finding, **limits))
    except PlanError as err:
        print(f"modelcheck replay: {err}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    if args.json:
        print(report.to_json())
    else:
        report.print()
    return _REPLAY_EXIT[report.outcome] if report.outcome != "default_schedule" else \
        EXIT_FOR_VERDICT["error" if report.effects else "clean"]


# reproduced: the forced schedule shows the error; not followed: the replay could not decide (incomplete)
_REPLAY_EXIT = {"reproduced": 1, "no_difference": 0, "schedule_not_followed": 2}


def _pick(findings: list, which: str, name: str):
    if not findings:
        print(f"modelcheck replay: {name} has no findings (synccheck and racecheck are clean): nothing to replay",
              file=sys.stderr)
        return None
    try:
        return F.select(findings, which)
    except F.NoSuchFinding as err:
        listing = "\n".join(f"  {k}. [{f.status}] {f.kind} {f.id}" for k, f in enumerate(findings, 1))
        if err.reason == "range":
            print(f"modelcheck replay: --finding {err.which} is not between 1 and {err.count}; the findings of "
                  f"{name} (synccheck, then racecheck):\n{listing}", file=sys.stderr)
        else:
            what = "matches several findings" if err.reason == "several" else "matches no finding"
            print(f"modelcheck replay: --finding {which!r} {what}; give a number or a full id:\n{listing}",
                  file=sys.stderr)
        return None


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 64 (EX_USAGE), as documented, not argparse's 2 (which means incomplete here)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _limit_options(p) -> None:
    p.add_argument("--max-steps", type=int, default=numsim.budget.DEFAULT_MAX_STEPS, metavar="N",
                   help="budget of warp-instructions simulated (default %(default)s); past it: incomplete")
    p.add_argument("--max-seconds", type=float, default=numsim.budget.DEFAULT_MAX_SECONDS, metavar="S",
                   help="wall-clock budget in seconds (default %(default)s); past it: incomplete")
    p.add_argument("--max-memory", type=float, default=numsim.budget.DEFAULT_MAX_MEMORY_MB, metavar="MB",
                   help="memory the run may add, in MB (default %(default)s); past it: incomplete")
    p.add_argument("--target", default=numsim.targets.DEFAULT_TARGET, choices=sorted(numsim.targets.TARGETS),
                   help="hardware whose launch limits apply (default %(default)s)")


def _input_options(p) -> None:
    p.add_argument("--const", action="append", default=[], metavar="N=V",
                   help="module constant or scalar parameter value")
    p.add_argument("--input", action="append", default=[], metavar="NAME=SPEC",
                   help="zeros | ones | random[:seed] | FILE.npy (default: zeros)")
    p.add_argument("--inputs", metavar="FILE.npz", help="arrays by parameter name")


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    p = _Parser(prog="modelcheck", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"modelcheck {__version__}")
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parse = sub.add_parser("parse", help="print the canonical text and an IR summary")
    parse.add_argument("kernel")
    parse.add_argument("--const", action="append", default=[], metavar="N=V", help="override a module constant")
    parse.add_argument("--summary-only", action="store_true", help="print only the summary")
    run = sub.add_parser("run", help="simulate the kernel on concrete inputs (NumSim)")
    run.add_argument("kernel")
    _input_options(run)
    run.add_argument("--out", metavar="OUT.npz", help="save outputs (an .npz archive at exactly this path) "
                                                      "instead of printing them")
    run.add_argument("--max-polls", type=int, default=0)
    run.add_argument("--max-loop-iterations", type=int, default=0)
    _limit_options(run)
    for name, text in (("check", "run Synccheck and Racecheck"),
                       ("sync", "Synccheck: hangs and barrier misuse in any schedule"),
                       ("race", "Racecheck: unordered conflicting memory accesses")):
        cp = sub.add_parser(name, help=text)
        cp.add_argument("kernel")
        _input_options(cp)
        cp.add_argument("--json", action="store_true", help="print the report as JSON")
        cp.add_argument("--sarif", metavar="OUT.sarif", help="also write SARIF 2.1.0")
        cp.add_argument("--strict", action="store_true", help="exit 3 on review")
        _limit_options(cp)
    st = sub.add_parser("states", help="the explorer's states/transitions with and without each reduction")
    st.add_argument("kernel")
    _input_options(st)
    st.add_argument("--configs", default="abcd", metavar="LETTERS",
                    help="which configurations: a = projections + certificates + sleep sets (synccheck), "
                         "b = projections + sleep sets, c = projections only, d = whole program unreduced "
                         "(default abcd)")
    st.add_argument("--max-states", type=int, default=200_000, help="state limit per configuration")
    st.add_argument("--json", action="store_true", help="print the figures as JSON")
    _limit_options(st)
    st.set_defaults(max_seconds=60.0)
    pv = sub.add_parser("prove", help="prove the mbarrier ring protocols for all values of symbolic sizes (z3)")
    pv.add_argument("kernel")
    pv.add_argument("--symbolic", action="append", default=[], metavar="NAME[=LO..HI]", required=True,
                    help="a module constant to leave symbolic, with its range (default 1..)")
    pv.add_argument("--const", action="append", default=[], metavar="N=V", help="fix another module constant")
    pv.add_argument("--max-seconds", type=float, default=60.0,
                    help="wall-clock safety net for the whole proof (the solver's budgets are resource counts, so "
                         "a verdict does not depend on the machine's load); past it: incomplete")
    pv.add_argument("--json", action="store_true", help="print the report as JSON")
    gp = sub.add_parser("graph", help="export the happens-before graph of one run (DOT, GraphML, JSON, SVG timeline)")
    gp.add_argument("kernel")
    gp.add_argument("--out", required=True, metavar="FILE",
                    help="hb.dot | hb.graphml | hb.json | hb.svg (a timeline: warps as lanes, generations as columns)")
    _input_options(gp)
    gp.add_argument("--finding", metavar="N|ID",
                    help="explain finding N (numbered from 1 in the order `modelcheck check` prints them) or the "
                         "finding with this id (prefix); its path is highlighted in the export")
    gp.add_argument("--checker", choices=("check", "sync", "race"), default="check",
                    help="which checkers' findings --finding counts (default: both, as `modelcheck check`)")
    gp.add_argument("--json", action="store_true", help="print the explanation as JSON")
    _limit_options(gp)
    rp = sub.add_parser("replay", help="replay a finding's schedule on NumSim and show what goes wrong",
                        description="Runs Synccheck then Racecheck, picks finding N (1-based, in that combined "
                                    "order) or the one with that id, and runs the kernel under the schedule the "
                                    "finding implies next to the default schedule. Exit 1 when the forced "
                                    "schedule shows the error, 0 when it changes nothing, 2 when it cannot be "
                                    "followed.")
    rp.add_argument("kernel")
    rp.add_argument("--finding", required=True, metavar="N|ID", help="finding number (1-based) or id")
    _input_options(rp)
    rp.add_argument("--json", action="store_true", help="print the replay report as JSON")
    _limit_options(rp)
    _batch_cli.add_parser(sub)
    for name, what in _PENDING.items():
        sp = sub.add_parser(name, help=f"(arrives with {what})")
        sp.add_argument("args", nargs=argparse.REMAINDER)
    return p


_COMMANDS = {"run": "_run", "check": "_check", "sync": "_check", "race": "_check", "states": "_states",
             "prove": "_prove", "replay": "_replay", "graph": "_graph", "parse": "_parse"}


def _parse(args) -> int:
    kernel = load(args.kernel, **_consts(args.const))
    if not args.summary_only:
        print(kernel.script())
    print(format_summary(summarize(kernel.func)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:      # --help, --version (0) and usage errors (64)
        return int(stop.code or 0)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command in _PENDING:
        print(f"modelcheck {args.command}: not available yet; it arrives with {_PENDING[args.command]}.\n"
              f"Available now: modelcheck parse KERNEL.py [--const N=V]", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "batch":
        return _batch_cli.run(args)
    try:
        return globals()[_COMMANDS[args.command]](args)
    except BrokenPipeError:
        _silence_stdout()     # the reader went away (`| head`): stop quietly, without Python's exit-time complaint
        return EXIT_BROKEN_PIPE
    except ir.ParseError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, numsim.InputError, numsim.TensorMapError, OSError) as err:
        print(f"modelcheck: {shorten(str(err), 400)}", file=sys.stderr)
        return EXIT_USAGE
    except numsim.UnsupportedTIRxError as err:
        print(f"modelcheck: incomplete: {shorten(str(err), 400)}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    except numsim.ResourceLimit as err:
        print(f"modelcheck: incomplete: {err.message}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    except KeyboardInterrupt:
        print("modelcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:   # noqa: BLE001 - anything else is a bug in modelcheck: say so in one line
        if args.debug:
            traceback.print_exc()
        where = "" if args.debug else " (rerun with --debug for the traceback)"
        print(f"modelcheck: internal error in `{args.command}`: {type(err).__name__}: {shorten(str(err), 300)}\n"
              f"  this is a bug in modelcheck, not in your kernel; please report it with the kernel and the "
              f"command{where}", file=sys.stderr)
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
