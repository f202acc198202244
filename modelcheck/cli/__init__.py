"""The `modelcheck` command line (docs/architecture.md#verdicts-and-exit-codes).

Exit codes: 0 clean (and review unless --strict), 1 error, 2 incomplete, 3 review under
--strict, 64 usage or parse error, 70 internal error (a bug in modelcheck: a one-line
message; the traceback with --debug), 130 interrupted (Ctrl-C), 141 the output was closed
early (a broken pipe, e.g. `| head`).  With several kernel files the exit code is the worst
of theirs (error over incomplete over review over clean; a usage error over all of them).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import traceback

import ir
from ir.errors import UsageError, shorten

from .. import numsim
from ..common.files import check_output, write_output
from ..portfolio import cli as _batch_cli
from . import commands, supervise
from .commands import EXIT_FOR_VERDICT, EXIT_USAGE, Job
from .progress import Progress

EXIT_INTERNAL = 70
EXIT_INTERRUPTED = supervise.EXIT_INTERRUPTED
EXIT_BROKEN_PIPE = 141
# how bad an exit code is, for several kernels: the worst wins
_SEVERITY = [0, 3, 2, 1, EXIT_USAGE, EXIT_INTERNAL]

# Subcommands whose machinery lands with later issues; each says which.
_PENDING: dict[str, str] = {
}

_COMMANDS = {"run": "run", "check": "check", "sync": "check", "race": "check", "states": "states",
             "prove": "prove", "replay": "replay", "graph": "graph", "parse": "parse"}
_SINGLE = ("graph", "replay")        # one kernel per call (their outputs are one file / one finding)


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 64 (EX_USAGE), as documented, not argparse's 2 (which means incomplete here)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _limit_options(p, seconds: float = numsim.budget.DEFAULT_MAX_SECONDS) -> None:
    p.add_argument("--max-steps", type=int, default=numsim.budget.DEFAULT_MAX_STEPS, metavar="N",
                   help="budget of warp-instructions simulated (default %(default)s); past it: incomplete")
    p.add_argument("--max-seconds", type=float, default=seconds, metavar="S",
                   help="wall-clock budget in seconds for each kernel's whole command (default %(default)s); "
                        "past it: incomplete")
    p.add_argument("--max-memory", type=float, default=numsim.budget.DEFAULT_MAX_MEMORY_MB, metavar="MB",
                   help="memory the run may add, in MB (default %(default)s); past it: incomplete")
    p.add_argument("--target", default=numsim.targets.DEFAULT_TARGET, choices=sorted(numsim.targets.TARGETS),
                   help="hardware whose launch limits apply (default %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")


def _kernel_option(p) -> None:
    p.add_argument("--kernel", dest="kernel_name", metavar="NAME",
                   help="the kernel function to check when a file defines several")


def _config_option(p) -> None:
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="for a `package.module:NAME` target: a build parameter passed to the module's kernel "
                        "factory (a Python literal); importing the module runs its Python")


def _input_options(p) -> None:
    _kernel_option(p)
    _config_option(p)
    p.add_argument("--const", action="append", default=[], metavar="N=V",
                   help="module constant, scalar parameter or symbolic dimension value")
    p.add_argument("--dim", action="append", default=[], metavar="N=V",
                   help="value of a symbolic buffer dimension (a TypeVar or T.int64() extent)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=SPEC",
                   help="zeros | ones | random[:seed] | FILE.npy | FILE.npz[:KEY] (default: zeros); a tensor map "
                        "loaded from a file binds to the buffer whose data it holds, or to BUFFER with "
                        "FILE.npy@BUFFER")
    p.add_argument("--inputs", action="append", default=[], metavar="FILE.npz|BUILDER.py:FUNCTION",
                   help="arrays by parameter name, or a function of the kernel's constants returning a dict of "
                        "inputs (arrays, TensorMaps, scalars), e.g. kernels/inputs/kda.py:kda_fwd")


def _kernels(p, help_text: str = "kernel file(s), or `package.module:NAME` (a kernel built by the real compiler "
                                  "from an importable module; --config configures it)") -> None:
    p.add_argument("kernels", nargs="+", metavar="KERNEL.py", help=help_text)


class _Version(argparse.Action):
    """`--version`: the version is looked up only when asked for (importlib.metadata costs every other run)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__
        print(f"modelcheck {__version__}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="modelcheck", description=__doc__.splitlines()[0])
    p.add_argument("--version", action=_Version)
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parse = sub.add_parser("parse", help="print the canonical text and an IR summary")
    _kernels(parse)
    parse.add_argument("--const", action="append", default=[], metavar="N=V", help="override a module constant")
    parse.add_argument("--summary-only", action="store_true", help="print only the summary")
    _kernel_option(parse)
    _config_option(parse)
    run = sub.add_parser("run", help="simulate the kernel on concrete inputs (NumSim)")
    _kernels(run)
    _input_options(run)
    run.add_argument("--out", metavar="OUT.npz", help="save outputs (an .npz archive at exactly this path) "
                                                      "instead of printing them (one kernel)")
    run.add_argument("--max-polls", type=int, default=0)
    run.add_argument("--max-loop-iterations", type=int, default=0)
    _limit_options(run)
    for name, text in (("check", "run Synccheck and Racecheck (one list of findings)"),
                       ("sync", "Synccheck: hangs and barrier misuse in any schedule"),
                       ("race", "Racecheck: unordered conflicting memory accesses")):
        cp = sub.add_parser(name, help=text)
        _kernels(cp)
        _input_options(cp)
        cp.add_argument("--json", action="store_true", help="print the report as JSON")
        cp.add_argument("--sarif", metavar="OUT.sarif", help="also write SARIF 2.1.0 (one run, every kernel)")
        cp.add_argument("--html", metavar="OUT.html", help="also write an HTML report")
        cp.add_argument("--strict", action="store_true", help="exit 3 on review")
        _limit_options(cp)
    st = sub.add_parser("states", help="the explorer's states/transitions with and without each reduction")
    _kernels(st)
    _input_options(st)
    st.add_argument("--configs", default="abcd", metavar="LETTERS",
                    help="which configurations: a = projections + certificates + sleep sets (synccheck), "
                         "b = projections + sleep sets, c = projections only, d = whole program unreduced "
                         "(default abcd)")
    st.add_argument("--max-states", type=int, default=200_000, help="state limit per configuration")
    st.add_argument("--json", action="store_true", help="print the figures as JSON")
    _limit_options(st)
    pv = sub.add_parser("prove", help="prove the mbarrier ring protocols for all values of symbolic sizes (z3)")
    _kernels(pv)
    pv.add_argument("--symbolic", action="append", default=[], metavar="NAME[=LO..HI]", required=True,
                    help="a module constant to leave symbolic, with its range (default 1..)")
    _input_options(pv)
    pv.add_argument("--json", action="store_true", help="print the report as JSON")
    pv.add_argument("--html", metavar="OUT.html", help="also write an HTML report (the proof summary)")
    pv.add_argument("-v", "--verbose", action="store_true", help="every property of every family, with timings")
    _limit_options(pv)
    gp = sub.add_parser("graph", help="export the happens-before graph of one run (DOT, GraphML, JSON, SVG timeline)")
    _kernels(gp, "the kernel file")
    gp.add_argument("--out", required=True, metavar="FILE",
                    help="hb.dot | hb.graphml | hb.json | hb.svg (a timeline: warps as lanes, generations as columns)")
    _input_options(gp)
    gp.add_argument("--finding", metavar="N|ID",
                    help="explain finding N (numbered from 1 as `modelcheck check` lists them) or the finding with "
                         "this id (prefix); its path is highlighted in the export")
    gp.add_argument("--checker", choices=("check", "sync", "race"), default="check",
                    help="which checkers' findings --finding counts (default: both, as `modelcheck check`)")
    gp.add_argument("--json", action="store_true", help="print the explanation as JSON")
    _limit_options(gp)
    rp = sub.add_parser("replay", help="replay a finding's schedule on NumSim and show what goes wrong",
                        description="Runs Synccheck then Racecheck, picks finding N (1-based, as `modelcheck check` "
                                    "lists them) or the one with that id, and runs the kernel under the schedule the "
                                    "finding implies next to the default schedule. Exit 1 when the forced "
                                    "schedule shows the error, 0 when it changes nothing, 2 when it cannot be "
                                    "followed.")
    _kernels(rp, "the kernel file")
    rp.add_argument("--finding", required=True, metavar="N|ID", help="finding number (1-based) or id")
    _input_options(rp)
    rp.add_argument("--json", action="store_true", help="print the replay report as JSON")
    _limit_options(rp)
    ex = sub.add_parser("explain", help="what a finding kind means, an example, and how to fix it")
    ex.add_argument("kind", help="a finding kind, e.g. data_race")
    _batch_cli.add_parser(sub)
    for name, what in _PENDING.items():
        sp = sub.add_parser(name, help=f"(arrives with {what})")
        sp.add_argument("args", nargs=argparse.REMAINDER)
    return p


def _explain(kind: str) -> int:
    from ..report import kinds
    text = kinds.page(kind)
    if text is None:
        names = kinds.page_names()
        where = "" if names else " (no kind pages were found: reinstall modelcheck)"
        print(f"modelcheck explain: unknown finding kind {kind!r}{where}; the kinds with pages are:\n  "
              + "\n  ".join(names), file=sys.stderr)
        return EXIT_USAGE
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _started() -> float:
    """time.monotonic() when this process started (Linux /proc), else now: --max-seconds counts start-up too."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.monotonic() - max(uptime - ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return time.monotonic()


class _Watchdog:
    """--max-seconds for a whole kernel's command, start-up included: the checkers get a deadline a little before
    it (so they stop themselves and report incomplete).  Run as the `modelcheck` program, at the budget the main
    thread is also interrupted (work that does not look at the clock) and the command ends incomplete, naming
    the budget; the supervising parent (`supervise`) ends a command still running at the budget plus 4 %."""

    SOFT, INTERRUPT = 0.90, 0.98

    def __init__(self, hard_exit: bool = False):
        self.fired: str | None = None
        self.timers: list = []
        self.hard_exit = hard_exit

    def arm(self, start: float, seconds: float | None, what: str) -> float:
        self.disarm()
        if seconds is None:
            return start + 1e9
        if not self.hard_exit:      # called inside another program (main([...])): deadlines only, no interrupts
            return start + seconds * self.SOFT
        message = f"{what}: --max-seconds {seconds:g} ran out"
        supervise.started(what, seconds)
        now = time.monotonic()
        self.timers = [threading.Timer(max(start + seconds * self.INTERRUPT - now, 0.0), self._fire, (message,))]
        for t in self.timers:
            t.daemon = True
            t.start()
        return start + seconds * self.SOFT

    def _fire(self, message: str) -> None:
        import _thread
        self.fired = message
        _thread.interrupt_main()

    def disarm(self) -> None:
        for t in self.timers:
            t.cancel()
        self.timers = []


_HARD_EXIT = False      # console_main: the program may end itself at the budget (never inside a caller's process)


_PROCESS_START = 0.0


def console_main() -> None:
    """The `modelcheck` program (console script and `python -m modelcheck`): `main` in a supervised child, so
    that --max-seconds holds whatever the work is doing (`supervise`)."""
    global _HARD_EXIT, _PROCESS_START
    _HARD_EXIT = True
    _PROCESS_START = _started()
    budgeted = any(a.startswith("--max-seconds") for a in sys.argv[1:]) or \
        (len(sys.argv) > 1 and sys.argv[1] in _COMMANDS)
    raise SystemExit(supervise.run(main, _PROCESS_START) if budgeted else main())


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
    if args.command == "explain":
        return _explain(args.kind)
    previous = None
    try:    # Ctrl-C is a KeyboardInterrupt wherever it lands (z3 and worker pools install handlers of their own)
        previous = signal.signal(signal.SIGINT, _interrupt)
    except ValueError:      # not the main thread
        pass
    progress = Progress.for_terminal(getattr(args, "quiet", True)).start()
    watchdog = _Watchdog(_HARD_EXIT)
    try:
        return _guarded(args, progress, watchdog)
    finally:
        watchdog.disarm()
        progress.stop()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _guarded(args, progress, watchdog) -> int:
    try:
        return _run_all(args, progress, watchdog)
    except BrokenPipeError:
        _silence_stdout()     # the reader went away (`| head`): stop quietly, without Python's exit-time complaint
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        progress.stop()
        if watchdog.fired:
            print(f"modelcheck: incomplete: {watchdog.fired} (the command was stopped; raise the budget to finish)",
                  file=sys.stderr)
            return EXIT_FOR_VERDICT["incomplete"]
        print("modelcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:   # noqa: BLE001 - anything else is a bug in modelcheck: say so in one line
        if _was_interrupted(err):
            progress.stop()
            print("modelcheck: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if args.debug:
            traceback.print_exc()
        where = "" if args.debug else " (rerun with --debug for the traceback)"
        print(f"modelcheck: internal error in `{args.command}`: {type(err).__name__}: {shorten(str(err), 300)}\n"
              f"  this is a bug in modelcheck, not in your kernel; please report it with the kernel and the "
              f"command{where}", file=sys.stderr)
        return EXIT_INTERNAL


def _was_interrupted(err: BaseException) -> bool:
    """z3 turns a Ctrl-C during a query into Z3Exception('canceled')."""
    return type(err).__name__ == "Z3Exception" and "cancel" in str(err).lower()


def _outputs(args) -> list[str]:
    return [o for o in (getattr(args, "sarif", None), getattr(args, "html", None), getattr(args, "out", None)) if o]


def _run_all(args, progress, watchdog) -> int:
    kernels = args.kernels
    if args.command in _SINGLE and len(kernels) > 1:
        raise_usage = f"modelcheck {args.command}: one kernel file per call (got {len(kernels)})"
        print(raise_usage, file=sys.stderr)
        return EXIT_USAGE
    if args.command == "run" and args.out and len(kernels) > 1:
        print("modelcheck run: --out saves one kernel's outputs; give one kernel file", file=sys.stderr)
        return EXIT_USAGE
    for out in _outputs(args):
        try:
            check_output(out, kernels)
        except (UsageError, OSError) as err:
            print(f"modelcheck: {err}", file=sys.stderr)
            return EXIT_USAGE
    name = _COMMANDS[args.command]
    handler = globals()[name] if name.startswith("_") else getattr(commands, name)
    codes, jobs = [], []
    seconds = getattr(args, "max_seconds", None)
    start = _PROCESS_START if _HARD_EXIT else time.monotonic()     # the program counts its start-up too
    for k, path in enumerate(kernels):
        if len(kernels) > 1 and not getattr(args, "json", False):
            if k:
                print()
            print(f"== {path}")
        job = Job(path, args, progress, deadline=watchdog.arm(start, seconds, path))
        progress.phase(path)
        code = _one(handler, args, job)
        watchdog.disarm()
        start = time.monotonic()
        progress.phase("")
        codes.append(code)
        jobs.append(job)
        sys.stdout.flush()
    reports = [r for j in jobs for r in j.reports]
    protected = list(kernels) + [f for j in jobs if j.plan for f in j.plan.files()]
    if getattr(args, "sarif", None) and reports:
        import json

        from ..report.sarif import to_sarif_log
        write_output(args.sarif, json.dumps(to_sarif_log(reports, args.command), indent=2), protected)
    if getattr(args, "html", None) and reports:
        from ..report.html import write_html
        progress.phase("HTML report")
        write_html(args.html, reports, command=args.command, protect=protected)
        progress.phase("")
        print(f"HTML report written to {args.html}", file=sys.stderr)
    return max(codes, key=lambda c: _SEVERITY.index(c) if c in _SEVERITY else len(_SEVERITY))


def _one(handler, args, job) -> int:
    """One kernel's command; its usage and parse errors are reported and give 64, the other kernels still run."""
    try:
        return handler(args, job)
    except ir.ParseError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, numsim.InputError, numsim.TensorMapError, OSError) as err:
        if isinstance(err, BrokenPipeError):
            raise
        print(f"modelcheck: {shorten(str(err), 2000)}", file=sys.stderr)
        return EXIT_USAGE
    except numsim.UnsupportedTIRxError as err:
        print(f"modelcheck: incomplete: {shorten(str(err), 400)}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]
    except numsim.ResourceLimit as err:
        print(f"modelcheck: incomplete: {err.message}", file=sys.stderr)
        return EXIT_FOR_VERDICT["incomplete"]


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# the input helpers the batch command and tests use
from .inputs import InputPlan, parse_consts, split_consts  # noqa: E402,F401
