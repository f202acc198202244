"""`modelcheck batch PLAN`: the command's arguments and handler (hooked into modelcheck/cli.py).

Exit code: the worst verdict over every task of the plan, with the mapping of the other
commands (0 clean or review, 1 error, 2 incomplete); 64 for a plan or usage error; 70 for an
internal error; 130 when interrupted (what was recorded stays recorded; a rerun resumes).
"""
from __future__ import annotations

import argparse
import os
import sys

EXIT_USAGE = 64
EXIT_INTERNAL = 70


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "batch", help="check a portfolio of kernels x constants x inputs from a plan file, locally or on Dask",
        description="Expands PLAN (TOML, or YAML with PyYAML; see docs/batch.md) into tasks, runs those not yet in "
                    "the results file, appends each result as it completes, and writes a summary, one SARIF log "
                    "and an HTML index. Exit code: the worst verdict over the plan's tasks (0 clean/review, "
                    "1 error, 2 incomplete), 64 for a plan error.")
    p.add_argument("plan", metavar="PLAN", help="the plan file (.toml, .yaml, .yml)")
    p.add_argument("--results", metavar="FILE.jsonl",
                   help="results file (default: the plan's `results`, else PLAN's name + .results.jsonl)")
    p.add_argument("--out", metavar="DIR",
                   help="folder for summary.txt, findings.sarif, index.html (default: the plan's `output`, else "
                        "PLAN's name + .batch)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobs", "-j", type=int, metavar="N",
                       help=f"local worker processes (default: the CPU count, {os.cpu_count()})")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler")
    where.add_argument("--dask-local", type=int, metavar="N", help="start a Dask LocalCluster of N workers")
    p.add_argument("--rerun-incomplete", action="store_true",
                   help="run again the tasks recorded incomplete (a larger budget, a fixed builder)")
    p.add_argument("--list", action="store_true",
                   help="list the plan's tasks and whether each is recorded; run nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no notes on stderr")
    return p


def run(args) -> int:
    from pathlib import Path

    from .executors import DaskExecutor, ExecutorError, LocalExecutor
    from .journal import JournalError
    from .plan import PlanError
    from .sandbox import WorkerStartError
    try:
        from .driver import default_results, resolve_plan, run_batch
        plan = resolve_plan(args.plan)
        if args.list:
            return _list(plan, Path(args.results) if args.results else default_results(plan))
        executor: LocalExecutor | DaskExecutor
        if args.scheduler:
            executor = DaskExecutor(scheduler=args.scheduler)
        elif args.dask_local is not None:
            executor = DaskExecutor(local_workers=args.dask_local)
        else:
            executor = LocalExecutor(args.jobs)
        out = args.out or plan.output or Path(plan.path).with_name(Path(plan.path).stem + ".batch")
        results = run_batch(plan, executor, results=args.results, output=out,
                            progress=not args.quiet and sys.stderr.isatty(), rerun_incomplete=args.rerun_incomplete,
                            log=None if args.quiet else sys.stderr)
    except PlanError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    except (JournalError, ExecutorError, ValueError) as err:
        print(f"modelcheck batch: {err}", file=sys.stderr)
        return EXIT_USAGE
    except WorkerStartError as err:
        print(f"modelcheck batch: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nmodelcheck batch: interrupted; the tasks recorded so far stay recorded, rerun to resume",
              file=sys.stderr)
        return 130
    except Exception as err:     # noqa: BLE001 -- a bug in modelcheck: one line, the traceback with --debug
        if getattr(args, "debug", False):
            import traceback
            traceback.print_exc()
        print(f"modelcheck batch: internal error: {type(err).__name__}: {err}"
              f"{'' if getattr(args, 'debug', False) else ' (rerun with --debug for the traceback)'}; the tasks "
              f"recorded so far stay recorded", file=sys.stderr)
        return EXIT_INTERNAL
    print(results.summary(), end="")
    print(f"\n{results.ran} task(s) run, {results.skipped} already recorded; results: {results.results_path}")
    if results.outputs:
        print(f"reports: {results.outputs['summary']}, {results.outputs['sarif']}, {results.outputs['html']}")
    return results.exit_code


def _list(plan, results_path) -> int:
    from .journal import read_records
    from .outputs import point_label
    from .tasks import expand
    tasks = expand(plan)
    recorded = read_records(results_path) if results_path is not None else {}
    for t in tasks:
        rec = recorded.get(t.key)
        print(f"{t.index + 1:>5}  {rec['verdict'] if rec else '-':<10}  {t.kernel}  {point_label(t.point())}  "
              f"{t.key[:12]}")
    print(f"{len(tasks)} task(s), {sum(t.key in recorded for t in tasks)} recorded")
    return 0
